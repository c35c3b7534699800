import { describe, expect, test } from "bun:test";
import { formatGoTime } from "../connect/index.ts";
import { isRfc3339, type CheckServiceNode, type FederationState } from "../model/index.ts";
import { gateway, state } from "../model/federation_state_fixtures.test.ts";
import { silentLogger } from "../platform/index.ts";
import type { StateCommand } from "../state/index.ts";
import { runSimTimers, simClock } from "../../test/harness/sim_clock.ts";
import { federationStateAntiEntropyRoutine, federationStatePruneRoutine, type AntiEntropyRead } from "./leader_federation_ae.ts";

interface Read {
  readonly minIndex: number;
  readonly at: number;
  readonly signal: AbortSignal;
  resolve(r: AntiEntropyRead): void;
  reject(e: Error): void;
}

/**
 * An anti-entropy routine over fakes: reads wait for the test unless `auto` answers them at once
 * (called with the read's number), applies are recorded with the datacenter they were sent to.
 */
function setup(o: { localDc?: string; primaryDc?: string; auto?: (n: number) => AntiEntropyRead; failApply?: () => boolean } = {}) {
  const clock = simClock();
  const reads: Read[] = [];
  const applied: { at: number; cmd: StateCommand; dc: string | undefined }[] = [];
  let supported = true;
  let gateChecks = 0;
  const routine = federationStateAntiEntropyRoutine({
    localDc: o.localDc ?? "dc2",
    primaryDc: o.primaryDc ?? "dc1",
    supported: () => {
      gateChecks++;
      return supported;
    },
    readLocal: (minIndex, signal) => {
      const at = clock.monotonic();
      if (o.auto) {
        const r = o.auto(reads.length);
        reads.push({ minIndex, at, signal, resolve: () => {}, reject: () => {} });
        return Promise.resolve(r);
      }
      return new Promise((resolve, reject) => reads.push({ minIndex, at, signal, resolve, reject }));
    },
    apply: async (cmd, dc) => {
      applied.push({ at: clock.monotonic(), cmd, dc });
      if (o.failApply?.()) throw new Error("No path to datacenter");
    },
    clock,
    logger: silentLogger(),
  });
  const untilRead = (ms: number) => {
    const n = reads.length;
    return runSimTimers(clock, ms, () => reads.length > n);
  };
  return {
    clock, routine, reads, applied, untilRead,
    run: (ms: number) => runSimTimers(clock, ms),
    last: () => reads[reads.length - 1]!,
    setSupported: (v: boolean) => void (supported = v),
    gateChecks: () => gateChecks,
  };
}

const gw = (node: string): CheckServiceNode => gateway({ Node: node });
const read = (index: number, stored: FederationState | null, gateways: CheckServiceNode[]): AntiEntropyRead => ({ index, stored, gateways });

