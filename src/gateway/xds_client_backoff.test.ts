import { describe, expect, test } from "bun:test";
import { seededRng } from "../platform/index.ts";
import { Backoff } from "./xds_client_backoff.ts";

describe("Backoff", () => {
  test("each delay is below an interval that doubles from the base up to the cap", () => {
    const seed = 12345;
    const b = new Backoff({ baseMs: 250, maxMs: 30_000 }, seededRng(seed));
    const intervals = [250, 500, 1000, 2000, 4000, 8000, 16000, 30000, 30000, 30000];
    const delays = intervals.map((interval) => {
      expect(b.currentInterval()).toBe(interval);
      const d = b.next();
      expect(Number.isInteger(d)).toBe(true);
      expect(d).toBeGreaterThanOrEqual(0);
      expect(d).toBeLessThan(interval);
      return d;
    });
    expect(new Set(delays).size).toBeGreaterThan(5); // jittered, not a fixed sequence (seed 12345)
  });

  test("the same seed gives the same delays; reset starts again at the base", () => {
    const a = new Backoff({ baseMs: 100, maxMs: 1000 }, seededRng(9));
    const b = new Backoff({ baseMs: 100, maxMs: 1000 }, seededRng(9));
    const xs = [a.next(), a.next(), a.next()];
    expect([b.next(), b.next(), b.next()]).toEqual(xs);
    a.reset();
    expect(a.currentInterval()).toBe(100);
    expect(a.next()).toBeLessThan(100);
  });

  test("refuses a policy that cannot back off", () => {
    expect(() => new Backoff({ baseMs: 0, maxMs: 10 }, seededRng(1))).toThrow(RangeError);
    expect(() => new Backoff({ baseMs: 20, maxMs: 10 }, seededRng(1))).toThrow(RangeError);
    expect(() => new Backoff({ baseMs: Number.NaN, maxMs: 10 }, seededRng(1))).toThrow(RangeError);
  });
});
