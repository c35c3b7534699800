import { describe, expect, test } from "bun:test";
import type { FederationState } from "../model/index.ts";
import { state } from "../model/federation_state_fixtures.test.ts";
import { memoryLogger, seededRng, silentLogger, type Logger } from "../platform/index.ts";
import { AbortError } from "../rpc/index.ts";
import type { StateCommand } from "../state/index.ts";
import { MetricsRegistry } from "../telemetry/index.ts";
import { flushMacrotask, runSimTimers, simClock } from "../../test/harness/sim_clock.ts";
import { federationStateReplicationRoutine, type RemoteFederationStates } from "./leader_federation_replication.ts";

interface Fetch {
  readonly minIndex: number;
  readonly at: number;
  /** The signal the routine passed: stop() aborts it. */
  readonly signal: AbortSignal;
  resolve(r: RemoteFederationStates): void;
  reject(e: Error): void;
}

const remote = (index: number, states: Partial<FederationState>[]): RemoteFederationStates =>
  ({ index, states: states.map((s) => state({ CreateIndex: 1, ...s })) });

/**
 * A replication routine over fakes: fetches wait for the test (or answer `auto` at once), applies
 * write a local map (Raft indexes from 100 up) and may fail.
 */
function setup(o: { seed?: number; local?: Partial<FederationState>[]; auto?: RemoteFederationStates; failApply?: (cmd: StateCommand) => boolean; logger?: Logger } = {}) {
  const seed = o.seed ?? 1;
  const clock = simClock();
  const fetches: Fetch[] = [];
  const applied: { at: number; cmd: StateCommand }[] = [];
  const results: boolean[] = [];
  let supported = true;
  let raftIndex = 100;
  const local = new Map<string, FederationState>((o.local ?? []).map((s) => [s.Datacenter!, state(s)]));
  const metrics = new MetricsRegistry({ now: () => clock.now() });
  const gauge = (name: string) => metrics.series().find((x) => x.name === `consul.leader.replication.federation-state.${name}`)?.value;
  const routine = federationStateReplicationRoutine({
    metrics: { status: metrics.gauge("leader.replication.federation-state.status"), index: metrics.gauge("leader.replication.federation-state.index") },
    supported: () => supported,
    fetchRemote: (minIndex, signal) => {
      if (o.auto) {
        fetches.push({ minIndex, at: clock.monotonic(), signal, resolve: () => {}, reject: () => {} });
        return Promise.resolve(o.auto);
      }
      return new Promise((resolve, reject) => fetches.push({ minIndex, at: clock.monotonic(), signal, resolve, reject }));
    },
    localStates: () => [...local.values()],
    apply: async (cmd) => {
      applied.push({ at: clock.monotonic(), cmd });
      if (o.failApply?.(cmd)) throw new Error("raft apply failed");
      if (cmd.type !== "federation-state") throw new Error(`unexpected ${cmd.type}`);
      raftIndex++;
      if (cmd.op === "delete") local.delete(cmd.datacenter);
      else local.set(cmd.state.Datacenter, { ...cmd.state, CreateIndex: raftIndex, ModifyIndex: raftIndex });
    },
    onResult: (ok) => results.push(ok),
    clock,
    rng: seededRng(seed),
    logger: o.logger ?? silentLogger(),
  });
  const run = (ms: number) => runSimTimers(clock, ms);
  /** Runs until the next fetch starts (at most `ms`), so a test can answer it at the time it is made. */
  const untilFetch = (ms: number) => {
    const n = fetches.length;
    return runSimTimers(clock, ms, () => fetches.length > n);
  };
  const summary = () => applied.map(({ at, cmd }) =>
    cmd.type === "federation-state" ? `${at} ${cmd.op} ${cmd.op === "delete" ? cmd.datacenter : `${cmd.state.Datacenter}@${cmd.state.PrimaryModifyIndex}`}` : cmd.type);
  return {
    clock, routine, fetches, applied, results, local, run, untilFetch, summary, seed, gauge,
    setSupported: (v: boolean) => void (supported = v),
    last: () => fetches[fetches.length - 1]!,
  };
}

