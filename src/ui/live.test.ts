import { describe, expect, test } from "bun:test";
import { runSimTimers, simClock } from "../../test/harness/sim_clock.ts";
import { runLiveTopic, type LivePush } from "./live.ts";

/** A state whose blocking reads answer when its index passes theirs (or at once with minIndex 0). */
function fakeState(clock: ReturnType<typeof simClock>) {
  let index = 10;
  let waiters: (() => void)[] = [];
  return {
    set(i: number) {
      index = i;
      const w = waiters;
      waiters = [];
      for (const f of w) f();
    },
    read: async (minIndex: number, _max: number, signal: AbortSignal) => {
      while (index <= minIndex && !signal.aborted && minIndex !== 0) {
        await new Promise<void>((resolve) => {
          waiters.push(resolve);
          signal.addEventListener("abort", () => resolve(), { once: true });
        });
      }
      return { value: index, index };
    },
    clock,
  };
}

describe("live topics", () => {
  test("a change after `since` is pushed with its index; a burst within 250 ms is one more push with the latest state", async () => {
    const clock = simClock();
    const state = fakeState(clock);
    const pushes: (LivePush & { at: number })[] = [];
    const stop = new AbortController();
    const running = runLiveTopic({
      topic: { read: state.read, render: (v) => `<p>${v}</p>` },
      since: 10, signal: stop.signal, clock,
      push: async (p) => void pushes.push({ ...p, at: clock.monotonic() }),
    });
    await runSimTimers(clock, 0);
    expect(pushes).toEqual([]);
    state.set(11);
    await runSimTimers(clock, 0, () => pushes.length === 1);
    expect(pushes.map((p) => [p.event, p.id, p.data])).toEqual([["fragment", "11", "<p>11</p>"]]);
    // Three changes in quick succession: the next push waits out the gap and carries the last one.
    state.set(12);
    state.set(13);
    await runSimTimers(clock, 100);
    state.set(14);
    await runSimTimers(clock, 1_000, () => pushes.length === 2);
    expect(pushes.map((p) => p.id)).toEqual(["11", "14"]);
    expect(pushes[1]!.at - pushes[0]!.at).toBeGreaterThanOrEqual(250);
    stop.abort();
    state.set(15);
    await running;
    expect(pushes).toHaveLength(2);
  });
});
