/**
 * The Go-syntax regex engine behind `matches`: Go semantics where they differ from JS, Go's rejections,
 * linear time on patterns that make a backtracking engine explode, and a seeded differential test against
 * JS RegExp on the syntax both share.
 */
import { describe, expect, test } from "bun:test";
import { seededRng } from "../../platform/index.ts";
import { compileGoRegexp } from "./regexp.ts";
import { RegexpSyntaxError } from "./regexp_syntax.ts";

/** [pattern, input, Go's regexp.MatchString result]. */
const MATCHES: readonly (readonly [string, string, boolean])[] = [
  ["^v1\\.", "v1.2", true], ["^v1\\.", "v12", false], ["b", "abc", true], ["^b", "abc", false],
  ["^(a|b)*c$", "ababc", true], ["^(a|b)*c$", "ababd", false], ["a{2,3}", "caab", true], ["^a{2,3}$", "aaaa", false],
  ["^a{2,}$", "aaaaa", true], ["^a{0}b$", "b", true], ["^(ab)?c", "abc", true], ["^(ab)+$", "ababab", true],
  ["\\bfoo\\b", "a foo b", true], ["\\bfoo\\b", "afoob", false], ["\\Bo\\B", "fo", false], ["\\Bo\\B", "foo", true], ["\\Bo", "foo", true],
  ["(?m)^b$", "a\nb\nc", true], ["^b$", "a\nb\nc", false], ["(?m)a$", "a\n", true], ["a$", "a\n", false], ["\\Aa\\z", "a", true],
  [".", "\n", false], ["(?s).", "\n", true], [".", "\r", true], ["^.$", "é", true], ["^.$", "😀", true],
  ["(?i)HELLO", "say hello", true], ["(?i:a)b", "AB", false], ["(?i:a)b", "Ab", true], ["a(?i)b|c", "C", true],
  ["(?i)[a-c]", "B", true], ["(?i)k", "K", true], ["(?i)straße", "STRASSE", false], ["(?i-i)a", "A", false],
  ["[[:digit:]]+", "ab12", true], ["[[:^alpha:]]", "ab", false], ["[[:^alpha:]]", "a1", true], ["[^a-z]", "abc", false],
  ["[\\d-z]", "-", true], ["[]a]", "]", true], ["[^]a]", "]", false], ["[a-]", "-", true], ["[.]", "x", false],
  ["\\s", "\u000b", false], ["\\s", "\t", true], ["\\S", "x", true], ["[\\S]", " ", false], ["\\w+", "é", false], ["\\D", "5", false],
  ["\\pL", "1é", true], ["\\PL", "é", false], ["\\p{Greek}", "abcλ", true], ["\\p{^Greek}", "λ", false], ["[\\p{Lu}\\d]", "a", false],
  ["\\x41", "A", true], ["\\x{263a}", "☺", true], ["\\101", "A", true], ["\\0", "\u0000", true], ["\\Qa.b\\E", "a.b", true], ["\\Qa.b\\E", "axb", false],
  ["\\.\\-\\#", ".-#", true], ["a{", "a{", true], ["a{,2}", "a{,2}", true], ["{1", "{1", true], ["x{01}", "x{01}", true],
  ["(?P<v>\\d+)\\.(?<m>\\d+)", "v1.20", true], ["(?:a|)b", "b", true], ["()", "", true], ["x*", "", true], ["(a*)*", "b", true],
  ["(?U)a+?$", "aa", true], ["a*?b", "aab", true], ["é", "café", true], ["😀+", "x😀😀", true],
];

