import { describe, expect, test } from "bun:test";
import { ByteBuffer, varintSize } from "./byte_buffer.ts";

describe("ByteBuffer", () => {
  test("grows past its initial size and keeps every byte", () => {
    const b = new ByteBuffer(2);
    for (let i = 0; i < 1000; i++) b.byte(i);
    b.raw(new Uint8Array([1, 2, 3]));
    expect(b.length).toBe(1003);
    expect(b.bytes()[999]).toBe(999 & 0xff);
    expect([...b.view().subarray(1000)]).toEqual([1, 2, 3]);
  });

  test("varints match protobuf's encoding, up to 2^53 - 1", () => {
    const v = (n: number) => {
      const b = new ByteBuffer(1);
      b.varint(n);
      return [...b.bytes()];
    };
    expect(v(0)).toEqual([0]);
    expect(v(127)).toEqual([127]);
    expect(v(128)).toEqual([0x80, 1]);
    expect(v(300)).toEqual([0xac, 0x02]);
    expect(v(2 ** 32)).toEqual([0x80, 0x80, 0x80, 0x80, 0x10]);
    expect(v(Number.MAX_SAFE_INTEGER)).toEqual([0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x0f]);
  });

  test("delimited writes the content's varint length before it, in place, nested too", () => {
    for (const size of [0, 1, 127, 128, 16_383, 16_384, 2_097_152]) {
      const content = new Uint8Array(size).map((_, i) => i);
      const b = new ByteBuffer(1);
      b.byte(9);
      b.delimited(() => b.delimited(() => b.raw(content)));
      b.byte(7);
      const inner = new ByteBuffer(1);
      inner.varint(size);
      inner.raw(content);
      const want = new ByteBuffer(1);
      want.byte(9);
      want.varint(inner.length);
      want.raw(inner.view());
      want.byte(7);
      expect(b.bytes()).toEqual(want.bytes());
      expect(varintSize(size)).toBe(new ByteBuffer(1).length + (() => {
        const v = new ByteBuffer(1);
        v.varint(size);
        return v.length;
      })());
    }
  });
});
