import { describe, expect, test } from "bun:test";
import { decodeWire, encodeWire } from "./state_wire.ts";

describe("State wire encoding", () => {
  test("byte arrays and uint64 values past 2^53 travel exactly; other values as JSON", () => {
    const value = { Key: "k", Value: new Uint8Array([0, 1, 255]), Flags: 18446744073709551615n, ModifyIndex: 7, Nested: [{ Flags: 9007199254740993n }], Empty: null };
    expect(decodeWire(encodeWire(value))).toEqual(value);
  });

  test("objects of the value's own that look like the encoding's markers decode as themselves", () => {
    expect(decodeWire(encodeWire({ $bytes: "AA==", other: 1 }))).toEqual({ $bytes: "AA==", other: 1 });
    // A service Meta of {"$bytes": "AA=="} used to come back as a byte array, which no Go client decodes.
    const meta = { Meta: { $bytes: "AA==" }, Other: { $escaped: [["x", 1]] }, Nested: { $bytes: { $bytes: new Uint8Array([7]) } } };
    expect(decodeWire(encodeWire(meta))).toEqual(meta);
  });
});