/** [pattern, Go's error message]. */
const REJECTED: readonly (readonly [string, string])[] = [
  ["(", "missing closing ): `(`"], [")", "unexpected ): `)`"], ["a)", "unexpected ): `a)`"], ["a**", "invalid nested repetition operator: `**`"],
  ["a+?*", "invalid nested repetition operator: `+?*`"], ["*a", "missing argument to repetition operator: `*`"], ["a|*", "missing argument to repetition operator: `*`"],
  ["(?=a)", "invalid or unsupported Perl syntax: `(?=`"], ["(?!a)", "invalid or unsupported Perl syntax: `(?!`"], ["(?<=a)", "invalid or unsupported Perl syntax: `(?<`"],
  ["(?x)a", "invalid or unsupported Perl syntax: `(?x`"], ["(?i-)a", "invalid or unsupported Perl syntax: `(?i-)`"], ["\\1", "invalid escape sequence: `\\1`"],
  ["\\8", "invalid escape sequence: `\\8`"], ["\\Z", "invalid escape sequence: `\\Z`"], ["\\C", "invalid escape sequence: `\\C`"], ["[\\b]", "invalid escape sequence: `\\b`"],
  ["\\xZ1", "invalid escape sequence: `\\xZ1`"], ["\\x{110000}", "invalid escape sequence"], ["[a", "missing closing ]: `[a`"], ["[]", "missing closing ]: `[]`"],
  ["[z-a]", "invalid character class range: `z-a`"], ["[[:foo:]]", "invalid character class range: `[:foo:]`"], ["\\p{Foo}", "invalid character class range: `\\p{Foo}`"],
  ["a{1001}", "invalid repeat count: `{1001}`"], ["a{2,1}", "invalid repeat count: `{2,1}`"], ["x{2}{3}", "invalid nested repetition operator: `{2}{3}`"],
  ["\\", "trailing backslash at end of expression: ``"], ["(?P<n>a)(?P<n>b)", "duplicate capture group name: `n`"], ["(?P<a-b>x)", "invalid named capture: `(?P<a-b>`"],
  ["((a{1000}){1000}){1000}", "expression too large"], [`${"(".repeat(300)}a${")".repeat(300)}`, "expression nests too deeply"],
];

describe("Go regexp semantics", () => {
  for (const [pattern, input, want] of MATCHES) {
    test(`${JSON.stringify(pattern)} on ${JSON.stringify(input)}`, () => expect(compileGoRegexp(pattern).test(input)).toBe(want));
  }
});

describe("Go regexp rejections", () => {
  for (const [pattern, message] of REJECTED) {
    test(JSON.stringify(pattern), () => {
      expect(() => compileGoRegexp(pattern)).toThrow(RegexpSyntaxError);
      expect(() => compileGoRegexp(pattern)).toThrow(`error parsing regexp: ${message}`);
    });
  }
});

describe("linear time", () => {
  test("patterns that make a backtracking engine explode stay fast on a long input", () => {
    const input = `${"a".repeat(4096)}!`;
    for (const p of ["(a+)+$", "(a|a)*b", "^(a*)*$", "^(a|aa)+$", "(.*a){12}$"]) {
      expect(compileGoRegexp(p).test(input)).toBe(false);
    }
  });
});

/** Random patterns over syntax where Go and JS (u flag) agree, inputs without line terminators other than \n. */
function randomPattern(rng: ReturnType<typeof seededRng>, depth: number): string {
  const atoms = ["a", "b", "c", ".", "[ab]", "[^a]", "\\d", "x", "^", "$", "\\b"];
  const parts: string[] = [];
  for (let n = 1 + rng.int(3); n > 0; n--) {
    let atom = depth > 0 && rng.int(4) === 0 ? `(${randomPattern(rng, depth - 1)})` : atoms[rng.int(atoms.length)]!;
    const q = rng.int(8);
    if (atom !== "^" && atom !== "$" && atom !== "\\b") atom += ["", "", "", "*", "+", "?", "{1,2}", "*?"][q];
    parts.push(atom);
  }
  const seq = parts.join("");
  return depth > 0 && rng.int(4) === 0 ? `${seq}|${randomPattern(rng, depth - 1)}` : seq;
}

test("differential: agrees with JS RegExp where the syntaxes coincide (seeded)", () => {
  const seed = 20240611;
  const rng = seededRng(seed);
  for (let i = 0; i < 3000; i++) {
    const pattern = randomPattern(rng, 2);
    const input = Array.from({ length: rng.int(8) }, () => "abcx1\n "[rng.int(7)]).join("");
    const want = new RegExp(pattern, "u").test(input);
    const got = compileGoRegexp(pattern).test(input);
    if (got !== want) throw new Error(`seed ${seed} case ${i}: /${pattern}/ on ${JSON.stringify(input)}: got ${got}, JS says ${want}`);
  }
});
