import { describe, expect, test } from "bun:test";
import { parseHclV1 } from "./hcl_v1_ast.ts";
import { printHclV1 } from "./hcl_v1_print.ts";

/** Expected outputs follow hashicorp/hcl v1.0.0's printer (hclprinter.Fprint: no trailing newline). */
describe("hcl v1 printer port", () => {
  const cases: [string, string, string][] = [
    ["assignments between blocks get blank lines; adjacent empty blocks do not", `a = 1\nb {}\nc {}\n`, `a = 1\n\nb {}\nc {}`],
    ["aligned '=' in a group of adjacent one-liners; a gap starts a new group", `x {\n  a = 1\n  long_name = "v"\n\n  b = true\n}`, `x {\n  a         = 1\n  long_name = "v"\n\n  b = true\n}`],
    ["line comments aligned after the values", `x {\n  a = "1" # one\n  bbb = "22" # two\n}`, `x {\n  a   = "1"  # one\n  bbb = "22" # two\n}`],
    ["lead and standalone comments (a comment ending the file keeps its newline)", `# lead\nx "y" {\n  # alone\n\n  p = "r"\n}\n\n// end`, `# lead\nx "y" {\n  # alone\n\n  p = "r"\n}\n\n// end\n`],
    ["a standalone block comment keeps lines 2+ as written; a lead one is indented whole",
      `x {\n/* a\n   b */\n\n  p = 1\n/* c\n d */\n  q = 2\n}`, `x {\n  /* a\n   b */\n\n  p = 1\n\n  /* c\n   d */\n  q = 2\n}`],
    ["single-line lists are re-spaced; multi-line lists get one element a line", `l = [ 1,2 ]\nm = [\n"a", "b"]`, `l = [1, 2]\n\nm = [\n  "a",\n  "b",\n]`],
    ["a line comment on a key whose value is on the next line moves above", `multiline = // c\n"v"`, `// c\nmultiline = "v"`],
    ["escapes are kept as written", `k "a\\"b" { p = "\\u00e9" }`, `k "a\\"b" {\n  p = "\\u00e9"\n}`],
  ];
  for (const [name, input, want] of cases) test(name, () => expect(printHclV1(parseHclV1(input))).toBe(want));
});
