import { describe, expect, test } from "bun:test";
import { HclError, MAX_DEPTH, parseHcl } from "./hcl.ts";
import type { HclObject, HclValue } from "./hcl.ts";

/** The tree without positions, for shape assertions: items become [keys..., value]. */
function shape(v: HclValue): unknown {
  switch (v.kind) {
    case "object":
      return v.items.map((i) => [...i.keys.map((k) => k.name), i.assign ? "=" : "", shape(i.value)]);
    case "list":
      return { list: v.elements.map(shape) };
    case "string":
      return v.value;
    case "number":
      return { number: v.text };
    case "bool":
      return v.value;
    case "null":
      return null;
  }
}

function errorOf(text: string): string {
  try {
    parseHcl(text);
  } catch (e) {
    if (e instanceof HclError) return e.message;
    throw e;
  }
  throw new Error(`parsed without error: ${text}`);
}

describe("native HCL", () => {
  test("empty text and text of only comments give an empty object", () => {
    for (const text of ["", "  \n\t\r\n", "# c\n// d\n/* e\n f */ "]) expect(shape(parseHcl(text))).toEqual([]);
  });

  test("blocks with a label, assignments, and nested blocks", () => {
    const tree = parseHcl(`key_prefix "app/" { policy = "write" }\noperator = "read"\nkey { "a" { policy = "read" } }`);
    expect(shape(tree)).toEqual([
      ["key_prefix", "app/", "", [["policy", "=", "write"]]],
      ["operator", "=", "read"],
      ["key", "", [["a", "", [["policy", "=", "read"]]]]],
    ]);
  });

  test("items are separated by whitespace, newlines or commas", () => {
    const expected = [["a", "=", "x"], ["b", "=", "y"]];
    expect(shape(parseHcl(`s "w" { a = "x" b = "y" }`))).toEqual([["s", "w", "", expected]]);
    expect(shape(parseHcl(`s "w" {\n a = "x"\n b = "y"\n}`))).toEqual([["s", "w", "", expected]]);
    expect(shape(parseHcl(`s "w" { a = "x", b = "y", }`))).toEqual([["s", "w", "", expected]]);
    expect(shape(parseHcl(`a = "x", b = "y"`))).toEqual(expected);
  });

  test("keys are identifiers or quoted strings, and repeated keys are all kept", () => {
    const tree = parseHcl(`"quoted key" = "1"\nk.e-y_2 = "2"\nk.e-y_2 = "3"`);
    expect(shape(tree)).toEqual([["quoted key", "=", "1"], ["k.e-y_2", "=", "2"], ["k.e-y_2", "=", "3"]]);
    expect(tree.items[0]!.keys[0]!.quoted).toBe(true);
    expect(tree.items[1]!.keys[0]!.quoted).toBe(false);
  });

  test("string escapes decode like Go's strconv.Unquote", () => {
    const tree = parseHcl(String.raw`a = "q\" b\\ n\n t\t u\u00e9 U\U0001F600 x\x41 o\101 r\r"`);
    expect(shape(tree)).toEqual([["a", "=", "q\" b\\ n\n t\t u\u00e9 U\u{1F600} xA oA r\r"]]);
  });

  test("numbers, booleans and lists are tokenised as such", () => {
    const tree = parseHcl(`a = 1\nb = -2.5e3\nc = 0x1F\nd = true\ne = false\nf = [1, "x", [true], { g = "h" },]\ni = []`);
    expect(shape(tree)).toEqual([
      ["a", "=", { number: "1" }],
      ["b", "=", { number: "-2.5e3" }],
      ["c", "=", { number: "0x1F" }],
      ["d", "=", true],
      ["e", "=", false],
      ["f", "=", { list: [{ number: "1" }, "x", { list: [true] }, [["g", "=", "h"]]] }],
      ["i", "=", { list: [] }],
    ]);
  });

  test("every node carries its 1-based line:column, after comments and on later lines", () => {
    const tree = parseHcl(`# comment\n/* block\n */ key "a/b" {\n  policy = "read"\n}`);
    const item = tree.items[0]!;
    expect(item.keys.map((k) => k.pos)).toEqual([{ line: 3, column: 5 }, { line: 3, column: 9 }]);
    const body = item.value as HclObject;
    expect(body.pos).toEqual({ line: 3, column: 15 });
    expect(body.items[0]!.keys[0]!.pos).toEqual({ line: 4, column: 3 });
    expect(body.items[0]!.value.pos).toEqual({ line: 4, column: 12 });
  });

  test("columns count code points, so a character outside the BMP is one column", () => {
    expect(errorOf(`"\u{1F600}" @`)).toBe(`At 1:5: unexpected character "@"`);
  });

  test.each([
    [`operator`, `At 1:9: expected "=" or "{" after "operator"`],
    [`operator : "read"`, `At 1:10: unexpected character ":"`],
    [`key "a" = { }`, `At 1:9: expected "{" after "a"`],
    [`a = "abc`, `At 1:5: unterminated string`],
    [`a = "ab\nc"`, `At 1:5: unterminated string`],
    [`a = "ab\\`, `At 1:5: unterminated string`],
    [`a = 1 /* open`, `At 1:7: unterminated comment`],
    [String.raw`a = "\q"`, String.raw`At 1:6: invalid escape sequence "\\q"`],
    [String.raw`a = "\u12"`, String.raw`At 1:6: invalid escape sequence "\\u12"`],
    [String.raw`a = "\UFFFFFFFF"`, String.raw`At 1:6: invalid escape sequence "\\Uffffffff"`],
    [String.raw`a = "\ud800"`, String.raw`At 1:6: invalid escape sequence "\\ud800"`],
    [`a = read`, `At 1:5: unquoted word "read"; strings need double quotes`],
    [`a = }`, `At 1:5: expected a value, found "}"`],
    [`a =`, `At 1:4: expected a value, found end of input`],
    [`= "x"`, `At 1:1: expected a name, found "="`],
    [`}`, `At 1:1: expected a name, found "}"`],
    [`a = 12ab`, `At 1:5: invalid number "12ab"`],
    [`s "w" {\n  a = "x"\n`, `At 3:1: expected "}" to close "{" at 1:7, found end of input`],
    [`a = [1 2]`, `At 1:8: expected "," or "]" in the list opened at 1:5, found number 2`],
    [`a = [1,`, `At 1:8: expected "]" to close "[" at 1:5, found end of input`],
    [`a = "x",, b = "y"`, `At 1:9: expected a name, found ","`],
    [`a = <<EOF\nx\nEOF`, `At 1:5: unexpected character "<"`],
    [`a = "x\0"`, `At 1:7: unexpected NUL character in string`],
  ])("syntax error in %j", (text, message) => {
    expect(errorOf(text)).toBe(message);
  });

  test("nesting deeper than MAX_DEPTH stops with an error, not a stack overflow", () => {
    const ok = "a = " + "[".repeat(MAX_DEPTH) + "]".repeat(MAX_DEPTH);
    expect(shape(parseHcl(ok))).toHaveLength(1);
    expect(errorOf("a " + "{ b ".repeat(MAX_DEPTH + 1))).toBe(`At 1:${3 + 4 * MAX_DEPTH}: nesting deeper than ${MAX_DEPTH} levels`);
    expect(errorOf("a = " + "[".repeat(100_000))).toBe(`At 1:${5 + MAX_DEPTH}: nesting deeper than ${MAX_DEPTH} levels`);
  });
});

