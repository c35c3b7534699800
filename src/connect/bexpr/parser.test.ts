/** The grammar: tree shapes (precedence, PEG fallbacks) and syntax errors with their positions. */
import { describe, expect, test } from "bun:test";
import { CHECK_SERVICE_NODE_SCHEMA, compileFilter, FilterError, MAX_FILTER_NODES } from "./index.ts";
import { MAX_NESTING, parseExpression, type Expr } from "./parser.ts";

/** A compact rendering of a tree: (or a b), (and a b), (not a), [sel op value]. */
function show(e: Expr): string {
  switch (e.kind) {
    case "or":
    case "and":
      return `(${e.kind} ${e.operands.map(show).join(" ")})`;
    case "not":
      return `(not ${show(e.operand)})`;
    case "match":
      return `[${e.selector.path.join("|")} ${e.op}${e.value === undefined ? "" : ` ${JSON.stringify(e.value)}`}]`;
  }
}

describe("tree shapes", () => {
  const SHAPES: readonly (readonly [string, string])[] = [
    ["a == 1 or b == 2 and not c == 3", '(or [a == "1"] (and [b == "2"] (not [c == "3"])))'],
    ["not a == 1 and b == 2", '(and (not [a == "1"]) [b == "2"])'],
    ["not (a == 1 and b == 2)", '(not (and [a == "1"] [b == "2"]))'],
    ["(a == 1 or b == 2) and c == 3", '(and (or [a == "1"] [b == "2"]) [c == "3"])'],
    ["a == 1 and b == 2 and c == 3", '(and [a == "1"] [b == "2"] [c == "3"])'],
    ["a.b.c != x", '[a|b|c != "x"]'],
    ['a["b c"][`d`].e == "v"', '[a|b c|d|e == "v"]'],
    ["a contains x", '[a in "x"]'],
    ["a not contains x", '[a not in "x"]'],
    ["x not in a", '[a not in "x"]'],
    ["a is empty", "[a is empty]"],
    ["a is not empty", "[a is not empty]"],
    ["a matches `^x$`", '[a matches "^x$"]'],
    ["a not matches `x`", '[a not matches "x"]'],
    ["a == b.c", '[a == "b.c"]'], // a selector as a value is its dotted text
    ["a == -0.25", '[a == "-0.25"]'],
    ["a == true", '[a == "true"]'],
    // the PEG falls back to reading a keyword as a bare word when the keyword reading fails
    ["not in Tags", '[Tags in "not"]'],
    ["Tags contains not", '[Tags in "not"]'],
    ["not == x", '[not == "x"]'],
    ["a == or", '[a == "or"]'],
    ["  a == 1  ", '[a == "1"]'],
  ];
  for (const [src, want] of SHAPES) test(JSON.stringify(src), () => expect(show(parseExpression(src))).toBe(want));
});

/** [expression, line, column, message fragment]. */
const SYNTAX_ERRORS: readonly (readonly [string, number, number, string])[] = [
  ["Service.Service ==", 1, 19, "expected a value (a quoted string, a number or a bare word), found end of input"],
  ["Service.Service = web", 1, 17, "expected a match operator"],
  ["Service.Service == web and", 1, 27, "expected an expression, found end of input"],
  ["(Service.Service == web", 1, 24, 'expected "and", "or" or ")", found end of input'],
  ["Service.Service == web extra", 1, 24, 'expected "and", "or" or end of input, found "extra"'],
  ["Service.Service == web)", 1, 23, 'found ")"'],
  ['Service.Service == "web', 1, 20, "unterminated string literal"],
  ["Service.Service == `web", 1, 20, "unterminated string literal"],
  ["Service.Port == 80a", 1, 17, 'invalid number literal "80a"'],
  ["Service.Port == 01", 1, 17, "invalid number literal"],
  ["Service.Port == 1.", 1, 17, "invalid number literal"],
  ["Service.Meta.version == 1.2.3", 1, 25, 'invalid number literal "1.2."'],
  ['Service.Meta["x" == y', 1, 13, "unclosed index expression"],
  ["Service.Meta[x] == y", 1, 14, "invalid index"],
  ['Service.Meta.x == "a\\qb"', 1, 21, 'invalid escape sequence "\\\\q"'],
  ['Service.Meta.x == "\\\'"', 1, 20, "invalid escape sequence"],
  ['Service.Meta.x == "\\400"', 1, 20, "invalid escape sequence"],
  ['Service.Meta.x == "a\nb"', 1, 21, "newline in string literal"],
  ["Service.Service == web\nand ==", 2, 5, "expected an expression"],
  ["   ", 1, 4, "expected an expression, found end of input"],
  ['"x" in "y"', 1, 8, "expected a selector"],
  ["Service.Tags contains", 1, 22, "expected a value"],
  ["Service.Tags is", 1, 14, "expected a match operator"],
  ["and", 1, 4, "expected a match operator"],
  ["Service..Port == 1", 1, 8, "expected a match operator"],
  ["_x == 1", 1, 1, "expected an expression"],
  ["Sérvice == 1", 1, 2, "expected a match operator"],
  ["(((a == 1)", 1, 11, 'expected "and", "or" or ")"'],
];

describe("syntax errors carry line and column", () => {
  for (const [src, line, column, fragment] of SYNTAX_ERRORS) {
    test(JSON.stringify(src), () => {
      let err: unknown;
      try {
        compileFilter(src, CHECK_SERVICE_NODE_SCHEMA);
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(FilterError);
      const fe = err as FilterError;
      expect(fe.message).toContain(fragment);
      expect(fe.message).toStartWith(`Syntax error at line ${line}, column ${column}: `);
      expect(fe.position).toMatchObject({ line, column });
    });
  }

  test("nesting is bounded so hostile input cannot exhaust the stack", () => {
    const ok = `${"(".repeat(MAX_NESTING - 1)}Service.Port == 1${")".repeat(MAX_NESTING - 1)}`;
    expect(compileFilter(ok, CHECK_SERVICE_NODE_SCHEMA).matches({ Service: { Port: 1 } })).toBe(true);
    for (const deep of [`${"(".repeat(5000)}Service.Port == 1${")".repeat(5000)}`, `${"not ".repeat(5000)}Service.Port == 1`]) {
      expect(() => compileFilter(deep, CHECK_SERVICE_NODE_SCHEMA)).toThrow(`nests more than ${MAX_NESTING} levels deep`);
    }
  });

  test("long flat chains (as long as the node cap allows) parse and evaluate without recursion trouble", () => {
    const n = MAX_FILTER_NODES - 1; // the clauses plus the one "or" node
    const chain = Array.from({ length: n }, (_, i) => `Service.Port == ${i}`).join(" or ");
    const f = compileFilter(chain, CHECK_SERVICE_NODE_SCHEMA);
    expect(f.matches({ Service: { Port: n - 1 } })).toBe(true);
    expect(f.matches({ Service: { Port: n } })).toBe(false);
  });
});
