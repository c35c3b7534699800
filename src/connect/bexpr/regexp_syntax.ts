/**
 * A parser for Go's regexp syntax (RE2, regexp/syntax with the Perl flags regexp.Compile uses), so that
 * `matches` accepts and rejects the same patterns Consul does and never runs a backtracking JS RegExp over
 * the whole input. Supported: literals, `.`, classes `[...]` with ranges, negation, `[:posix:]`, `\d\s\w`
 * (ASCII), `\pL`/`\p{Greek}`; anchors `^ $ \A \z \b \B`; groups `(...)`, `(?:...)`, `(?P<n>...)`, `(?<n>...)`;
 * flags `(?imsU)` and `(?i:...)`; `* + ? {n} {n,} {n,m}` (max 1000) with lazy forms; escapes `\a\f\n\r\t\v`,
 * octal, `\x41`, `\x{263a}`, `\Q...\E` and escaped punctuation. Like Go it rejects lookaround, backreferences
 * and `\Z`. Errors read like Go's: "error parsing regexp: missing closing ): `(a`".
 */
import { classMatcher, complement, literalMatcher, PERL_CLASSES, POSIX_CLASSES, type CharMatcher, type Range } from "./regexp_class.ts";
import { cp, RegexpScanner, RegexpSyntaxError } from "./regexp_scan.ts";

/** Zero-width assertions: begin/end of text (`\A` `\z`, `^` `$` without m), begin/end of line, (non-)word boundary. */
export type AssertKind = "bot" | "eot" | "bol" | "eol" | "wb" | "nwb";

/**
 * The parsed pattern; flags are already applied (folded matchers, `.` and anchor kinds). `max` -1 is
 * unbounded; `greedy` is false for a lazy repetition (`*?`, or `*` under the U flag). `cap` is capture
 * group `idx` (1-based, in the order of the opening parentheses); a yes/no match ignores both.
 */
export type RNode =
  | { readonly t: "empty" }
  | { readonly t: "char"; readonly m: CharMatcher }
  | { readonly t: "assert"; readonly a: AssertKind }
  | { readonly t: "cat" | "alt"; readonly subs: readonly RNode[] }
  | { readonly t: "rep"; readonly sub: RNode; readonly min: number; readonly max: number; readonly greedy: boolean }
  | { readonly t: "cap"; readonly idx: number; readonly sub: RNode };

export { RegexpSyntaxError };

interface Flags {
  i: boolean;
  m: boolean;
  s: boolean;
  U: boolean;
}

const MAX_DEPTH = 200;
const MAX_REPEAT = 1000;
const EMPTY: RNode = { t: "empty" };
const ANY_BUT_NL: CharMatcher = (c) => c !== 10;
const ANY: CharMatcher = () => true;
const ESCAPE_ASSERTS: Readonly<Record<string, AssertKind>> = { A: "bot", z: "eot", b: "wb", B: "nwb" };

/** Parses a Go regular expression into a tree of matchers; throws RegexpSyntaxError. */
export function parseRegexp(pattern: string): RNode {
  return new RegexpParser(pattern).parse();
}

class RegexpParser extends RegexpScanner {
  private readonly names = new Set<string>();
  private captures = 0;

  parse(): RNode {
    const node = this.alt({ i: false, m: false, s: false, U: false }, 0);
    if (this.pos < this.cps.length) this.fail("unexpected )", this.src);
    return node;
  }

  private alt(flags: Flags, depth: number): RNode {
    const subs = [this.concat(flags, depth)];
    while (this.peek() === cp("|")) {
      this.pos++;
      subs.push(this.concat(flags, depth));
    }
    return subs.length === 1 ? subs[0]! : { t: "alt", subs };
  }