describe("JSON form", () => {
  test("text starting with { (after whitespace) is JSON, members become one-key assignments", () => {
    const tree = parseHcl(` \n{"key_prefix":{"app/":{"policy":"write"}},"operator":"read","n":[1,-2.5e3,true,false,null]}`);
    expect(shape(tree)).toEqual([
      ["key_prefix", "=", [["app/", "=", [["policy", "=", "write"]]]]],
      ["operator", "=", "read"],
      ["n", "=", { list: [{ number: "1" }, { number: "-2.5e3" }, true, false, null] }],
    ]);
  });

  test("repeated members are all kept, escapes decode, empty containers parse", () => {
    const tree = parseHcl(String.raw`{"a":"\"\\\/\b\f\n\r\t\u00e9\ud83d\ude00","a":{},"b":[]}`);
    expect(shape(tree)).toEqual([["a", "=", "\"\\/\b\f\n\r\t\u00e9\u{1F600}"], ["a", "=", []], ["b", "=", { list: [] }]]);
  });

  test("positions on every node", () => {
    const tree = parseHcl(`{\n  "key": {\n    "a": {"policy": "read"}\n  }\n}`);
    const key = tree.items[0]!;
    expect(key.keys[0]!.pos).toEqual({ line: 2, column: 3 });
    const inner = (key.value as HclObject).items[0]!;
    expect(inner.keys[0]!.pos).toEqual({ line: 3, column: 5 });
    expect((inner.value as HclObject).items[0]!.value.pos).toEqual({ line: 3, column: 21 });
  });

  test.each([
    [`{"a": 1`, `At 1:8: expected "," or "}" in the object opened at 1:1, found end of input`],
    [`{"a" 1}`, `At 1:6: expected ":" after "a", found "1"`],
    [`{a: 1}`, `At 1:2: expected a quoted member name, found "a"`],
    [`{"a": 1,}`, `At 1:9: expected a quoted member name, found "}"`],
    [`{\n  "a": [1 2]\n}`, `At 2:11: expected "," or "]" in the list opened at 2:8, found "2"`],
    [`{"a": tru}`, `At 1:7: unquoted word "tru"; strings need double quotes`],
    [`{"a": 01}`, `At 1:7: invalid number`],
    [`{"a": "x\ny"}`, `At 1:7: unterminated string`],
    [`{"a": "x\ty"}`, `At 1:9: control character "\\t" in string`],
    [String.raw`{"a": "\x41"}`, String.raw`At 1:8: invalid escape sequence "\\x"`],
    [`{"a": 1} x`, `At 1:10: unexpected "x" after the end of the JSON object`],
    [`{"a": }`, `At 1:7: expected a value, found "}"`],
    [`{"a": # c\n 1}`, `At 1:7: expected a value, found "#"`],
  ])("JSON error in %j", (text, message) => {
    expect(errorOf(text)).toBe(message);
  });

  test("deep JSON nesting stops with an error", () => {
    expect(errorOf("[".repeat(10)).startsWith("At 1:1: expected a name")).toBe(true);
    expect(errorOf('{"a":'.repeat(100_000))).toBe(`At 1:${1 + 5 * MAX_DEPTH}: nesting deeper than ${MAX_DEPTH} levels`);
  });
});
