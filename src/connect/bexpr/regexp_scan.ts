/**
 * The lexical layer of the Go regexp parser (regexp_syntax.ts): a cursor over the pattern's code points,
 * Go-worded errors, and the escapes shared by atoms and bracket classes (Go's parseEscape, `\p` classes).
 */
import { unicodeClass, type Range } from "./regexp_class.ts";

/** A pattern Go's regexp.Compile would reject, with Go's wording. */
export class RegexpSyntaxError extends Error {}

/** The code point of a one-character string. */
export const cp = (s: string): number => s.codePointAt(0)!;

const isOctal = (c: number | undefined) => c !== undefined && c >= 0x30 && c <= 0x37;
const isHex = (c: number | undefined) => c !== undefined && /[0-9A-Fa-f]/.test(String.fromCodePoint(c));
const isAlnum = (c: number) => /[0-9A-Za-z]/.test(String.fromCodePoint(c));
const ESCAPES: Readonly<Record<string, number>> = { a: 7, f: 12, n: 10, r: 13, t: 9, v: 11 };

/** Position and helpers over a pattern; the grammar lives in the subclass. */
export class RegexpScanner {
  protected readonly cps: number[];
  protected pos = 0;

  constructor(protected readonly src: string) {
    this.cps = Array.from(src, cp);
  }

  protected fail(code: string, expr: string): never {
    throw new RegexpSyntaxError(`error parsing regexp: ${code}: \`${expr}\``);
  }

  protected text(from: number, to = this.pos): string {
    return this.cps.slice(from, to).map((c) => String.fromCodePoint(c)).join("");
  }

  protected peek(k = 0): number | undefined {
    return this.cps[this.pos + k];
  }

  /** `\pL`, `\p{Greek}`, `\P{^Lu}`...: a JS `\p{}` fragment or ranges. */
  protected unicode(): string | readonly Range[] {
    const start = this.pos;
    let negated = this.peek(1) === cp("P");
    this.pos += 2;
    let name: string;
    if (this.peek() === cp("{")) {
      const close = this.cps.indexOf(cp("}"), this.pos);
      if (close < 0) this.fail("invalid character class range", this.text(start, this.cps.length));
      name = this.text(this.pos + 1, close);
      this.pos = close + 1;
    } else {
      if (this.peek() === undefined) this.fail("invalid character class range", this.text(start));
      name = String.fromCodePoint(this.cps[this.pos++]!);
    }
    if (name.startsWith("^")) {
      negated = !negated;
      name = name.slice(1);
    }
    const cls = /^[A-Za-z_]+$/.test(name) ? unicodeClass(name, negated) : null;
    if (cls === null) this.fail("invalid character class range", this.text(start));
    return cls;
  }

  /** A single-character escape (Go's parseEscape): octal, \x, \a\f\n\r\t\v, or escaped punctuation. */
  protected escape(): number {
    const start = this.pos++;
    const c = this.peek();
    if (c === undefined) this.fail("trailing backslash at end of expression", "");
    this.pos++;
    if (isOctal(c) && (c === cp("0") || isOctal(this.peek()))) {
      let v = c - 0x30;
      for (let k = 0; k < 2 && isOctal(this.peek()); k++) v = v * 8 + (this.cps[this.pos++]! - 0x30);
      return v;
    }
    if (c === cp("x")) {
      if (this.peek() === cp("{")) {
        const close = this.cps.indexOf(cp("}"), this.pos);
        const hex = close < 0 ? "" : this.text(this.pos + 1, close);
        if (!/^[0-9A-Fa-f]{1,8}$/.test(hex) || parseInt(hex, 16) > 0x10ffff) this.fail("invalid escape sequence", this.text(start, close < 0 ? this.cps.length : close + 1));
        this.pos = close + 1;
        return parseInt(hex, 16);
      }
      if (!isHex(this.peek()) || !isHex(this.peek(1))) this.fail("invalid escape sequence", this.text(start, Math.min(this.pos + 2, this.cps.length)));
      this.pos += 2;
      return parseInt(this.text(this.pos - 2), 16);
    }
    const name = String.fromCodePoint(c);
    if (Object.hasOwn(ESCAPES, name)) return ESCAPES[name]!;
    if (c < 0x80 && !isAlnum(c)) return c;
    return this.fail("invalid escape sequence", this.text(start));
  }
}
