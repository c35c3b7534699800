import { describe, expect, test } from "bun:test";
import { seededRng } from "../platform/index.ts";
import { flushMacrotask, simClock } from "../../test/harness/sim_clock.ts";
import { abortableLoop, loopBackoffMs, retryWaiterMs, RoutineStopped, sleep, tokenBucket, untilStopped } from "./leader_federation_pace.ts";

describe("federation routine pacing", () => {
  test("a token bucket starts full, then spaces reservations 1/rate apart and refills with time", () => {
    const clock = simClock();
    const bucket = tokenBucket(clock, 1, 5);
    expect([1, 2, 3, 4, 5].map(() => bucket.reserve())).toEqual([0, 0, 0, 0, 0]);
    expect(bucket.reserve()).toBe(1000);
    expect(bucket.reserve()).toBe(2000);
    clock.advance(10_000); // owes 2 tokens, gains 10, capped at the burst
    expect([1, 2, 3, 4, 5].map(() => bucket.reserve())).toEqual([0, 0, 0, 0, 0]);
    expect(bucket.reserve()).toBe(1000);
    const slow = tokenBucket(clock, 0.2, 1);
    expect([slow.reserve(), slow.reserve()]).toEqual([0, 5000]);
    expect(() => tokenBucket(clock, 0, 1)).toThrow(RangeError);
  });

  test("RetryWaiter: 0 without failures, then 1, 2, 4 s... capped, each plus under 10% jitter", () => {
    for (const seed of [1, 2, 3]) {
      const rng = seededRng(seed);
      expect(retryWaiterMs(0, 120_000, rng)).toBe(0);
      for (const [failures, base] of [[1, 1000], [2, 2000], [3, 4000], [7, 64_000], [8, 120_000], [40, 120_000]] as const) {
        const ms = retryWaiterMs(failures, 120_000, rng);
        expect(ms).toBeGreaterThanOrEqual(base);
        expect(ms).toBeLessThan(base * 1.1);
      }
    }
  });

  test("retryLoopBackoff: 2^n s after the n-th failure, up to 256 s", () => {
    expect([1, 2, 3, 7, 8, 9, 50].map((n) => loopBackoffMs(n, 256_000))).toEqual([2000, 4000, 8000, 128_000, 256_000, 256_000, 256_000]);
  });

  test("sleep resolves on the clock and is cancelled (timer gone) by an abort", async () => {
    const clock = simClock();
    const c = new AbortController();
    let done = false;
    void sleep(clock, 100, c.signal).then(() => (done = true));
    clock.advance(99);
    await flushMacrotask();
    expect(done).toBe(false);
    clock.advance(1);
    await flushMacrotask();
    expect(done).toBe(true);
    const stopped = sleep(clock, 100, c.signal).catch((e) => e);
    expect(clock.pending()).toBe(1);
    c.abort();
    expect(await stopped).toBeInstanceOf(RoutineStopped);
    expect(clock.pending()).toBe(0);
    expect(await sleep(clock, 1, c.signal).catch((e) => e)).toBeInstanceOf(RoutineStopped);
  });

  test("untilStopped passes a result or error through, and gives up on a call still pending at abort", async () => {
    const c = new AbortController();
    expect(await untilStopped(Promise.resolve(7), c.signal)).toBe(7);
    expect(await untilStopped(Promise.reject(new Error("x")), c.signal).catch((e: Error) => e.message)).toBe("x");
    const pending = untilStopped(new Promise(() => {}), c.signal).catch((e) => e);
    c.abort();
    expect(await pending).toBeInstanceOf(RoutineStopped);
  });

  test("an abortable loop runs once per start, ends quietly on stop, reports a crash and may start again", async () => {
    const crashes: unknown[] = [];
    let runs = 0;
    let crash = false;
    const loop = abortableLoop(async (signal) => {
      runs++;
      if (crash) throw new Error("bug");
      await untilStopped(new Promise(() => {}), signal);
    }, (err) => crashes.push(err));
    loop.start();
    loop.start();
    expect([runs, loop.running()]).toEqual([1, true]);
    loop.stop();
    await flushMacrotask();
    expect([loop.running(), crashes]).toEqual([false, []]);
    crash = true;
    loop.start();
    await flushMacrotask();
    expect([runs, loop.running(), (crashes[0] as Error).message]).toEqual([2, false, "bug"]);
  });
});
