import { describe, expect, test } from "bun:test";
import { runSimTimers, simClock } from "../../../../test/harness/sim_clock.ts";
import { AgentHttpError } from "../support/http_client.ts";
import { DecodeError, isRetryableError, type KvRead } from "./api.ts";
import { ABORTED, monitorHeld, untilAborted } from "./contender.ts";

describe("watching a held lock (monitorHeld)", () => {
  const reads = (answers: Array<KvRead<boolean> | Error>) => {
    const seen: bigint[] = [];
    const read = async (index: bigint) => {
      seen.push(index);
      const a = answers.shift();
      if (a === undefined) return new Promise<KvRead<boolean>>(() => {});
      if (a instanceof Error) throw a;
      return a;
    };
    return { read, seen };
  };

  test("reads on at the last index while held; resolves when not", async () => {
    const { read, seen } = reads([{ value: true, index: 5n }, { value: true, index: 6n }, { value: false, index: 7n }]);
    await monitorHeld(read, (v) => v, { clock: simClock(), monitorRetries: 0, monitorRetryMs: 1_000 }, new AbortController().signal);
    expect(seen).toEqual([0n, 5n, 6n]);
  });

  test("retries a 500 or a transport failure from index 0 after the pause; not a 403", async () => {
    const clock = simClock();
    const { read, seen } = reads([{ value: true, index: 5n }, new AgentHttpError(500, "x"), new Error('Get "u": connection refused'), { value: true, index: 8n }, new AgentHttpError(403, "no")]);
    let done = false;
    const watching = monitorHeld(read, (v) => v, { clock, monitorRetries: 2, monitorRetryMs: 1_000 }, new AbortController().signal).then(() => (done = true));
    await runSimTimers(clock, 1_999);
    expect([seen, done]).toEqual([[0n, 5n, 0n], false]);
    await runSimTimers(clock, 1);
    await watching;
    expect(seen).toEqual([0n, 5n, 0n, 0n, 8n]);
  });

  test("stops at once when aborted, even with a read pending", async () => {
    const stop = new AbortController();
    const { read } = reads([]);
    const watching = monitorHeld(read, () => true, { clock: simClock(), monitorRetries: 3, monitorRetryMs: 1_000 }, stop.signal);
    stop.abort();
    await watching;
  });

  test("api.IsRetryableError: a 500 or a transport failure; not another status, not a bad body", () => {
    expect([new AgentHttpError(500, ""), new Error('Get "u": connection refused'), new AgentHttpError(429, ""), new DecodeError("x")].map(isRetryableError)).toEqual([true, true, false, false]);
  });

  test("untilAborted: the value, the rejection, or ABORTED", async () => {
    const c = new AbortController();
    expect(await untilAborted(Promise.resolve(1), c.signal)).toBe(1);
    await expect(untilAborted(Promise.reject(new Error("x")), c.signal)).rejects.toThrow("x");
    const pending = untilAborted(new Promise(() => {}), c.signal);
    c.abort();
    expect(await pending).toBe(ABORTED);
    expect(await untilAborted(Promise.reject(new Error("ignored")), c.signal)).toBe(ABORTED);
  });
});
