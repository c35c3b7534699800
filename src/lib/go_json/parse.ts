/**
 * Reads the first JSON value of a request body the way Go's json.Decoder.Decode does (Consul's
 * decodeBody), failing with Go's error texts: "EOF" for an empty body, "unexpected EOF" for a truncated
 * one, "invalid character 'x' looking for beginning of value" and the scanner's other messages. Text
 * after the first value is ignored, as Decode ignores it. Object keys become own properties (a
 * "__proto__" key is data), later duplicates win.
 */
import { GoError } from "./go_compat.ts";
import { recordNumberText, setOwn, type JsonObject, type JsonValue } from "./value.ts";

/** Go's quoteChar: 'x', '\'', '"', '\n', '\x01'. */
function quoteChar(ch: string): string {
  if (ch === "'") return `'\\''`;
  if (ch === '"') return `'"'`;
  const q = JSON.stringify(ch).slice(1, -1);
  return `'${/^\\u00[0-9a-f]{2}$/.test(q) ? `\\x${q.slice(4)}` : q}'`;
}

/** A run of string characters needing no attention (no quote, backslash or control character). */
const PLAIN = /[^"\\\u0000-\u001f]+/y;

/**
 * Deepest nesting of arrays and objects a body may have. Go's scanner (1.15+) stops at 10,000 with
 * "exceeded max depth"; we stop at 1,000 with the same words: no Consul body nests beyond a handful of
 * levels, and every later step that walks a stored value (encoders, filters, validation) stays far
 * from the runtime's stack limit.
 */
export const MAX_JSON_DEPTH = 1_000;

class Parser {
  private i = 0;
  private depth = 0;
  /** The source text of the last number read (kept for integer fields, see value.ts). */
  private numberText = "";
  constructor(private readonly s: string) {}

  private fail(context: string): never {
    if (this.i >= this.s.length) throw new GoError("unexpected EOF");
    const ch = String.fromCodePoint(this.s.codePointAt(this.i)!);
    throw new GoError(`invalid character ${quoteChar(ch)} ${context}`);
  }

  private ws(): void {
    while (this.i < this.s.length && " \t\r\n".includes(this.s[this.i]!)) this.i++;
  }

  value(context = "looking for beginning of value"): JsonValue {
    this.ws();
    const ch = this.s[this.i];
    if ((ch === "{" || ch === "[") && ++this.depth > MAX_JSON_DEPTH) this.fail("exceeded max depth");
    if (ch === "{") return this.nested(this.object());
    if (ch === "[") return this.nested(this.array());
    if (ch === '"') return this.string();
    if (ch === "t") return this.literal("true", true);
    if (ch === "f") return this.literal("false", false);
    if (ch === "n") return this.literal("null", null);
    if (ch === "-" || (ch !== undefined && ch >= "0" && ch <= "9")) return this.number();
    return this.fail(context);
  }

  private nested<T>(v: T): T {
    this.depth--;
    return v;
  }

  private literal<T extends JsonValue>(word: string, v: T): T {
    for (let k = 0; k < word.length; k++, this.i++) {
      if (this.s[this.i] !== word[k]) this.fail(`in literal ${word} (expecting ${quoteChar(word[k]!)})`);
    }
    return v;
  }

  private digits(context: string): void {
    if (!/[0-9]/.test(this.s[this.i] ?? "")) this.fail(context);
    while (/[0-9]/.test(this.s[this.i] ?? "")) this.i++;
  }

  private number(): number {
    const start = this.i;
    if (this.s[this.i] === "-") this.i++;
    if (this.s[this.i] === "0") this.i++;
    else this.digits("in numeric literal");
    if (this.s[this.i] === ".") {
      this.i++;
      this.digits("after decimal point in numeric literal");
    }
    if (this.s[this.i] === "e" || this.s[this.i] === "E") {
      this.i++;
      if (this.s[this.i] === "+" || this.s[this.i] === "-") this.i++;
      this.digits("in exponent of numeric literal");
    }
    this.numberText = this.s.slice(start, this.i);
    return Number(this.numberText);
  }

  private string(): string {
    let out = "";
    this.i++;
    for (;;) {
      const ch = this.s[this.i];
      if (ch === undefined) this.fail("");
      if (ch === '"') {
        this.i++;
        return out;
      }
      if (ch < " ") this.fail("in string literal");
      if (ch !== "\\") {
        PLAIN.lastIndex = this.i;
        PLAIN.test(this.s);
        out += this.s.slice(this.i, PLAIN.lastIndex);
        this.i = PLAIN.lastIndex;
        continue;
      }
      this.i++;
      const esc = this.s[this.i];
      const simple: Record<string, string> = { '"': '"', "\\": "\\", "/": "/", b: "\b", f: "\f", n: "\n", r: "\r", t: "\t" };
      if (esc !== undefined && esc in simple) {
        out += simple[esc];
        this.i++;
      } else if (esc === "u") {
        this.i++;
        for (let k = 0; k < 4; k++, this.i++) {
          if (!/[0-9a-fA-F]/.test(this.s[this.i] ?? "")) this.fail("in \\u hexadecimal character escape");
        }
        out += String.fromCharCode(parseInt(this.s.slice(this.i - 4, this.i), 16));
      } else {
        this.fail("in string escape code");
      }
    }
  }

  private array(): JsonValue[] {
    const out: JsonValue[] = [];
    this.i++;
    this.ws();
    if (this.s[this.i] === "]") {
      this.i++;
      return out;
    }
    for (;;) {
      const v = this.value();
      if (typeof v === "number") recordNumberText(out, out.length, this.numberText);
      out.push(v);
      this.ws();
      if (this.s[this.i] === ",") {
        this.i++;
        continue;
      }
      if (this.s[this.i] === "]") {
        this.i++;
        return out;
      }
      this.fail("after array element");
    }
  }

  private object(): JsonObject {
    const out: JsonObject = {};
    this.i++;
    this.ws();
    if (this.s[this.i] === "}") {
      this.i++;
      return out;
    }
    for (;;) {
      this.ws();
      if (this.s[this.i] !== '"') this.fail("looking for beginning of object key string");
      const key = this.string();
      this.ws();
      if (this.s[this.i] !== ":") this.fail("after object key");
      this.i++;
      const v = this.value();
      if (typeof v === "number") recordNumberText(out, key, this.numberText);
      setOwn(out, key, v);
      this.ws();
      if (this.s[this.i] === ",") {
        this.i++;
        continue;
      }
      if (this.s[this.i] === "}") {
        this.i++;
        return out;
      }
      this.fail("after object key:value pair");
    }
  }

  empty(): boolean {
    this.ws();
    return this.i >= this.s.length;
  }
}

/** Parses the first JSON value of `text`; throws GoError with Go's decoder message. */
export function parseGoJson(text: string): JsonValue {
  const p = new Parser(text);
  if (p.empty()) throw new GoError("EOF");
  return p.value();
}
