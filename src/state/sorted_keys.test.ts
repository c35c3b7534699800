import { describe, expect, test } from "bun:test";
import { SortedKeys } from "./sorted_keys.ts";

/** A small deterministic PRNG (mulberry32). */
function rng(seed: number) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe("SortedKeys", () => {
  test("matches a sorted set model under random inserts and deletes (splits and merges)", () => {
    const r = rng(7);
    const s = new SortedKeys();
    const model = new Set<string>();
    const key = () => `k/${Math.floor(r() * 3000).toString(36)}/${Math.floor(r() * 4)}`;
    for (let i = 0; i < 20_000; i++) {
      const k = key();
      if (r() < (i < 12_000 ? 0.7 : 0.2)) expect(s.add(k)).toBe(!model.has(k)), model.add(k);
      else expect(s.delete(k)).toBe(model.has(k)), model.delete(k);
      if (i % 2000 === 0) expect([...s.from("")]).toEqual([...model].sort());
    }
    expect(s.size).toBe(model.size);
    const sorted = [...model].sort();
    expect([...s.from("")]).toEqual(sorted);
    expect([...s.withPrefix("k/1")]).toEqual(sorted.filter((k) => k.startsWith("k/1")));
    expect([...s.from("k/5")]).toEqual(sorted.filter((k) => k >= "k/5"));
    for (const k of sorted) s.delete(k);
    expect([s.size, [...s.from("")]]).toEqual([0, []]);
  });

  test("frozen() views keep their keys while the set changes (splits, merges, emptied chunks)", () => {
    for (const seed of [1, 2, 3]) {
      const r = rng(seed);
      const s = new SortedKeys();
      const model = new Set<string>();
      const key = () => `k/${Math.floor(r() * 2000).toString(36)}`;
      const views: [readonly (readonly string[])[], string[]][] = [];
      for (let i = 0; i < 12_000; i++) {
        const k = key();
        if (r() < (i < 6000 ? 0.75 : 0.3)) s.add(k), model.add(k);
        else s.delete(k), model.delete(k);
        if (i % 1500 === 0) views.push([s.frozen(), [...model].sort()]);
      }
      for (const [view, want] of views) expect(view.flat()).toEqual(want);
      expect([...s.from("")]).toEqual([...model].sort());
    }
  });

  test("prefix scans on an empty set and past the end", () => {
    const s = new SortedKeys();
    expect([...s.withPrefix("")]).toEqual([]);
    s.add("b");
    s.add("a");
    expect([...s.withPrefix("")]).toEqual(["a", "b"]);
    expect([...s.from("c")]).toEqual([]);
  });
});
