/** The compile-time caps (limits.ts, parser nesting, regexp size): each one bites, just past its number. */
import { describe, expect, test } from "bun:test";
import {
  CHECK_SERVICE_NODE_SCHEMA,
  compileFilter,
  FilterError,
  MAX_FILTER_BYTES,
  MAX_FILTER_NODES,
  MAX_FILTER_REGEXP_STATES,
  MAX_NESTING,
  NODE_SCHEMA,
} from "./index.ts";
import { errorOf } from "./fixtures.test.ts";

/** `Node.Node == "xx...x"`, exactly `bytes` bytes long. */
function ofBytes(bytes: number): string {
  return `Node.Node == "${"x".repeat(bytes - 'Node.Node == ""'.length)}"`;
}

describe("expression length", () => {
  test(`${MAX_FILTER_BYTES} bytes compile; one more is refused before parsing`, () => {
    expect(compileFilter(ofBytes(MAX_FILTER_BYTES), CHECK_SERVICE_NODE_SCHEMA).matches({})).toBe(false);
    expect(errorOf(ofBytes(MAX_FILTER_BYTES + 1)).message).toBe(
      `filter expression is ${MAX_FILTER_BYTES + 1} bytes long, more than the ${MAX_FILTER_BYTES} allowed`,
    );
    // A syntax error far inside a too-long expression is not reached: the length check comes first.
    expect(errorOf(`${ofBytes(MAX_FILTER_BYTES)} and ((`).message).toStartWith("filter expression is");
  });

  test("counts UTF-8 bytes, not UTF-16 units", () => {
    const frame = 'Node.Node == ""'.length;
    const accents = (n: number) => `Node.Node == "${"é".repeat(n)}"`; // 2 bytes, 1 unit each
    const fits = (MAX_FILTER_BYTES - frame - 1) / 2;
    expect(() => compileFilter(accents(fits), CHECK_SERVICE_NODE_SCHEMA)).not.toThrow();
    expect(accents(fits + 1).length).toBeLessThan(MAX_FILTER_BYTES);
    expect(errorOf(accents(fits + 1)).message).toContain(`${MAX_FILTER_BYTES + 1} bytes long`);
    const astral = `Node.Node == "${"😀".repeat(MAX_FILTER_BYTES / 4)}"`; // 4 bytes, 2 units each
    expect(errorOf(astral).message).toContain(`${MAX_FILTER_BYTES + frame} bytes long`);
  });
});

describe("node count", () => {
  const clauses = (n: number) => Array.from({ length: n }, (_, i) => `Service.Port == ${i}`).join(" or ");

  test(`${MAX_FILTER_NODES} nodes compile; one more is refused`, () => {
    expect(() => compileFilter(clauses(MAX_FILTER_NODES - 1), CHECK_SERVICE_NODE_SCHEMA)).not.toThrow();
    expect(errorOf(clauses(MAX_FILTER_NODES)).message).toBe(
      `filter expression has more than ${MAX_FILTER_NODES} clauses and operators (and, or, not)`,
    );
  });

  test("and, or and not each count", () => {
    // k clauses under one "or", each wrapped in `not`: 2k + 1 nodes.
    const nots = (k: number) => Array.from({ length: k }, (_, i) => `not Service.Port == ${i}`).join(" or ");
    const maxNots = Math.floor((MAX_FILTER_NODES - 1) / 2);
    expect(() => compileFilter(nots(maxNots), CHECK_SERVICE_NODE_SCHEMA)).not.toThrow();
    expect(errorOf(nots(maxNots + 1)).message).toContain("clauses and operators");
    // k parenthesized `and` pairs under one "or": 3k + 1 nodes.
    const pairs = (k: number) => Array.from({ length: k }, (_, i) => `(Service.Port == ${i} and Service.Port != 0)`).join(" or ");
    const maxPairs = Math.floor((MAX_FILTER_NODES - 1) / 3);
    expect(() => compileFilter(pairs(maxPairs), CHECK_SERVICE_NODE_SCHEMA)).not.toThrow();
    expect(errorOf(pairs(maxPairs + 1)).message).toContain("clauses and operators");
  });
});

describe("nesting", () => {
  test(`${MAX_NESTING} levels of mixed parentheses and not evaluate; deeper is a syntax error, never a stack overflow`, () => {
    const mixed = (depth: number) => `${"(not ".repeat(depth / 2)}Service.Port == 1${")".repeat(depth / 2)}`;
    const ok = compileFilter(mixed(MAX_NESTING), CHECK_SERVICE_NODE_SCHEMA);
    expect(ok.matches({ Service: { Port: 1 } })).toBe(true); // an even number of nots
    expect(errorOf(mixed(MAX_NESTING + 2)).message).toContain(`nests more than ${MAX_NESTING} levels deep`);
    for (const hostile of [
      "(".repeat(100_000),
      "not ".repeat(8000),
      `${"(a == 1 or ".repeat(3000)}a == 1`,
      `${"((".repeat(5000)}`,
    ]) {
      expect(errorOf(hostile)).toBeInstanceOf(FilterError);
    }
  });

  test("a chain of or/and inside each level stays within the cap", () => {
    let expr = "Service.Port == 0";
    for (let i = 1; i < MAX_NESTING; i++) expr = `(Service.Port == ${i} or ${expr} and Service.Port != -1)`;
    expect(compileFilter(expr, CHECK_SERVICE_NODE_SCHEMA).matches({ Service: { Port: 0 } })).toBe(true);
  });
});

describe("regexp size over the whole filter", () => {
  const big = "(?:x{1000}){6}"; // 6,000 NFA states
  test(`patterns up to ${MAX_FILTER_REGEXP_STATES} states in total compile; past it they are refused`, () => {
    expect(() => compileFilter(`Node matches "${big}"`, NODE_SCHEMA)).not.toThrow();
    expect(errorOf(`Node matches "${big}" or Address matches "${big}"`, NODE_SCHEMA).message).toBe(
      `the filter's regular expressions are too large together: more than ${MAX_FILTER_REGEXP_STATES} states`,
    );
  });

  test("one pattern past the per-pattern limit keeps Go's message", () => {
    expect(() => compileFilter('Node matches "(?:x{1000}){11}"', NODE_SCHEMA)).toThrow("expression too large");
  });
});
