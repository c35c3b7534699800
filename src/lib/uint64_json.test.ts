import { describe, expect, test } from "bun:test";
import { parseExact, stringifyExact } from "./uint64_json.ts";

describe("exact 64-bit integers in JSON", () => {
  test("bigints are written as bare number literals and read back exactly", () => {
    const value = { Flags: 18446744073709551615n, Small: 42, Nested: [9007199254740993n, 1.5] };
    const text = stringifyExact(value);
    expect(text).toBe('{"Flags":18446744073709551615,"Small":42,"Nested":[9007199254740993,1.5]}');
    expect(parseExact(text)).toEqual(value);
    expect(stringifyExact({ a: 1n }, 2)).toBe('{\n  "a": 1\n}');
  });

  test("safe integers, fractions and exponents stay numbers; a reviver sees the exact value", () => {
    expect(parseExact('{"a": 9007199254740991, "b": 1e300, "c": -0.5}')).toEqual({ a: 9007199254740991, b: 1e300, c: -0.5 });
    const seen: unknown[] = [];
    parseExact('{"a": 12345678901234567890}', (k, v) => (k === "a" && seen.push(v), v));
    expect(seen).toEqual([12345678901234567890n]);
  });

  test("the plain-JSON.parse shortcut and the exact path agree on text without 16 digits in a row", () => {
    // 15 digits stay numbers either way; 16 digits take the exact path even when safe; a reviver runs on both.
    expect(parseExact('[999999999999999, "x", {"k": -123456789012345}]')).toEqual([999999999999999, "x", { k: -123456789012345 }]);
    expect(parseExact("[9007199254740993, 1000000000000000]")).toEqual([9007199254740993n, 1000000000000000]);
    expect(parseExact('{"a": 1}', (k, v) => (k === "a" ? 2 : v))).toEqual({ a: 2 });
  });
});
