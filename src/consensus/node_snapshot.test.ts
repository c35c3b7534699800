/**
 * Snapshots taken off the loop (snapshot_taker.ts): the state is captured at the applied index, encoded
 * in slices while the node goes on committing, then written and recorded at the captured index.
 */
import { describe, expect, test } from "bun:test";
import { seededRng, silentLogger } from "../platform/index.ts";
import { runSimTimers, simClock, type SimClock } from "../../test/harness/sim_clock.ts";
import { simNetwork } from "../../test/harness/sim_network.ts";
import { memoryLogStore } from "../../test/harness/memory_log_store.ts";
import { encodeKvCommand, kvStateMachine } from "../../test/harness/kv_state_machine.ts";
import { createConsensusNode } from "./index.ts";

const runFor = (clock: SimClock, ms: number) => runSimTimers(clock, ms);

/** A single-server node whose state machine encodes its snapshot in `slices` pauses, logging what happens meanwhile. */
function slowSnapshotNode(seed: number, slices: number, onSlice: (i: number) => void = () => {}) {
  const clock = simClock();
  const sm = kvStateMachine();
  const store = memoryLogStore();
  const events: string[] = [];
  sm.snapshotInSlices = async (pause) => {
    const bytes = sm.snapshot(); // the capture: the state at the call
    const at = sm.lastIndex();
    events.push(`capture ${at}`);
    for (let i = 0; i < slices; i++) {
      await pause();
      events.push(`slice ${sm.lastIndex()}`);
      onSlice(i);
    }
    events.push("done");
    return [bytes.subarray(0, 3), bytes.subarray(3)];
  };
  const node = createConsensusNode({
    id: "n1", clock, rng: seededRng(seed), logger: silentLogger(), log: store, transport: simNetwork(clock, seededRng(seed + 1)).transport("n1"),
    stateMachine: sm, bootstrapVoters: ["n1"], tickMs: 10, snapshotEntries: 20, keepEntries: 2,
  });
  return { clock, sm, store, events, node };
}

describe("snapshots off the loop", () => {
  test("proposals commit while a snapshot is encoded; the recorded snapshot is the state at its capture", async () => {
    let acked = 0;
    let proposed = 0;
    const propose = () => {
      const i = proposed++;
      void n.node.propose(encodeKvCommand({ op: "put", key: `k${i % 30}`, value: `v${i}` })).then(() => acked++);
    };
    // Each slice of the encoding proposes once more: the loop must commit them between slices.
    const n = slowSnapshotNode(7, 40, propose);
    await n.node.start();
    await runFor(n.clock, 500);
    const bootstrap = n.store.snapshotIndex();
    for (let i = 0; i < 25; i++) {
      propose();
      await runFor(n.clock, 10);
    }
    await runFor(n.clock, 500);
    expect(acked).toBe(proposed);
    const captures = n.events.filter((e) => e.startsWith("capture")).map((e) => Number(e.split(" ")[1]));
    expect(captures.length).toBeGreaterThanOrEqual(2);
    // Entries were applied between the capture and the last slice of the first snapshot.
    const firstSlices = n.events.slice(1, 41).map((e) => Number(e.split(" ")[1]));
    expect(firstSlices.at(-1)!).toBeGreaterThan(captures[0]! + 30);
    // The log records the newest capture, not the applied index at the time it was written.
    expect(n.store.snapshotIndex()).toBe(captures.at(-1)!);
    expect(n.store.snapshotIndex()).toBeGreaterThan(bootstrap);
    expect(n.store.snapshotIndex()).toBeLessThan(n.node.status().applied);
    // Its bytes are the captured state: restoring them and replaying the log gives the live state.
    const saved = n.store.loadSnapshot()!;
    const replica = kvStateMachine();
    const { machine } = (await import("./proposals.ts")).decodeDriverSnapshot(saved.data);
    replica.restore(machine);
    expect(replica.lastIndex()).toBe(saved.meta.index);
    await n.node.stop();

    // A restart from the same log (snapshot plus the entries after it) reaches the same state.
    const again = createConsensusNode({
      id: "n1", clock: n.clock, rng: seededRng(99), logger: silentLogger(), log: n.store, transport: simNetwork(n.clock, seededRng(100)).transport("n1"),
      stateMachine: replica, tickMs: 10,
    });
    await again.start();
    await runFor(n.clock, 1000);
    expect(replica.snapshot()).toEqual(n.sm.snapshot());
    await again.stop();
  });

  test("at most one snapshot is encoded at a time", async () => {
    let proposed = 0;
    const n = slowSnapshotNode(11, 200, () => void n.node.propose(encodeKvCommand({ op: "put", key: `k${proposed++}`, value: "v" })));
    await n.node.start();
    await runFor(n.clock, 500);
    for (let i = 0; i < 25; i++) {
      void n.node.propose(encodeKvCommand({ op: "put", key: "first", value: `${i}` }));
      await runFor(n.clock, 10);
    }
    await runFor(n.clock, 1000);
    let open = 0;
    for (const e of n.events) {
      if (e.startsWith("capture")) open++;
      if (e === "done") open--;
      expect(open).toBeLessThanOrEqual(1);
    }
    // Each job's 200 slices commit 200 entries, so a new snapshot is due when it ends: jobs run back to back.
    expect(n.events.filter((e) => e.startsWith("capture")).length).toBeGreaterThanOrEqual(2);
    await n.node.stop();
  });
});
