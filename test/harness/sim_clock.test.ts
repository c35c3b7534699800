import { describe, expect, test } from "bun:test";
import { simClock } from "./sim_clock.ts";

describe("simClock", () => {
  test("fires timers in time then creation order, and only when time advances", () => {
    const c = simClock(0);
    const seen: string[] = [];
    c.setTimer(10, () => seen.push("b"));
    c.setTimer(5, () => seen.push("a"));
    c.setTimer(10, () => seen.push("c"));
    const cancel = c.setTimer(7, () => seen.push("never"));
    cancel();
    expect(seen).toEqual([]);
    c.advance(9);
    expect(seen).toEqual(["a"]);
    expect(c.monotonic()).toBe(9);
    c.advance(1);
    expect(seen).toEqual(["a", "b", "c"]);
  });

  test("intervals repeat until cancelled; timers set by timers run in the same advance", () => {
    const c = simClock(0);
    const ticks: number[] = [];
    const stop = c.setInterval(3, () => ticks.push(c.monotonic()));
    c.setTimer(4, () => c.setTimer(1, () => ticks.push(-c.monotonic())));
    c.advance(10);
    expect(ticks).toEqual([3, -5, 6, 9]);
    stop();
    c.advance(10);
    expect(ticks.length).toBe(4);
    expect(c.runNext()).toBe(false);
  });
});