  private concat(flags: Flags, depth: number): RNode {
    const items: RNode[] = [];
    let canRepeat = false;
    let lastRepeat = -1;
    for (;;) {
      const c = this.peek();
      if (c === undefined || c === cp("|") || c === cp(")")) break;
      const qStart = this.pos;
      const q = this.quantifier();
      if (q) {
        if (lastRepeat >= 0) this.fail("invalid nested repetition operator", this.text(lastRepeat));
        if (!canRepeat) this.fail("missing argument to repetition operator", this.text(qStart));
        items.push({ t: "rep", sub: items.pop()!, min: q[0], max: q[1], greedy: q[2] === flags.U });
        lastRepeat = qStart;
        continue;
      }
      lastRepeat = -1;
      const atoms = this.atom(flags, depth);
      if (atoms === null) canRepeat = false;
      else if (atoms.length > 0) {
        items.push(...atoms);
        canRepeat = true;
      }
    }
    return items.length === 0 ? EMPTY : items.length === 1 ? items[0]! : { t: "cat", subs: items };
  }

  /** `* + ? {n} {n,} {n,m}` as [min, max, lazy] (a trailing `?` makes it lazy); null (nothing consumed) if none. */
  private quantifier(): [number, number, boolean] | null {
    const start = this.pos;
    const c = this.peek();
    let q: [number, number] | null = null;
    if (c === cp("*")) q = [0, -1];
    else if (c === cp("+")) q = [1, -1];
    else if (c === cp("?")) q = [0, 1];
    if (q) this.pos++;
    else if (c === cp("{")) {
      const m = /^\{(0|[1-9][0-9]*)(,(0|[1-9][0-9]*)?)?\}/.exec(this.text(start, start + 24));
      if (!m) return null;
      const min = Number(m[1]), max = m[2] === undefined ? min : m[3] === undefined ? -1 : Number(m[3]);
      this.pos += m[0].length;
      if (min > MAX_REPEAT || max > MAX_REPEAT || (max >= 0 && min > max)) this.fail("invalid repeat count", this.text(start));
      q = [min, max];
    } else return null;
    const lazy = this.peek() === cp("?");
    if (lazy) this.pos++;
    return [q[0], q[1], lazy];
  }

  /** One atom (several for `\Q...\E`), or null for a flag directive such as `(?i)`. */
  private atom(flags: Flags, depth: number): RNode[] | null {
    const c = this.peek()!;
    if (c === cp("(")) {
      const g = this.group(flags, depth);
      return g === null ? null : [g];
    }
    if (c === cp("[")) return [this.charClass(flags)];
    this.pos++;
    if (c === cp(".")) return [{ t: "char", m: flags.s ? ANY : ANY_BUT_NL }];
    if (c === cp("^")) return [{ t: "assert", a: flags.m ? "bol" : "bot" }];
    if (c === cp("$")) return [{ t: "assert", a: flags.m ? "eol" : "eot" }];
    if (c !== cp("\\")) return [{ t: "char", m: literalMatcher(c, flags.i) }];
    this.pos--;
    const e = this.peek(1);
    const name = e === undefined ? "" : String.fromCodePoint(e);
    if (Object.hasOwn(ESCAPE_ASSERTS, name)) {
      this.pos += 2;
      return [{ t: "assert", a: ESCAPE_ASSERTS[name]! }];
    }
    if (name === "Q") {
      this.pos += 2;
      const out: RNode[] = [];
      while (this.pos < this.cps.length && !(this.peek() === cp("\\") && this.peek(1) === cp("E"))) {
        out.push({ t: "char", m: literalMatcher(this.cps[this.pos++]!, flags.i) });
      }
      if (this.pos < this.cps.length) this.pos += 2;
      return out;
    }
    if (name === "p" || name === "P") {
      const u = this.unicode();
      return [{ t: "char", m: classMatcher(typeof u === "string" ? { ranges: [], props: [u], negated: false } : { ranges: u, props: [], negated: false }, flags.i) }];
    }
    if ("dswDSW".includes(name) && name !== "") {
      this.pos += 2;
      const ranges = PERL_CLASSES[name.toLowerCase()]!;
      return [{ t: "char", m: classMatcher({ ranges, props: [], negated: name !== name.toLowerCase() }, flags.i) }];
    }
    return [{ t: "char", m: literalMatcher(this.escape(), flags.i) }];
  }

