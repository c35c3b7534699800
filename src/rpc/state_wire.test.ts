import { describe, expect, test } from "bun:test";
import { decodeWire, encodeWire, encodeWireInSlices } from "./state_wire.ts";

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

  test("large byte arrays travel raw after the JSON and decode as views of the received bytes", () => {
    const big = new Uint8Array(200_000).map((_, i) => i * 7);
    const value = { state: big, index: 9, small: new Uint8Array([1, 2]), again: big.subarray(5, 70_005), meta: { $attached: [0, 1] } };
    const wire = encodeWire(value);
    expect(wire[0]).toBe(0);
    expect(wire.length).toBeLessThan(big.length + 70_000 + 300); // raw, not base64
    const back = decodeWire<typeof value>(wire);
    expect(back).toEqual(value);
    expect(back.state.buffer).toBe(wire.buffer);
    // Plain values stay plain JSON.
    expect(encodeWire({ a: new Uint8Array(10) })[0]).toBe("{".charCodeAt(0));
  });

  test("encodeWireInSlices gives encodeWire's bytes, pausing between slices of the copy", async () => {
    const parts = [new Uint8Array(5_000_000).fill(1), new Uint8Array(100).fill(2), new Uint8Array(4_500_000).fill(3)];
    const value = { state: parts, index: 3 };
    let pauses = 0;
    const sliced = await encodeWireInSlices(value, async () => void pauses++);
    expect(sliced).toEqual(encodeWire(value));
    expect(pauses).toBe(2);
    expect(await encodeWireInSlices({ a: 1 }, async () => void pauses++)).toEqual(encodeWire({ a: 1 }));
  });

  test("plain values are plain JSON both ways; bytes deep inside, or past the scan depth, still travel", () => {
    const plain = { services: { web: ["a", "b"], db: [] }, n: 1.5, s: "$bytes is only text here", none: null };
    expect(new TextDecoder().decode(encodeWire(plain))).toBe(JSON.stringify(plain));
    expect(decodeWire(encodeWire(plain))).toEqual(plain);
    let deep: unknown = { v: new Uint8Array([1, 2]), big: 2n ** 64n };
    for (let i = 0; i < 100; i++) deep = [deep];
    expect(decodeWire(encodeWire(deep))).toEqual(deep);
  });

  test("a damaged attachment header or reference is a SyntaxError", () => {
    const wire = encodeWire({ state: new Uint8Array(100_000) });
    expect(() => decodeWire(wire.subarray(0, 3))).toThrow(SyntaxError);
    expect(() => decodeWire(wire.subarray(0, 5000))).toThrow(/bad attachment reference/);
    const lying = wire.slice();
    new DataView(lying.buffer).setUint32(1, wire.length);
    expect(() => decodeWire(lying)).toThrow(/runs past the end/);
  });
});
