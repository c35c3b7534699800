import { describe, expect, test } from "bun:test";
import { seededRng, silentLogger } from "../platform/index.ts";
import { MetricsRegistry } from "../telemetry/index.ts";
import { runSimTimers, simClock } from "../../test/harness/sim_clock.ts";
import { simNetwork } from "../../test/harness/sim_network.ts";
import { memoryLogStore } from "../../test/harness/memory_log_store.ts";
import { encodeKvCommand, kvStateMachine } from "../../test/harness/kv_state_machine.ts";
import { createConsensusNode } from "./index.ts";

/** The series `consul.<name>` of a registry: a counter's total, a sample's count and sum, a gauge's value. */
function metric(r: MetricsRegistry, name: string) {
  const s = r.series().find((x) => x.name === `consul.${name}`);
  return { total: s?.total ?? 0, count: s?.count ?? 0, value: s?.value ?? 0 };
}

describe("consensus node metrics", () => {
  test("raft.apply counts the commands the leader appended; commit, apply, store and contact timings; roles; indexes", async () => {
    const clock = simClock();
    const rng = seededRng(11);
    const net = simNetwork(clock, rng);
    const ids = ["n1", "n2", "n3"];
    const registries = ids.map(() => new MetricsRegistry({ now: () => clock.now() }));
    const nodes = ids.map((id, i) => createConsensusNode({
      id, clock, rng, logger: silentLogger(), log: memoryLogStore(), transport: net.transport(id), stateMachine: kvStateMachine(), bootstrapVoters: ids, tickMs: 10,
      metrics: registries[i]!,
    }));
    for (const n of nodes) await n.start();
    await runSimTimers(clock, 1000);
    const li = nodes.findIndex((n) => n.status().role === "Leader");
    expect(li).toBeGreaterThanOrEqual(0);
    const leader = registries[li]!;
    const follower = nodes.findIndex((_, i) => i !== li);
    const done: Promise<unknown>[] = [];
    for (let i = 0; i < 10; i++) done.push(nodes[li]!.propose(encodeKvCommand({ op: "put", key: `k${i}`, value: "v" })));
    for (let i = 0; i < 5; i++) done.push(nodes[follower]!.propose(encodeKvCommand({ op: "put", key: `f${i}`, value: "v" })));
    await runSimTimers(clock, 500);
    await Promise.all(done);

    expect(metric(leader, "raft.apply").total).toBe(15);
    expect(registries.filter((r, i) => i !== li).every((r) => metric(r, "raft.apply").total === 0)).toBe(true);
    expect(metric(leader, "raft.state.leader").total).toBe(1);
    expect(registries.map((r) => metric(r, "server.isLeader").value)).toEqual(ids.map((_, i) => (i === li ? 1 : 0)));
    expect(metric(leader, "raft.state.candidate").total).toBeGreaterThanOrEqual(1);
    expect(registries.reduce((n, r) => n + metric(r, "raft.state.leader").total, 0)).toBe(1);
    for (const r of registries) expect(metric(r, "raft.fsm.apply").count).toBe(15);
    expect(metric(leader, "raft.commitTime").count).toBeGreaterThanOrEqual(1);
    expect(metric(leader, "raft.commitTime").total).toBeGreaterThan(0); // the simulated network takes time
    expect(metric(registries[follower]!, "raft.commitTime").count).toBe(0);
    expect(metric(leader, "raft.leader.dispatchNumLogs").total).toBeGreaterThanOrEqual(16); // the new term's empty entry too
    expect(metric(registries[follower]!, "raft.rpc.appendEntries.storeLogs").count).toBeGreaterThanOrEqual(1);
    expect(metric(registries[follower]!, "raft.logstore.sync").count).toBeGreaterThanOrEqual(1);
    expect(metric(leader, "raft.leader.lastContact").count).toBeGreaterThanOrEqual(2);
    expect(metric(leader, "raft.commitNumLogs").total).toBe(nodes[li]!.status().applied - 1); // all but the bootstrap snapshot
    expect(metric(leader, "raft.applied_index").value).toBe(nodes[li]!.status().applied);
    expect(metric(leader, "raft.last_index").value).toBe(nodes[li]!.status().applied);
  });
});
