/**
 * Character classes for the RE2 engine (regexp_syntax.ts): code point ranges for Go's Perl and POSIX
 * classes (ASCII-only, as in Go's regexp/syntax perl_groups.go), Unicode property classes delegated to the
 * JS engine's `\p{...}`, and per-character matchers. A matcher tests ONE code point, so delegating it to a
 * JS RegExp of a single bracket class cannot backtrack; the pattern's structure runs in the NFA.
 */

/** An inclusive code point range. */
export type Range = readonly [number, number];

/** Tests one code point (`ch` is the same character as a string). */
export type CharMatcher = (cp: number, ch: string) => boolean;

/** The largest Unicode code point. */
export const MAX_CODE_POINT = 0x10ffff;

/** Go's Perl classes \d \s \w (ASCII only; \s is [\t\n\f\r ], without \v). */
export const PERL_CLASSES: Readonly<Record<string, readonly Range[]>> = {
  d: [[0x30, 0x39]],
  s: [[0x09, 0x0a], [0x0c, 0x0d], [0x20, 0x20]],
  w: [[0x30, 0x39], [0x41, 0x5a], [0x5f, 0x5f], [0x61, 0x7a]],
};

/** POSIX classes valid inside brackets, `[[:alpha:]]` (Go's posix_groups). */
export const POSIX_CLASSES: Readonly<Record<string, readonly Range[]>> = {
  alnum: [[0x30, 0x39], [0x41, 0x5a], [0x61, 0x7a]],
  alpha: [[0x41, 0x5a], [0x61, 0x7a]],
  ascii: [[0x00, 0x7f]],
  blank: [[0x09, 0x09], [0x20, 0x20]],
  cntrl: [[0x00, 0x1f], [0x7f, 0x7f]],
  digit: [[0x30, 0x39]],
  graph: [[0x21, 0x7e]],
  lower: [[0x61, 0x7a]],
  print: [[0x20, 0x7e]],
  punct: [[0x21, 0x2f], [0x3a, 0x40], [0x5b, 0x60], [0x7b, 0x7e]],
  space: [[0x09, 0x0d], [0x20, 0x20]],
  upper: [[0x41, 0x5a]],
  word: [[0x30, 0x39], [0x41, 0x5a], [0x5f, 0x5f], [0x61, 0x7a]],
  xdigit: [[0x30, 0x39], [0x41, 0x46], [0x61, 0x66]],
};

/** Unicode general categories Go's \p accepts; any other name is taken as a script (Greek, Latin, Han...). */
const CATEGORIES = new Set(
  "C Cc Cf Co Cs L Ll Lm Lo Lt Lu M Mc Me Mn N Nd Nl No P Pc Pd Pe Pf Pi Po Ps S Sc Sk Sm So Z Zl Zp Zs".split(" "),
);

/** Sorted, merged copy of `ranges`. */
export function normalize(ranges: readonly Range[]): Range[] {
  const sorted = [...ranges].sort((a, b) => a[0] - b[0]);
  const out: [number, number][] = [];
  for (const [lo, hi] of sorted) {
    const last = out[out.length - 1];
    if (last && lo <= last[1] + 1) last[1] = Math.max(last[1], hi);
    else out.push([lo, hi]);
  }
  return out;
}

/** The complement of `ranges` over all code points. */
export function complement(ranges: readonly Range[]): Range[] {
  const out: Range[] = [];
  let next = 0;
  for (const [lo, hi] of normalize(ranges)) {
    if (lo > next) out.push([next, lo - 1]);
    next = hi + 1;
  }
  if (next <= MAX_CODE_POINT) out.push([next, MAX_CODE_POINT]);
  return out;
}

/**
 * A `\p{name}` class as a JS bracket-class fragment (or ranges, for Go's `Any`); null when the JS engine
 * knows no such category or script.
 */
export function unicodeClass(name: string, negated: boolean): string | readonly Range[] | null {
  if (name === "Any") return negated ? [] : [[0, MAX_CODE_POINT]];
  const frag = `\\${negated ? "P" : "p"}{${CATEGORIES.has(name) ? name : `Script=${name}`}}`;
  try {
    new RegExp(`[${frag}]`, "u");
    return frag;
  } catch {
    return null;
  }
}

/** A bracket class: ranges plus `\p{...}` fragments, optionally negated. */
export interface ClassSpec {
  readonly ranges: readonly Range[];
  readonly props: readonly string[];
  readonly negated: boolean;
}

const esc = (cp: number) => `\\u{${cp.toString(16)}}`;

/** The matcher for a class; `fold` is Go's (?i) (delegated to the JS engine's Unicode simple case folding). */
export function classMatcher(spec: ClassSpec, fold: boolean): CharMatcher {
  const ranges = normalize(spec.ranges);
  if (!fold && spec.props.length === 0) {
    const { negated } = spec;
    return (cp) => {
      for (const [lo, hi] of ranges) {
        if (cp < lo) break;
        if (cp <= hi) return !negated;
      }
      return negated;
    };
  }
  const body = ranges.map(([lo, hi]) => (lo === hi ? esc(lo) : `${esc(lo)}-${esc(hi)}`)).join("") + spec.props.join("");
  const re = new RegExp(`^[${spec.negated ? "^" : ""}${body}]$`, fold ? "ui" : "u");
  return (_cp, ch) => re.test(ch);
}

/** The matcher for one literal code point. */
export function literalMatcher(cp: number, fold: boolean): CharMatcher {
  if (!fold) return (c) => c === cp;
  const re = new RegExp(`^${esc(cp)}$`, "ui");
  return (c, ch) => c === cp || re.test(ch);
}
