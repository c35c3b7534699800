/**
 * Small pieces of Go's standard library whose exact behaviour and error texts Consul's HTTP API exposes:
 * time.ParseDuration / Duration.String, base64.StdEncoding.DecodeString, strconv.ParseBool, go-uuid's
 * ParseUUID and go-multierror's list format. Error texts are those of Go 1.14, the toolchain Consul 1.8
 * was built with (durations unquoted: `time: invalid duration abc`).
 */

/** An error whose message is the Go error text. */
export class GoError extends Error {
  override readonly name = "GoError";
}

const NS_UNITS: ReadonlyMap<string, bigint> = new Map([
  ["ns", 1n], ["us", 1_000n], ["µs", 1_000n], ["μs", 1_000n], ["ms", 1_000_000n], ["s", 1_000_000_000n], ["m", 60_000_000_000n],
  ["h", 3_600_000_000_000n],
]);
const MAX_DURATION = (1n << 63n) - 1n;
const isDigit = (ch: string | undefined) => ch !== undefined && ch >= "0" && ch <= "9";

/**
 * Go's time.ParseDuration: `[-+]?([0-9]*(\.[0-9]*)?[a-z]+)+` or "0", in nanoseconds. Throws GoError with
 * Go's message ("time: invalid duration x", "time: missing unit in duration 5", "time: unknown unit x in
 * duration 5x").
 */
export function parseGoDuration(text: string): number {
  const invalid = () => new GoError(`time: invalid duration ${text}`);
  let s = text;
  let neg = false;
  if (s[0] === "-" || s[0] === "+") {
    neg = s[0] === "-";
    s = s.slice(1);
  }
  if (s === "0") return 0;
  if (s === "") throw invalid();
  let total = 0n;
  while (s !== "") {
    if (!(s[0] === "." || isDigit(s[0]))) throw invalid();
    let i = 0;
    while (isDigit(s[i])) i++;
    const whole = s.slice(0, i);
    s = s.slice(i);
    let frac = "";
    if (s[0] === ".") {
      let j = 1;
      while (isDigit(s[j])) j++;
      frac = s.slice(1, j);
      s = s.slice(j);
    }
    if (whole === "" && frac === "") throw invalid();
    let u = 0;
    while (u < s.length && s[u] !== "." && !isDigit(s[u])) u++;
    if (u === 0) throw new GoError(`time: missing unit in duration ${text}`);
    const unitName = s.slice(0, u);
    s = s.slice(u);
    const unit = NS_UNITS.get(unitName);
    if (unit === undefined) throw new GoError(`time: unknown unit ${unitName} in duration ${text}`);
    let v = BigInt(whole || "0") * unit;
    // Go's leadingFraction keeps the digits that fit an int64, then adds f * (unit / 10^digits) as a float.
    const digits = frac.slice(0, 18);
    if (digits !== "") v += BigInt(Math.trunc(Number(digits) * (Number(unit) / 10 ** digits.length)));
    total += v;
    if (total > MAX_DURATION + (neg ? 1n : 0n)) throw invalid();
  }
  return Number(neg ? -total : total);
}

function fraction(v: bigint, prec: number): { rest: bigint; text: string } {
  const scale = 10n ** BigInt(prec);
  const digits = (v % scale).toString().padStart(prec, "0").replace(/0+$/, "");
  return { rest: v / scale, text: digits ? `.${digits}` : "" };
}

/** Go's Duration.String for `ns` nanoseconds: "0s", "1.5µs", "300ms", "1m30s", "24h0m0s". */
export function formatGoDuration(ns: number): string {
  let u = BigInt(Math.trunc(ns));
  const neg = u < 0n;
  if (neg) u = -u;
  let out: string;
  if (u === 0n) return "0s";
  if (u < 1_000_000_000n) {
    const [prec, unit] = u < 1_000n ? [0, "ns"] : u < 1_000_000n ? [3, "µs"] : [6, "ms"];
    const f = fraction(u, prec);
    out = `${f.rest}${f.text}${unit}`;
  } else {
    const f = fraction(u, 9);
    const secs = f.rest;
    out = `${secs % 60n}${f.text}s`;
    const mins = secs / 60n;
    if (mins > 0n) {
      out = `${mins % 60n}m${out}`;
      const hours = mins / 60n;
      if (hours > 0n) out = `${hours}h${out}`;
    }
  }
  return neg ? `-${out}` : out;
}

