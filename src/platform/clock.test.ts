import { describe, expect, test } from "bun:test";
import { systemClock } from "./clock.ts";

/** Real wait, independent of the clock under test. */
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Resolves once `cond()` holds, polling every few ms; rejects after `limitMs` (generous, to fail rather than hang). */
async function until(cond: () => boolean, limitMs = 5000): Promise<void> {
  const start = performance.now();
  while (!cond()) {
    if (performance.now() - start > limitMs) throw new Error(`condition not met within ${limitMs}ms`);
    await sleep(2);
  }
}

describe("systemClock", () => {
  test("now() is wall-clock epoch milliseconds", () => {
    const before = Date.now();
    const now = systemClock().now();
    const after = Date.now();
    expect(now).toBeGreaterThanOrEqual(before);
    expect(now).toBeLessThanOrEqual(after);
  });

  test("monotonic() never decreases over many reads, and advances across a real wait", async () => {
    const clock = systemClock();
    let prev = clock.monotonic();
    let decreases = 0;
    for (let i = 0; i < 100_000; i++) {
      const t = clock.monotonic();
      if (t < prev) decreases++;
      prev = t;
    }
    expect(decreases).toBe(0);
    const start = clock.monotonic();
    await sleep(15);
    expect(clock.monotonic() - start).toBeGreaterThan(5);
  });

  test("setTimer fires once, not before about `ms`", async () => {
    const clock = systemClock();
    const start = clock.monotonic();
    let fired = 0;
    let at = 0;
    clock.setTimer(20, () => {
      fired++;
      at = clock.monotonic();
    });
    await until(() => fired > 0);
    // Runtimes round timer deadlines to whole milliseconds and may fire a little early; allow 5 ms.
    expect(at - start).toBeGreaterThanOrEqual(15);
    await sleep(30);
    expect(fired).toBe(1);
  });

  test("a negative delay fires like zero", async () => {
    let fired = false;
    systemClock().setTimer(-50, () => { fired = true; });
    await until(() => fired);
    expect(fired).toBe(true);
  });

  test("a cancelled timer never fires", async () => {
    const clock = systemClock();
    let fired = 0;
    const cancel = clock.setTimer(5, () => fired++);
    cancel();
    const cancelledAtOnce = clock.setTimer(0, () => fired++);
    cancelledAtOnce();
    // A later timer that does fire proves enough time passed for the cancelled ones.
    let sentinel = false;
    clock.setTimer(40, () => { sentinel = true; });
    await until(() => sentinel);
    await sleep(10);
    expect(fired).toBe(0);
  });

  test("cancelling twice, or after the timer fired, is a no-op", async () => {
    const clock = systemClock();
    let fired = 0;
    const cancel = clock.setTimer(1, () => fired++);
    await until(() => fired > 0);
    expect(() => { cancel(); cancel(); }).not.toThrow();
    const other = clock.setTimer(5, () => {});
    expect(() => { other(); other(); }).not.toThrow();
    expect(fired).toBe(1);
  });

  test("setInterval fires repeatedly, then never again once cancelled", async () => {
    const clock = systemClock();
    let ticks = 0;
    const cancel = clock.setInterval(5, () => ticks++);
    await until(() => ticks >= 3);
    cancel();
    const atCancel = ticks;
    await sleep(40);
    expect(ticks).toBe(atCancel);
    expect(() => cancel()).not.toThrow();
  });

  test("setInterval can be cancelled from inside its own callback", async () => {
    const clock = systemClock();
    let ticks = 0;
    const cancel = clock.setInterval(2, () => {
      ticks++;
      if (ticks === 2) cancel();
    });
    await until(() => ticks >= 2);
    await sleep(30);
    expect(ticks).toBe(2);
  });

  test("setInterval with 0 ms still ticks (clamped to 1 ms) and stops when cancelled", async () => {
    const clock = systemClock();
    let ticks = 0;
    const cancel = clock.setInterval(0, () => ticks++);
    await until(() => ticks >= 3);
    cancel();
    const atCancel = ticks;
    await sleep(20);
    expect(ticks).toBe(atCancel);
  });
});

describe("systemClock long delays", () => {
  test("a delay beyond the runtime timer limit does not fire early", async () => {
    const clock = systemClock();
    let fired = false;
    const cancel = clock.setTimer(2 ** 31 + 1000, () => (fired = true));
    await new Promise((r) => setTimeout(r, 30));
    expect(fired).toBe(false);
    cancel();
  });
});
