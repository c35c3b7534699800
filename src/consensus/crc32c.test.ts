import { describe, expect, test } from "bun:test";
import { crc32c, crc32cUpdate } from "./crc32c.ts";

const ascii = (s: string) => new TextEncoder().encode(s);

describe("crc32c", () => {
  test("known vectors (RFC 3720 B.4 and the standard check value)", () => {
    expect(crc32c(new Uint8Array(0))).toBe(0);
    expect(crc32c(ascii("123456789"))).toBe(0xe3069283);
    expect(crc32c(new Uint8Array(32))).toBe(0x8a9136aa);
    expect(crc32c(new Uint8Array(32).fill(0xff))).toBe(0x62a8ab43);
    expect(crc32c(Uint8Array.from({ length: 32 }, (_, i) => i))).toBe(0x46dd794e);
    expect(crc32c(Uint8Array.from({ length: 32 }, (_, i) => 31 - i))).toBe(0x113fdb5c);
    expect(crc32c(ascii("a"))).toBe(0xc1d04330);
    expect(crc32c(ascii("The quick brown fox jumps over the lazy dog"))).toBe(0x22620404);
  });

  test("chaining and sub-ranges agree with the bytewise definition", () => {
    const slow = (d: Uint8Array) => {
      let c = ~0 >>> 0;
      for (const b of d) {
        c ^= b;
        for (let k = 0; k < 8; k++) c = c & 1 ? (c >>> 1) ^ 0x82f63b78 : c >>> 1;
      }
      return ~c >>> 0;
    };
    const data = Uint8Array.from({ length: 1000 }, (_, i) => (i * 131 + 7) & 0xff);
    for (const n of [1, 7, 8, 9, 15, 16, 17, 63, 64, 65, 999, 1000]) {
      expect(crc32c(data.subarray(0, n))).toBe(slow(data.subarray(0, n)));
      expect(crc32c(data, 3, 3 + Math.min(n, 997))).toBe(slow(data.subarray(3, 3 + Math.min(n, 997))));
    }
    expect(crc32cUpdate(crc32c(data, 0, 333), data, 333)).toBe(crc32c(data));
  });
});