  private group(flags: Flags, depth: number): RNode | null {
    const start = this.pos++;
    if (depth >= MAX_DEPTH) this.fail("expression nests too deeply", this.src);
    let inner: Flags = { ...flags };
    let capture = this.peek() !== cp("?");
    if (!capture) {
      const rest = this.text(this.pos + 1, this.pos + 3);
      if (rest.startsWith("P<") || (rest.startsWith("<") && rest !== "<=" && rest !== "<!")) {
        const open = this.pos + (rest.startsWith("P") ? 3 : 2);
        const close = this.cps.indexOf(cp(">"), open);
        if (close < 0) this.fail("invalid named capture", this.text(start, this.cps.length));
        const name = this.text(open, close);
        if (!/^[A-Za-z0-9_]+$/.test(name)) this.fail("invalid named capture", this.text(start, close + 1));
        if (this.names.has(name)) this.fail("duplicate capture group name", name);
        this.names.add(name);
        this.pos = close + 1;
        capture = true;
      } else {
        this.pos++;
        const next: Flags = { ...flags };
        let sign = 1, sawFlag = false;
        for (;;) {
          const c = this.peek();
          if (c === undefined) this.fail("missing closing )", this.src);
          this.pos++;
          const f = String.fromCodePoint(c);
          if (f === "i" || f === "m" || f === "s" || f === "U") {
            next[f] = sign > 0;
            sawFlag = true;
          } else if (f === "-" && sign > 0) {
            sign = -1;
            sawFlag = false;
          } else if ((f === ":" || f === ")") && (sign > 0 || sawFlag)) {
            if (f === ")") {
              Object.assign(flags, next); // a directive: applies to the rest of the enclosing group
              return null;
            }
            inner = next;
            break;
          } else {
            this.fail("invalid or unsupported Perl syntax", this.text(start));
          }
        }
      }
    }
    const idx = capture ? ++this.captures : 0;
    const body = this.alt(inner, depth + 1);
    if (this.peek() !== cp(")")) this.fail("missing closing )", this.src);
    this.pos++;
    return capture ? { t: "cap", idx, sub: body } : body;
  }

  private charClass(flags: Flags): RNode {
    const start = this.pos++;
    const negated = this.peek() === cp("^");
    if (negated) this.pos++;
    const ranges: Range[] = [], props: string[] = [];
    for (let first = true; ; first = false) {
      const c = this.peek();
      if (c === undefined) this.fail("missing closing ]", this.text(start));
      if (c === cp("]") && !first) {
        this.pos++;
        break;
      }
      const e = this.peek(1) === undefined ? "" : String.fromCodePoint(this.peek(1)!);
      if (c === cp("[") && e === ":") {
        let end = this.pos + 2;
        while (end + 1 < this.cps.length && !(this.cps[end] === cp(":") && this.cps[end + 1] === cp("]"))) end++;
        if (end + 1 < this.cps.length) {
          const raw = this.text(this.pos + 2, end);
          const name = raw.replace(/^\^/, "");
          const cls = Object.hasOwn(POSIX_CLASSES, name) ? POSIX_CLASSES[name] : undefined;
          if (!cls) this.fail("invalid character class range", `[:${raw}:]`);
          ranges.push(...(raw.startsWith("^") ? complement(cls) : cls));
          this.pos = end + 2;
          continue;
        }
      }
      if (c === cp("\\") && (e === "p" || e === "P")) {
        const u = this.unicode();
        if (typeof u === "string") props.push(u);
        else ranges.push(...u);
        continue;
      }
      if (c === cp("\\") && e !== "" && "dswDSW".includes(e)) {
        this.pos += 2;
        const perl = PERL_CLASSES[e.toLowerCase()]!;
        ranges.push(...(e === e.toLowerCase() ? perl : complement(perl)));
        continue;
      }
      const loStart = this.pos;
      const lo = this.classChar(start);
      let hi = lo;
      if (this.peek() === cp("-") && this.peek(1) !== undefined && this.peek(1) !== cp("]")) {
        this.pos++;
        hi = this.classChar(start);
        if (hi < lo) this.fail("invalid character class range", this.text(loStart));
      }
      ranges.push([lo, hi]);
    }
    return { t: "char", m: classMatcher({ ranges, props, negated }, flags.i) };
  }

  private classChar(classStart: number): number {
    const c = this.peek();
    if (c === undefined) this.fail("missing closing ]", this.text(classStart));
    if (c === cp("\\")) return this.escape();
    this.pos++;
    return c;
  }
}
