import { describe, expect, test } from "bun:test";
import { DurationRing } from "./duration_ring.ts";

describe("DurationRing", () => {
  test("a reader sees each entry once, in order; one that falls behind misses only the oldest", () => {
    const ring = new DurationRing(4);
    const seen: number[] = [];
    const see = (ms: number) => void seen.push(ms);
    ring.push(1);
    ring.push(2);
    let cursor = ring.readSince(0, see);
    expect(seen).toEqual([1, 2]);
    expect(ring.readSince(cursor, see)).toBe(cursor);
    for (let i = 3; i <= 9; i++) ring.push(i);
    cursor = ring.readSince(cursor, see);
    expect(seen).toEqual([1, 2, 6, 7, 8, 9]);
    expect(cursor).toBe(9);
  });
});
