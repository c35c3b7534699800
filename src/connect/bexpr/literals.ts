/**
 * Literal handling with Go's rules, since go-bexpr leans on strconv: string literals are unquoted like
 * strconv.Unquote, and values are coerced to a field's type like strconv.ParseInt(s, 0, 64),
 * strconv.ParseFloat(s, 64) and strconv.ParseBool (go-bexpr coerce.go).
 */

/** Why a string literal's body is malformed, with the offset of the bad escape inside the body. */
export class LiteralError extends Error {
  constructor(message: string, readonly at: number) {
    super(message);
  }
}

const SIMPLE_ESCAPES: Readonly<Record<string, number>> = { a: 7, b: 8, f: 12, n: 10, r: 13, t: 9, v: 11, "\\": 92, '"': 34 };

/**
 * The value of a double-quoted literal's body (between the quotes), like Go's strconv.Unquote: escapes
 * \a \b \f \n \r \t \v \\ \" \ooo \xhh \uhhhh \Uhhhhhhhh; a raw newline is not allowed. Octal and \x escapes
 * are bytes, so "\xc3\xa9" is "é"; byte sequences that are not UTF-8 decode to U+FFFD.
 */
export function unquoteDouble(body: string): string {
  if (!body.includes("\\")) {
    const nl = body.indexOf("\n");
    if (nl >= 0) throw new LiteralError("newline in string literal (use \\n or a `raw string`)", nl);
    return body;
  }
  const bytes: number[] = [];
  for (let i = 0; i < body.length; ) {
    const cp = body.codePointAt(i)!;
    if (cp === 10) throw new LiteralError("newline in string literal (use \\n or a `raw string`)", i);
    if (cp !== 92) {
      pushUtf8(bytes, cp);
      i += cp > 0xffff ? 2 : 1;
      continue;
    }
    const start = i;
    const c = body[i + 1];
    if (c === undefined) throw new LiteralError("invalid escape sequence at end of string literal", start);
    const simple = SIMPLE_ESCAPES[c];
    if (simple !== undefined) {
      bytes.push(simple);
      i += 2;
    } else if (c >= "0" && c <= "7") {
      const digits = body.slice(i + 1, i + 4);
      if (!/^[0-7]{3}$/.test(digits) || parseInt(digits, 8) > 255) throw badEscape(body, start, 4);
      bytes.push(parseInt(digits, 8));
      i += 4;
    } else if (c === "x" || c === "u" || c === "U") {
      const n = c === "x" ? 2 : c === "u" ? 4 : 8;
      const hex = body.slice(i + 2, i + 2 + n);
      if (!new RegExp(`^[0-9A-Fa-f]{${n}}$`).test(hex)) throw badEscape(body, start, 2 + n);
      const v = parseInt(hex, 16);
      if (c === "x") bytes.push(v);
      else if (v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff)) throw badEscape(body, start, 2 + n);
      else pushUtf8(bytes, v);
      i += 2 + n;
    } else {
      throw badEscape(body, start, 2);
    }
  }
  return new TextDecoder().decode(new Uint8Array(bytes));
}

/** The value of a backtick raw literal's body: taken as is, except that carriage returns are dropped (Go spec). */
export function unquoteRaw(body: string): string {
  return body.replaceAll("\r", "");
}

function badEscape(body: string, at: number, len: number): LiteralError {
  return new LiteralError(`invalid escape sequence ${JSON.stringify(body.slice(at, at + len))} in string literal`, at);
}

function pushUtf8(out: number[], cp: number): void {
  if (cp < 0x80) out.push(cp);
  else if (cp < 0x800) out.push(0xc0 | (cp >> 6), 0x80 | (cp & 63));
  else if (cp < 0x10000) out.push(0xe0 | (cp >> 12), 0x80 | ((cp >> 6) & 63), 0x80 | (cp & 63));
  else out.push(0xf0 | (cp >> 18), 0x80 | ((cp >> 12) & 63), 0x80 | ((cp >> 6) & 63), 0x80 | (cp & 63));
}

/** A coerced value, or the reason in Go's words (e.g. `strconv.ParseInt: parsing "abc": invalid syntax`). */
export type Coerced<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly reason: string };

const INT_FORMS: readonly [RegExp, number][] = [
  [/^0[xX]((?:_?[0-9A-Fa-f])+)$/, 16],
  [/^0[bB]((?:_?[01])+)$/, 2],
  [/^0[oO]((?:_?[0-7])+)$/, 8],
  [/^0((?:_?[0-7])+)$/, 8],
  [/^([1-9](?:_?[0-9])*|0)$/, 10],
];
const INT64_MIN = -(2n ** 63n), INT64_MAX = 2n ** 63n - 1n;

/** strconv.ParseInt(s, 0, 64): optional sign, 0x/0o/0b/0 prefixes, underscores between digits. */
export function coerceInt(s: string): Coerced<number> {
  const neg = s.startsWith("-");
  const body = s.startsWith("-") || s.startsWith("+") ? s.slice(1) : s;
  for (const [re, base] of INT_FORMS) {
    const m = re.exec(body);
    if (!m) continue;
    let v = 0n;
    for (const d of m[1]!.replaceAll("_", "")) v = v * BigInt(base) + BigInt(parseInt(d, base));
    if (neg) v = -v;
    if (v < INT64_MIN || v > INT64_MAX) return { ok: false, reason: `strconv.ParseInt: parsing ${goQuote(s)}: value out of range` };
    return { ok: true, value: Number(v) };
  }
  return { ok: false, reason: `strconv.ParseInt: parsing ${goQuote(s)}: invalid syntax` };
}

/** strconv.ParseFloat(s, 64) for decimal forms ("1", "1.5", ".5", "1e3") and inf/infinity/nan (any case). */
export function coerceFloat(s: string): Coerced<number> {
  if (/^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$/.test(s)) return { ok: true, value: Number(s) };
  const m = /^([+-]?)(inf|infinity|nan)$/i.exec(s);
  if (m) return { ok: true, value: m[2]!.toLowerCase() === "nan" ? NaN : m[1] === "-" ? -Infinity : Infinity };
  return { ok: false, reason: `strconv.ParseFloat: parsing ${goQuote(s)}: invalid syntax` };
}

const BOOLS: Readonly<Record<string, boolean>> = {
  "1": true, t: true, T: true, TRUE: true, true: true, True: true,
  "0": false, f: false, F: false, FALSE: false, false: false, False: false,
};

/** strconv.ParseBool: 1 t T TRUE true True, 0 f F FALSE false False. */
export function coerceBool(s: string): Coerced<boolean> {
  const v = Object.hasOwn(BOOLS, s) ? BOOLS[s] : undefined;
  return v === undefined ? { ok: false, reason: `strconv.ParseBool: parsing ${goQuote(s)}: invalid syntax` } : { ok: true, value: v };
}

/** A string quoted for an error message, close to Go's %q. */
export function goQuote(s: string): string {
  return JSON.stringify(s);
}
