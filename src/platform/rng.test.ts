import { describe, expect, test } from "bun:test";
import { cryptoRng, seededRng, uuidFrom } from "./rng.ts";
import type { Rng } from "./rng.ts";

const u32s = (rng: Rng, count: number) => Array.from({ length: count }, () => rng.next() * 0x1_0000_0000);

/**
 * Pearson's chi-square statistic of `draws` calls of `rng.int(n)` against the uniform distribution.
 * With a fixed seed the result is a fixed number, so a bound on it cannot flake.
 */
function chiSquare(rng: Rng, n: number, draws: number): { stat: number; counts: number[] } {
  const counts = new Array<number>(n).fill(0);
  for (let i = 0; i < draws; i++) counts[rng.int(n)]!++;
  const expected = draws / n;
  const stat = counts.reduce((sum, c) => sum + (c - expected) ** 2 / expected, 0);
  return { stat, counts };
}

/** Chi-square critical values at p = 0.001 for n - 1 degrees of freedom. */
const CHI2_P001: Record<number, number> = { 3: 13.82, 7: 22.46, 10: 27.88, 256: 330.5 };

describe("seededRng", () => {
  test("matches the xoshiro128** reference with splitmix32 seeding (golden values)", () => {
    // From the C reference (prng.di.unimi.it/xoshiro128starstar.c), state from the same splitmix32.
    expect(u32s(seededRng(0), 6)).toEqual([3809008728, 1133695204, 53579671, 2891528803, 139681546, 2203266335]);
    expect(u32s(seededRng(1), 6)).toEqual([2442144158, 3238099751, 3819917871, 2104621829, 2021136066, 4223536128]);
    expect(u32s(seededRng(42), 6)).toEqual([2837322924, 544945897, 479756282, 3500138142, 339756180, 113173290]);
    expect(u32s(seededRng(0xffff_ffff), 6)).toEqual([835879718, 1921286648, 2356205009, 1885780724, 980451116, 1053911718]);
  });

  test("the same seed gives the same sequence across next, int and bytes", () => {
    const draw = (rng: Rng) => [rng.next(), rng.int(10), rng.int(1000), ...rng.bytes(7), rng.next(), rng.int(3)];
    for (const seed of [0, 1, 42, 123456789, 0xffff_ffff]) expect(draw(seededRng(seed))).toEqual(draw(seededRng(seed)));
  });

  test("different seeds give different sequences", () => {
    const seqs = new Set<string>();
    for (let seed = 0; seed < 200; seed++) seqs.add(u32s(seededRng(seed), 4).join(","));
    expect(seqs.size).toBe(200);
    expect(u32s(seededRng(1), 8)).not.toEqual(u32s(seededRng(2), 8));
  });

  test("next() is in [0, 1) and spread across it", () => {
    const rng = seededRng(7);
    let min = 1, max = 0, sum = 0, outside = 0;
    const draws = 100_000;
    for (let i = 0; i < draws; i++) {
      const x = rng.next();
      if (!(x >= 0 && x < 1)) outside++;
      min = Math.min(min, x);
      max = Math.max(max, x);
      sum += x;
    }
    expect(outside).toBe(0);
    expect(min).toBeLessThan(0.001);
    expect(max).toBeGreaterThan(0.999);
    expect(Math.abs(sum / draws - 0.5)).toBeLessThan(0.01);
  });

  test("int(n) stays in [0, n) and is an integer", () => {
    const rng = seededRng(99);
    for (const n of [1, 2, 3, 7, 10, 1000, 2 ** 31, 2 ** 32 - 1]) {
      const bad = Array.from({ length: 2000 }, () => rng.int(n)).filter((x) => !(Number.isInteger(x) && x >= 0 && x < n));
      expect({ n, bad }).toEqual({ n, bad: [] });
    }
  });

  test("int(1) is always 0", () => {
    const rng = seededRng(5);
    for (let i = 0; i < 100; i++) expect(rng.int(1)).toBe(0);
  });

  test("int(n) is roughly uniform for n = 3, 7, 10 (chi-square, fixed seed)", () => {
    for (const n of [3, 7, 10]) {
      const draws = 10_000 * n;
      const { stat, counts } = chiSquare(seededRng(2024), n, draws);
      expect(counts.every((c) => c > 0)).toBe(true);
      expect(stat).toBeLessThan(CHI2_P001[n]!);
    }
  });

  test("int(n) is roughly uniform for n = 3, 7, 10 on other fixed seeds too", () => {
    for (const seed of [1, 31337, 0xdead_beef]) {
      for (const n of [3, 7, 10]) expect(chiSquare(seededRng(seed), n, 5_000 * n).stat).toBeLessThan(CHI2_P001[n]!);
    }
  });

  test("int rejects bounds that are not positive integers below 2^32", () => {
    const rng = seededRng(1);
    for (const n of [0, -1, -7, 1.5, 0.5, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 32, 2 ** 40]) {
      expect(() => rng.int(n)).toThrow(RangeError);
      expect(() => rng.int(n)).toThrow(/bad bound/);
    }
  });

  test("bytes(n) has length n, for lengths around the 4-byte word size", () => {
    const rng = seededRng(3);
    for (const n of [0, 1, 2, 3, 4, 5, 7, 8, 9, 33, 1024]) {
      const b = rng.bytes(n);
      expect(b).toBeInstanceOf(Uint8Array);
      expect(b.length).toBe(n);
    }
  });

  test("bytes(n) is deterministic per seed and differs across seeds", () => {
    expect(seededRng(11).bytes(37)).toEqual(seededRng(11).bytes(37));
    expect(seededRng(11).bytes(37)).not.toEqual(seededRng(12).bytes(37));
  });

  test("bytes are the words of the sequence, little-endian", () => {
    const words = u32s(seededRng(42), 2);
    const b = seededRng(42).bytes(6);
    const le = (w: number) => [w & 0xff, (w >>> 8) & 0xff, (w >>> 16) & 0xff, w >>> 24];
    expect([...b]).toEqual([...le(words[0]!), ...le(words[1]!).slice(0, 2)]);
  });

  test("bytes are roughly uniform over 0..255 (chi-square, fixed seed)", () => {
    const b = seededRng(77).bytes(256 * 400);
    const counts = new Array<number>(256).fill(0);
    for (const x of b) counts[x]!++;
    const stat = counts.reduce((s, c) => s + (c - 400) ** 2 / 400, 0);
    expect(stat).toBeLessThan(CHI2_P001[256]!);
  });

  test("bytes returns a fresh buffer each call", () => {
    const rng = seededRng(8);
    const a = rng.bytes(16);
    const b = rng.bytes(16);
    expect(a).not.toBe(b);
    expect(a).not.toEqual(b);
  });
});