const B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
const B64_INDEX = new Map([...B64].map((ch, i) => [ch.charCodeAt(0), i]));
const PAD = 0x3d;
const isNewline = (b: number | undefined) => b === 0x0a || b === 0x0d;
const CANONICAL_B64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
/** The ES2026 Uint8Array.fromBase64 (Bun, Deno, Node 25+); loose trailing bits, like Go's StdEncoding. */
const fromBase64 = (Uint8Array as unknown as { fromBase64(text: string): Uint8Array }).fromBase64;

/**
 * Go's base64.StdEncoding.DecodeString (padding required, CR/LF skipped, trailing bits not checked).
 * Throws GoError "illegal base64 data at input byte N", N a byte offset as Go computes it.
 */
export function decodeGoBase64(text: string): Uint8Array {
  // Canonical input (alphabet only, padded to whole quads) decodes the same either way; the built-in
  // decoder is about 30x faster. Anything else takes the exact path below for Go's errors and offsets.
  if (CANONICAL_B64.test(text)) return fromBase64(text);
  const src = new TextEncoder().encode(text);
  const out: number[] = [];
  const corrupt = (at: number) => new GoError(`illegal base64 data at input byte ${at}`);
  let si = 0;
  while (si < src.length) {
    const quad = [0, 0, 0, 0];
    let len = 4;
    let j = 0;
    for (; j < 4; j++) {
      if (si === src.length) {
        if (j === 0) return Uint8Array.from(out);
        throw corrupt(si - j);
      }
      const b = src[si++]!;
      const v = B64_INDEX.get(b);
      if (v !== undefined) {
        quad[j] = v;
        continue;
      }
      if (isNewline(b)) {
        j--;
        continue;
      }
      if (b !== PAD || j < 2) throw corrupt(si - 1);
      if (j === 2) {
        while (si < src.length && isNewline(src[si])) si++;
        if (si === src.length) throw corrupt(src.length);
        if (src[si] !== PAD) throw corrupt(si - 1);
        si++;
      }
      while (si < src.length && isNewline(src[si])) si++;
      if (si < src.length) throw corrupt(si);
      len = j;
      break;
    }
    const val = (quad[0]! << 18) | (quad[1]! << 12) | (quad[2]! << 6) | quad[3]!;
    const bytes = [(val >> 16) & 0xff, (val >> 8) & 0xff, val & 0xff];
    out.push(...bytes.slice(0, len - 1));
  }
  return Uint8Array.from(out);
}

/** Go's strconv.ParseBool; undefined where Go answers an error. */
export function parseGoBool(text: string): boolean | undefined {
  if (["1", "t", "T", "TRUE", "true", "True"].includes(text)) return true;
  if (["0", "f", "F", "FALSE", "false", "False"].includes(text)) return false;
  return undefined;
}

/** Go's %#U of one code point: `U+0067 'g'`. */
function goCodePoint(ch: string): string {
  const cp = ch.codePointAt(0)!;
  return `U+${cp.toString(16).toUpperCase().padStart(4, "0")} '${ch}'`;
}

/**
 * go-uuid's ParseUUID as a validator (Consul's nodePreApply): undefined for a well-formed UUID, else
 * Go's error text ("uuid string is wrong length", "uuid is improperly formatted", "encoding/hex: ...").
 */
export function uuidError(id: string): string | undefined {
  if (new TextEncoder().encode(id).length !== 36) return "uuid string is wrong length";
  if (id[8] !== "-" || id[13] !== "-" || id[18] !== "-" || id[23] !== "-") return "uuid is improperly formatted";
  const hex = id.slice(0, 8) + id.slice(9, 13) + id.slice(14, 18) + id.slice(19, 23) + id.slice(24);
  for (const ch of hex) if (!/[0-9a-fA-F]/.test(ch)) return `encoding/hex: invalid byte: ${goCodePoint(ch)}`;
  return undefined;
}

/** hashicorp/go-multierror's ListFormatFunc: "1 error occurred:\n\t* x\n\n". */
export function multiErrorText(errors: readonly string[]): string {
  const head = errors.length === 1 ? "1 error occurred:" : `${errors.length} errors occurred:`;
  return `${head}\n\t${errors.map((e) => `* ${e}`).join("\n\t")}\n\n`;
}