describe("federation-state anti-entropy (every datacenter's leader)", () => {
  test("skips when the stored record has the same gateways (UpdatedAt and indexes ignored), then blocks from the read's index", async () => {
    const t = setup();
    t.routine.start();
    await t.run(0);
    expect(t.reads.map((r) => r.minIndex)).toEqual([0]);
    t.last().resolve(read(9, state({ Datacenter: "dc2", MeshGateways: [gw("a")], UpdatedAt: "2019-01-01T00:00:00Z", ModifyIndex: 3 }), [gw("a")]));
    await t.untilRead(60_000);
    expect(t.applied).toEqual([]);
    expect(t.last().minIndex).toBe(9);
    t.routine.stop();
  });

  test("a secondary sends a changed record to the primary, stamped with UpdatedAt now (RFC 3339 UTC)", async () => {
    const t = setup({ localDc: "dc2", primaryDc: "dc1" });
    t.routine.start();
    await t.run(0);
    t.clock.advance(1234);
    t.last().resolve(read(9, state({ Datacenter: "dc2", MeshGateways: [gw("a")] }), [gw("a"), gw("b")]));
    await t.run(0);
    expect(t.applied.length).toBe(1);
    const { cmd, dc } = t.applied[0]!;
    expect(dc).toBe("dc1");
    const now = formatGoTime(t.clock.now());
    expect(cmd).toEqual({
      type: "federation-state", op: "upsert",
      state: { Datacenter: "dc2", MeshGateways: [gw("a"), gw("b")], UpdatedAt: now, PrimaryModifyIndex: 0 },
    });
    expect(now).toBe("2023-11-14T22:13:21.234Z");
    expect(isRfc3339(now)).toBe(true);
    t.routine.stop();
  });

  test("the primary applies its own record locally; with no gateways and none stored it still writes one (no MeshGateways)", async () => {
    const t = setup({ localDc: "dc1", primaryDc: "dc1" });
    t.routine.start();
    await t.run(0);
    t.last().resolve(read(4, null, []));
    await t.run(0);
    expect(t.applied.map((a) => [a.dc, a.cmd])).toEqual([
      [undefined, { type: "federation-state", op: "upsert", state: { Datacenter: "dc1", UpdatedAt: formatGoTime(t.clock.now()), PrimaryModifyIndex: 0 } }],
    ]);
    t.routine.stop();
  });

  test("syncs at most once every 5 s however often the read wakes", async () => {
    let n = 0;
    const t = setup({ auto: () => read(++n, null, [gw(`gw${n}`)]) });
    t.routine.start();
    await t.run(16_000);
    expect(t.reads.map((r) => r.at)).toEqual([0, 5000, 10_000, 15_000]);
    expect(t.reads.map((r) => r.minIndex)).toEqual([0, 1, 2, 3]);
    expect(t.applied.map((a) => a.at)).toEqual([0, 5000, 10_000, 15_000]);
    t.routine.stop();
    expect(t.clock.pending()).toBe(0);
  });

  test("errors back off 2, 4, 8 s... up to 256 s; a success resets the back-off and the next sync waits the 5 s", async () => {
    let failing = true;
    const t = setup({ auto: (n) => read(n + 1, null, [gw("a")]), failApply: () => failing });
    t.routine.start();
    await t.run(1_200_000);
    const gaps = t.reads.slice(1).map((r, i) => r.at - t.reads[i]!.at);
    expect(gaps.slice(0, 10)).toEqual([2000, 4000, 8000, 16_000, 32_000, 64_000, 128_000, 256_000, 256_000, 256_000]);
    // After a failed write the read does not advance: the record is written again at the next try.
    expect(t.reads.every((r) => r.minIndex === 0)).toBe(true);
    failing = false;
    const n = t.reads.length;
    await t.run(300_000);
    const [ok, next] = [t.reads[n]!, t.reads[n + 1]!];
    expect(next.at - ok.at).toBe(5000);
    // The successful read answered index n + 1 (see auto); the next one blocks from it.
    expect([ok.minIndex, next.minIndex]).toEqual([0, n + 1]);
    t.routine.stop();
  });

  test("a failed read backs off as well", async () => {
    const t = setup();
    t.routine.start();
    await t.run(0);
    t.last().reject(new Error("no leader"));
    await t.untilRead(10_000);
    expect(t.reads.map((r) => r.at)).toEqual([0, 2000]);
    expect(t.applied).toEqual([]);
    t.routine.stop();
  });

  test("while the ft_fs gate is closed nothing is read; it is checked again every 5 s", async () => {
    const t = setup();
    t.setSupported(false);
    t.routine.start();
    await t.run(12_000);
    expect(t.reads).toEqual([]);
    expect(t.gateChecks()).toBe(3);
    t.setSupported(true);
    await t.untilRead(10_000);
    expect(t.reads.map((r) => r.at)).toEqual([15_000]);
    t.routine.stop();
  });

  test("stop aborts the blocking read and leaves no timer; a new leadership reads from index 0", async () => {
    const t = setup();
    t.routine.start();
    await t.run(0);
    const first = t.last();
    first.resolve(read(9, null, [gw("a")]));
    await t.run(0);
    await t.untilRead(10_000);
    const blocking = t.last();
    expect(blocking.minIndex).toBe(9);
    t.routine.stop();
    expect(blocking.signal.aborted).toBe(true);
    expect(t.clock.pending()).toBe(0);
    blocking.resolve(read(12, null, [gw("b")]));
    await t.run(1000);
    expect(t.applied.length).toBe(1);
    t.routine.start();
    await t.run(0);
    expect(t.last().minIndex).toBe(0);
    t.routine.stop();
    // Stopped while waiting out the 5 s between syncs.
    t.routine.start();
    await t.run(0);
    t.last().resolve(read(3, null, []));
    await t.run(100);
    expect(t.clock.pending()).toBe(1);
    t.routine.stop();
    expect(t.clock.pending()).toBe(0);
  });
});

describe("federation-state pruning (primary's leader)", () => {
  function prune(o: { known?: () => readonly string[]; fail?: (dc: string) => boolean } = {}) {
    const clock = simClock();
    const states = new Map(["dc1", "dc2", "dc3", "dc4"].map((dc) => [dc, state({ Datacenter: dc })]));
    const deleted: { at: number; dc: string }[] = [];
    const routine = federationStatePruneRoutine({
      localDc: "dc1",
      localStates: () => [...states.values()],
      knownDatacenters: o.known ?? (() => ["dc2"]),
      apply: async (cmd) => {
        if (cmd.type !== "federation-state" || cmd.op !== "delete") throw new Error("unexpected command");
        deleted.push({ at: clock.monotonic(), dc: cmd.datacenter });
        if (o.fail?.(cmd.datacenter)) throw new Error("not leader");
        states.delete(cmd.datacenter);
      },
      clock,
      logger: silentLogger(),
    });
    return { clock, routine, deleted, states, run: (ms: number) => runSimTimers(clock, ms) };
  }

  test("every hour, deletes the states of datacenters the WAN no longer knows, never the local one", async () => {
    const t = prune();
    t.routine.start();
    await t.run(3_599_999);
    expect(t.deleted).toEqual([]);
    await t.run(1);
    expect(t.deleted).toEqual([{ at: 3_600_000, dc: "dc3" }, { at: 3_600_000, dc: "dc4" }]);
    expect([...t.states.keys()]).toEqual(["dc1", "dc2"]);
    t.routine.stop();
    expect(t.clock.pending()).toBe(0);
  });

  test("nothing is pruned while the known datacenters cannot be read; a failed delete ends that tick's pass", async () => {
    const t = prune({ known: () => { throw new Error("The WAN pool is not running yet"); } });
    t.routine.start();
    await t.run(3_600_000);
    expect(t.deleted).toEqual([]);
    t.routine.stop();
    let failing = true;
    const u = prune({ fail: (dc) => failing && dc === "dc3" });
    u.routine.start();
    await u.run(3_600_000);
    expect(u.deleted.map((d) => d.dc)).toEqual(["dc3"]);
    failing = false;
    await u.run(3_600_000);
    expect(u.deleted.map((d) => d.dc)).toEqual(["dc3", "dc3", "dc4"]);
    u.routine.stop();
  });
});