describe("cryptoRng", () => {
  test("next() is in [0, 1), across more than one refill of its buffer", () => {
    const rng = cryptoRng();
    const seen = new Set<number>();
    const draws = Array.from({ length: 1000 }, () => rng.next());
    expect(draws.filter((x) => !(x >= 0 && x < 1))).toEqual([]);
    for (const x of draws) seen.add(x);
    // 1000 draws of 32 bits: a repeat is possible (p ~ 1e-4) but more than a handful is not.
    expect(seen.size).toBeGreaterThan(990);
  });

  test("int(n) stays in [0, n) and rejects bad bounds", () => {
    const rng = cryptoRng();
    for (const n of [1, 3, 7, 10, 2 ** 32 - 1]) {
      const bad = Array.from({ length: 500 }, () => rng.int(n)).filter((x) => !(Number.isInteger(x) && x >= 0 && x < n));
      expect({ n, bad }).toEqual({ n, bad: [] });
    }
    for (const n of [0, -1, 1.5, Number.NaN, 2 ** 32]) expect(() => rng.int(n)).toThrow(RangeError);
  });

  test("int(3) reaches every value", () => {
    const rng = cryptoRng();
    const seen = new Set<number>();
    // P(a value is missing after 300 draws) = 3 * (2/3)^300, about 1e-52.
    for (let i = 0; i < 300; i++) seen.add(rng.int(3));
    expect([...seen].sort()).toEqual([0, 1, 2]);
  });

  test("bytes(n) has length n and is not constant", () => {
    const rng = cryptoRng();
    for (const n of [0, 1, 5, 64, 4096]) expect(rng.bytes(n).length).toBe(n);
    // Two 32-byte draws are equal, or one all zeros, with probability about 2^-256.
    const a = rng.bytes(32);
    const b = rng.bytes(32);
    expect(a).not.toEqual(b);
    expect(a.some((x) => x !== 0)).toBe(true);
  });

  test("two instances draw independently", () => {
    expect(cryptoRng().bytes(32)).not.toEqual(cryptoRng().bytes(32));
  });
});

describe("uuidFrom", () => {
  test("version 4, RFC 4122 variant, lowercase, deterministic per seed", () => {
    const a = uuidFrom(seededRng(5));
    expect(a).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(uuidFrom(seededRng(5))).toBe(a);
    expect(uuidFrom(seededRng(6))).not.toBe(a);
  });
});
