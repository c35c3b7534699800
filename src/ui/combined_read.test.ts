import { describe, expect, test } from "bun:test";
import { systemClock } from "../platform/index.ts";
import { flushMacrotask, runSimTimers, simClock } from "../../test/harness/sim_clock.ts";
import { combinedBlockingRead, readParts, type PartRead } from "./combined_read.ts";

/** A part whose index the test moves; blocking reads wait for a move past their minIndex (or their abort). */
function movable(start: number) {
  let index = start;
  let wake: (() => void)[] = [];
  const read: PartRead<number> = async (w) => {
    if (w && w.minIndex === index) {
      await new Promise<void>((r) => { wake.push(r); w.signal.addEventListener("abort", () => r()); });
    }
    return { value: index, index };
  };
  return { read, move(to: number) { index = to; const w = wake; wake = []; for (const f of w) f(); } };
}

describe("combined blocking reads", () => {
  test("the combined index is the sum; a failing part counts 0 and carries its error", async () => {
    const r = await readParts<number>([async () => ({ value: 1, index: 10 }), async () => { throw new Error("No path to datacenter"); }, async () => ({ value: 3, index: 5 })]);
    expect(r.index).toBe(15);
    expect(r.value[1]).toEqual({ ok: false, error: "No path to datacenter", index: 0 });
  });

  test("answers at once when the sum differs from minIndex; otherwise when any part moves", async () => {
    const a = movable(10), b = movable(20);
    const plan = async () => ({ parts: [a.read, b.read], view: (rs: readonly { ok: boolean }[]) => rs.length });
    const signal = new AbortController().signal;
    expect((await combinedBlockingRead({ plan, minIndex: 0, maxWaitMs: 60_000, signal, clock: systemClock() })).index).toBe(30);
    const waiting = combinedBlockingRead({ plan, minIndex: 30, maxWaitMs: 60_000, signal, clock: systemClock() });
    let done = false;
    void waiting.then(() => (done = true));
    for (let i = 0; i < 5; i++) await flushMacrotask();
    expect(done).toBe(false);
    b.move(21);
    expect((await waiting).index).toBe(31);
  });

  test("with a failing part, a blocking wait ends after retryMs so it is tried again; an abort ends it at once", async () => {
    const a = movable(10);
    let fail = true;
    const flaky: PartRead<number> = async () => { if (fail) throw new Error("down"); return { value: 1, index: 7 }; };
    const plan = async () => ({ parts: [a.read, flaky], view: () => "v" });
    const clock = simClock();
    let result: number | undefined;
    void combinedBlockingRead({ plan, minIndex: 10, maxWaitMs: 60_000, signal: new AbortController().signal, clock, retryMs: 20 }).then((r) => (result = r.index));
    // The first read saw the part fail (sum 10): the wait is on the retry timer, not on the part.
    for (let i = 0; i < 5; i++) await flushMacrotask();
    expect(clock.pending()).toBe(1);
    fail = false;
    await runSimTimers(clock, 19);
    expect(result).toBeUndefined();
    await runSimTimers(clock, 1, () => result !== undefined);
    expect(result).toBe(17);
    const stop = new AbortController();
    const aborted = combinedBlockingRead({ plan: async () => ({ parts: [a.read], view: () => "v" }), minIndex: 10, maxWaitMs: 60_000, signal: stop.signal, clock: systemClock() });
    stop.abort();
    expect((await aborted).index).toBe(10);
  });
});
