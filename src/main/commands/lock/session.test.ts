import { describe, expect, test } from "bun:test";
import { flushMacrotask, runSimTimers, simClock, type SimClock } from "../../../../test/harness/sim_clock.ts";
import type { LockApi } from "./api.ts";
import { createRenewedSession } from "./session.ts";

/** A session API whose renew answers come from `renew` (called with the call number); records the calls. */
function sessionApi(renew: (n: number) => Promise<{ TTL: string } | undefined>) {
  const calls: string[] = [];
  let n = 0;
  const api = {
    createSession: async (entry: Record<string, string>) => (calls.push(`create ${JSON.stringify(entry)}`), "s1"),
    renewSession: (id: string) => (calls.push(`renew ${id}`), renew(++n)),
    destroySession: async (id: string) => void calls.push(`destroy ${id}`),
  } as unknown as LockApi;
  return { api, calls };
}

const run = (clock: SimClock, ms: number) => runSimTimers(clock, ms);

describe("the lock session's renewal (Session.RenewPeriodic)", () => {
  test("renews every TTL/2, then on the TTL the server answers; end() destroys the session once", async () => {
    const clock = simClock();
    const { api, calls } = sessionApi(async (n) => ({ TTL: n === 1 ? "40s" : "15s" }));
    const s = await createRenewedSession(api, clock, { Name: "n", TTL: "15s", Behavior: "delete" });
    expect(calls).toEqual(['create {"Behavior":"delete","Name":"n","TTL":"15s"}']);
    await run(clock, 7_500);
    expect(calls.length).toBe(2);
    await run(clock, 19_999);
    expect(calls.length).toBe(2);
    await run(clock, 1);
    expect(calls.length).toBe(3);
    await Promise.all([s.end(), s.end()]);
    expect(calls.slice(3)).toEqual(["destroy s1"]);
    await run(clock, 60_000);
    expect(calls.length).toBe(4);
  });

  test("a failed renewal is retried after 1s; a TTL without a renewal gives up (and end() then destroys nothing)", async () => {
    const clock = simClock();
    const { api, calls } = sessionApi(async () => Promise.reject(new Error("connection refused")));
    const s = await createRenewedSession(api, clock, { Name: "n", TTL: "15s" });
    await run(clock, 60_000);
    // At 7.5s, then every second until 15s have passed since the session was made.
    expect(calls.filter((c) => c.startsWith("renew")).length).toBe(9);
    await s.end();
    expect(calls.some((c) => c.startsWith("destroy"))).toBe(false);
  });

  test("a session the server no longer knows (404) stops the renewals", async () => {
    const clock = simClock();
    const { api, calls } = sessionApi(async () => undefined);
    const s = await createRenewedSession(api, clock, { Name: "n", TTL: "15s" });
    await run(clock, 60_000);
    await s.end();
    expect(calls).toEqual(['create {"Name":"n","TTL":"15s"}', "renew s1"]);
  });

  test("end() during a renewal in flight destroys the session after it", async () => {
    const clock = simClock();
    let answer!: (v: { TTL: string }) => void;
    const { api, calls } = sessionApi(() => new Promise((r) => (answer = r)));
    const s = await createRenewedSession(api, clock, { Name: "n", TTL: "15s" });
    await run(clock, 7_500);
    const ended = s.end();
    await flushMacrotask();
    expect(calls.at(-1)).toBe("renew s1");
    answer({ TTL: "15s" });
    await ended;
    expect(calls.at(-1)).toBe("destroy s1");
  });

  test("a refused create is `failed to create session: ...`", async () => {
    const api = { createSession: async () => Promise.reject(new Error("Unexpected response code: 500 (no leader)")) } as unknown as LockApi;
    await expect(createRenewedSession(api, simClock(), { Name: "n", TTL: "15s" })).rejects.toThrow("failed to create session: Unexpected response code: 500 (no leader)");
  });
});