describe("federation-state replication (secondary leader)", () => {
  test("applies the primary's states: deletions first, then upserts with PrimaryModifyIndex, at most 100 applies/s", async () => {
    const t = setup({ local: [{ Datacenter: "dc3" }, { Datacenter: "dc4" }, { Datacenter: "dc2", ModifyIndex: 3 }] });
    t.routine.start();
    await t.run(0);
    expect(t.fetches.map((f) => f.minIndex)).toEqual([0]);
    t.last().resolve(remote(12, [{ Datacenter: "dc1", ModifyIndex: 10 }, { Datacenter: "dc2", ModifyIndex: 12 }]));
    await t.run(1000);
    // Each list is paced by its own 10 ms ticker, with no wait after a list's last write (PerformDeletions/Updates).
    expect(t.summary()).toEqual(["0 delete dc3", "10 delete dc4", "10 upsert dc1@10", "20 upsert dc2@12"]);
    const upsert = t.applied[2]!.cmd;
    expect(upsert.type === "federation-state" && upsert.op === "upsert" && Object.keys(upsert.state).sort()).toEqual(
      ["Datacenter", "MeshGateways", "PrimaryModifyIndex", "UpdatedAt"],
    );
    expect(t.results).toEqual([true]);
    expect(t.routine.lastRemoteIndex()).toBe(12);
    // The next round blocks from the remote index just synced.
    expect(t.fetches.map((f) => f.minIndex)).toEqual([0, 12]);
    t.routine.stop();
  });

  test("a later round rewrites only states changed since the last remote index; an index going back forces a full resync", async () => {
    const t = setup();
    t.routine.start();
    await t.run(0);
    t.last().resolve(remote(12, [{ Datacenter: "dc1", ModifyIndex: 10 }, { Datacenter: "dc2", ModifyIndex: 12 }]));
    await t.run(100);
    t.applied.length = 0;
    t.last().resolve(remote(15, [{ Datacenter: "dc1", ModifyIndex: 10 }, { Datacenter: "dc2", ModifyIndex: 15 }]));
    await t.run(100);
    expect(t.summary().map((s) => s.split(" ").slice(1).join(" "))).toEqual(["upsert dc2@15"]);
    expect(t.last().minIndex).toBe(15);
    t.applied.length = 0;
    // The primary was rebuilt: its index is below ours, so every state is rewritten.
    t.last().resolve(remote(7, [{ Datacenter: "dc1", ModifyIndex: 5 }, { Datacenter: "dc2", ModifyIndex: 7 }]));
    await t.run(100);
    expect(t.summary().map((s) => s.split(" ").slice(1).join(" "))).toEqual(["upsert dc1@5", "upsert dc2@7"]);
    expect(t.last().minIndex).toBe(7);
    expect(t.results).toEqual([true, true, true]);
    t.routine.stop();
  });

  test("a failed fetch reports false, forces a full sync and retries after 1, 2, 4 s (+ up to 10%), reset by a success", async () => {
    for (const seed of [1, 7, 42]) {
      const t = setup({ seed });
      t.routine.start();
      await t.run(0);
      t.last().resolve(remote(12, [{ Datacenter: "dc1", ModifyIndex: 10 }]));
      await t.run(10);
      for (let i = 0; i < 3; i++) {
        t.last().reject(new Error("rpc error: no path to datacenter"));
        await t.untilFetch(10_000);
      }
      const gaps = t.fetches.slice(2).map((f, i) => f.at - t.fetches[i + 1]!.at);
      expect(gaps.length, `seed ${seed}`).toBe(3);
      [1000, 2000, 4000].forEach((ms, i) => {
        expect(gaps[i]!, `seed ${seed}`).toBeGreaterThanOrEqual(ms);
        expect(gaps[i]!, `seed ${seed}`).toBeLessThan(ms * 1.1);
      });
      expect(t.fetches[1]!.at).toBe(0);
      expect(t.fetches.slice(2).map((f) => f.minIndex)).toEqual([0, 0, 0]);
      expect(t.results).toEqual([true, false, false, false]);
      expect(t.routine.lastRemoteIndex()).toBe(0);
      expect([t.gauge("status"), t.gauge("index")]).toEqual([0, 12]); // the index of the last success
      // The full sync rewrites a state the primary did not change.
      t.applied.length = 0;
      const answeredAt = t.clock.monotonic();
      t.last().resolve(remote(12, [{ Datacenter: "dc1", ModifyIndex: 10 }]));
      await t.run(10);
      expect(t.summary().map((s) => s.split(" ").slice(1).join(" "))).toEqual(["upsert dc1@10"]);
      // A success resets the back-off: the next round starts at once.
      expect(t.last().at).toBe(answeredAt);
      expect(t.last().minIndex).toBe(12);
      expect(t.gauge("status")).toBe(1);
      t.routine.stop();
    }
  });

  test("the wait after failures is capped at 120 s (+ up to 10%)", async () => {
    const t = setup({ seed: 3 });
    t.routine.start();
    await t.run(0);
    for (let i = 0; i < 10; i++) {
      t.last().reject(new Error("down"));
      await t.untilFetch(200_000);
    }
    const gaps = t.fetches.slice(1).map((f, i) => f.at - t.fetches[i]!.at);
    expect(gaps.slice(7).every((g) => g >= 120_000 && g < 132_000)).toBe(true);
    expect(gaps[6]).toBeGreaterThanOrEqual(64_000);
    expect(gaps[6]).toBeLessThan(70_400);
    t.routine.stop();
  });

  test("a failed apply ends the round: no result reported for it, the next round is a full sync after the retry wait", async () => {
    const t = setup({ failApply: (cmd) => cmd.type === "federation-state" && cmd.op === "upsert" && cmd.state.Datacenter === "dc2" });
    t.routine.start();
    await t.run(0);
    t.last().resolve(remote(12, [{ Datacenter: "dc1", ModifyIndex: 10 }, { Datacenter: "dc2", ModifyIndex: 12 }, { Datacenter: "dc3", ModifyIndex: 11 }]));
    await t.run(500);
    expect(t.summary()).toEqual(["0 upsert dc1@10", "10 upsert dc2@12"]);
    expect(t.results).toEqual([true]);
    expect(t.fetches.length).toBe(1);
    await t.run(1100);
    expect(t.fetches.map((f) => f.minIndex)).toEqual([0, 0]);
    t.routine.stop();
  });

  test("rounds are rate limited to 1/s after a burst of 5", async () => {
    const t = setup({ auto: remote(12, []) });
    t.routine.start();
    await t.run(4_500);
    expect(t.fetches.map((f) => f.at)).toEqual([0, 0, 0, 0, 0, 1000, 2000, 3000, 4000]);
    expect(t.fetches.every((f, i) => f.minIndex === (i === 0 ? 0 : 12))).toBe(true);
    t.routine.stop();
    expect(t.clock.pending()).toBe(0);
  });

  test("while the ft_fs gate is closed nothing is fetched or reported and rounds back off; once open, replication runs", async () => {
    const t = setup({ seed: 5 });
    t.setSupported(false);
    t.routine.start();
    await t.run(3_500);
    expect(t.fetches).toEqual([]);
    expect(t.results).toEqual([]);
    t.setSupported(true);
    // Failures at ~0, ~1 and ~3 s: the next round comes 4-4.4 s after the third.
    await t.run(5_000);
    expect(t.fetches.length).toBe(1);
    expect(t.fetches[0]!.at).toBeGreaterThanOrEqual(7_000);
    expect(t.fetches[0]!.at).toBeLessThan(7_700);
    t.routine.stop();
  });

  test("stop leaves no timer, ignores a fetch answered afterwards, and a new leadership starts with a full sync", async () => {
    const t = setup({ local: [{ Datacenter: "dc9" }] });
    t.routine.start();
    await t.run(0);
    t.last().resolve(remote(12, [{ Datacenter: "dc1", ModifyIndex: 10 }]));
    await t.run(100);
    const pendingFetch = t.last();
    t.routine.stop();
    expect(t.clock.pending()).toBe(0);
    t.applied.length = 0;
    pendingFetch.resolve(remote(20, [{ Datacenter: "dc2", ModifyIndex: 20 }]));
    await t.run(1000);
    expect(t.applied).toEqual([]);
    expect(t.results).toEqual([true]);
    t.routine.start();
    await t.run(0);
    expect(t.last().minIndex).toBe(0);
    // Stopped in the middle of a round's paced writes: the rest are not written.
    t.last().resolve(remote(30, [{ Datacenter: "dc1", ModifyIndex: 30 }, { Datacenter: "dc2", ModifyIndex: 30 }, { Datacenter: "dc3", ModifyIndex: 30 }]));
    await flushMacrotask();
    expect(t.applied.length).toBe(1);
    t.routine.stop();
    expect(t.clock.pending()).toBe(0);
    await t.run(1000);
    expect(t.applied.length).toBe(1);
    // Stopped during a retry wait.
    t.routine.start();
    await t.run(0);
    t.last().reject(new Error("down"));
    await flushMacrotask();
    expect(t.clock.pending()).toBe(1);
    t.routine.stop();
    expect(t.clock.pending()).toBe(0);
  });

  test("stop aborts the read in flight: its AbortError is no failed round, nothing is logged, applied or retried, no timer is left", async () => {
    const logger = memoryLogger("debug");
    const t = setup({ logger });
    t.routine.start();
    await t.run(0);
    t.last().resolve(remote(12, [{ Datacenter: "dc1", ModifyIndex: 10 }]));
    await t.run(100);
    const inFlight = t.last();
    expect(inFlight.minIndex).toBe(12);
    expect(inFlight.signal.aborted).toBe(false);
    logger.lines.length = 0;
    t.applied.length = 0;
    t.routine.stop();
    // The StateCaller cancels the read: its signal is aborted at once and the read rejects.
    expect(inFlight.signal.aborted).toBe(true);
    expect(t.clock.pending()).toBe(0);
    inFlight.reject(new AbortError());
    await t.run(300_000);
    expect(t.fetches.length).toBe(2);
    expect(t.results).toEqual([true]);
    expect(t.applied).toEqual([]);
    expect(logger.lines).toEqual([]);
    expect(t.clock.pending()).toBe(0);
    // A read that ignores its signal and answers after stop is not applied either (see above); a new
    // leadership reads with a fresh signal.
    t.routine.start();
    await t.run(0);
    expect([t.fetches.length, t.last().minIndex, t.last().signal.aborted]).toEqual([3, 0, false]);
    t.routine.stop();
    expect(t.last().signal.aborted).toBe(true);
  });
});
