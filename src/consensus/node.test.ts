import { describe, expect, test } from "bun:test";
import { seededRng, silentLogger } from "../platform/index.ts";
import { simClock } from "../../test/harness/sim_clock.ts";
import { simNetwork } from "../../test/harness/sim_network.ts";
import { memoryLogStore } from "../../test/harness/memory_log_store.ts";
import { encodeKvCommand, kvStateMachine } from "../../test/harness/kv_state_machine.ts";
import { addServerSafely, createConsensusNode, type ConsensusNode } from "./index.ts";
import type { KvResult } from "../../test/harness/kv_state_machine.ts";

/** Runs simulated time forward, letting promise chains settle after each timer. */
async function runFor(clock: ReturnType<typeof simClock>, ms: number): Promise<void> {
  const end = clock.monotonic() + ms;
  for (;;) {
    const next = clock.nextAt();
    if (next === undefined || next > end) break;
    clock.runNext();
    await new Promise<void>((r) => setImmediate(r));
  }
  clock.advance(end - clock.monotonic());
  await new Promise<void>((r) => setImmediate(r));
}

function cluster(n: number, seed: number) {
  const clock = simClock();
  const rng = seededRng(seed);
  const net = simNetwork(clock, rng);
  const ids = Array.from({ length: n }, (_, i) => `n${i + 1}`);
  const sms = ids.map(() => kvStateMachine());
  const stores = ids.map(() => memoryLogStore());
  const nodes: ConsensusNode<KvResult>[] = ids.map((id, i) =>
    createConsensusNode({ id, clock, rng, logger: silentLogger(), log: stores[i]!, transport: net.transport(id), stateMachine: sms[i]!, bootstrapVoters: ids, tickMs: 10 }),
  );
  return { clock, net, ids, sms, stores, nodes };
}

describe("consensus node", () => {
  test("three nodes elect one leader, replicate, and answer linearizable reads", async () => {
    const c = cluster(3, 1);
    for (const n of c.nodes) await n.start();
    await runFor(c.clock, 1000);
    const leaders = c.nodes.filter((n) => n.status().role === "Leader");
    expect(leaders.length).toBe(1);
    const leader = leaders[0]!;
    expect(c.nodes.every((n) => n.status().leader === leader.status().id)).toBe(true);

    const follower = c.nodes.find((n) => n !== leader)!;
    const results: KvResult[] = [];
    void leader.propose(encodeKvCommand({ op: "put", key: "a", value: "1" })).then((r) => results.push(r));
    void follower.propose(encodeKvCommand({ op: "cas", key: "a", expected: "1", value: "2" })).then((r) => results.push(r));
    await runFor(c.clock, 200);
    expect(results).toEqual([{ ok: true }, { ok: true }]);
    let read = false;
    void follower.read().then(() => (read = true));
    await runFor(c.clock, 200);
    expect(read).toBe(true);
    expect(c.sms.map((s) => s.get("a"))).toEqual(["2", "2", "2"]);
    const seqs = c.sms.map((s) => s.appliedLog.map((e) => `${e.index}:${e.command}`).join("|"));
    expect(new Set(seqs).size).toBe(1);
  });

  test("the proposer applies its own proposal with the very command object it was given", async () => {
    const c = cluster(3, 4);
    const seen: { server: number; index: number; command: Uint8Array }[] = [];
    c.sms.forEach((sm, server) => {
      const apply = sm.apply.bind(sm);
      sm.apply = (index, command) => (seen.push({ server, index, command }), apply(index, command));
    });
    for (const n of c.nodes) await n.start();
    await runFor(c.clock, 1000);
    const leader = c.nodes.find((n) => n.status().role === "Leader")!;
    const command = encodeKvCommand({ op: "put", key: "k", value: "v" });
    const done = leader.propose(command);
    await runFor(c.clock, 200);
    expect(await done).toEqual({ ok: true });
    const index = leader.status().applied;
    // Only the proposer's own state machine sees the same object; the others get the log's bytes.
    const atIndex = seen.filter((s) => s.index === index);
    expect(atIndex.length).toBe(3);
    expect(atIndex.filter((s) => s.command === command).map((s) => s.server)).toEqual([c.nodes.indexOf(leader)]);
    expect(atIndex.every((s) => new TextDecoder().decode(s.command) === new TextDecoder().decode(command))).toBe(true);
  });

  test("proposals arriving together share one fsync (group commit)", async () => {
    const c = cluster(1, 2);
    await c.nodes[0]!.start();
    await runFor(c.clock, 500);
    expect(c.nodes[0]!.status().role).toBe("Leader");
    const before = c.stores[0]!.fsyncs;
    const done = Array.from({ length: 64 }, (_, i) => c.nodes[0]!.propose(encodeKvCommand({ op: "put", key: `k${i}`, value: "v" })));
    await runFor(c.clock, 50);
    expect((await Promise.all(done)).every((r) => r.ok)).toBe(true);
    expect(c.stores[0]!.fsyncs - before).toBeLessThanOrEqual(2);
  });

  test("a proposal with no leader is dropped or times out, never hangs", async () => {
    const c = cluster(3, 3);
    await c.nodes[0]!.start(); // the others never start: no quorum
    const outcome = c.nodes[0]!.propose(encodeKvCommand({ op: "put", key: "x", value: "y" })).then(
      () => "applied",
      (e: Error) => e.name,
    );
    await runFor(c.clock, 6000);
    expect(["ProposalDroppedError", "ProposalTimeoutError"]).toContain(await outcome);
  });
});

describe("membership", () => {
  test("a new server joins as a learner and is promoted to voter once caught up", async () => {
    const c = cluster(3, 4);
    for (const n of c.nodes) await n.start();
    await runFor(c.clock, 1000);
    const leader = c.nodes.find((n) => n.status().role === "Leader")!;
    for (let i = 0; i < 20; i++) void leader.propose(encodeKvCommand({ op: "put", key: `k${i}`, value: "v" }));
    await runFor(c.clock, 200);

    const sm = kvStateMachine();
    const joiner = createConsensusNode({ id: "n4", clock: c.clock, rng: seededRng(44), logger: silentLogger(), log: memoryLogStore(), transport: c.net.transport("n4"), stateMachine: sm, tickMs: 10 });
    await joiner.start();
    const seen: string[] = [];
    let config: { voters: readonly string[]; learners: readonly string[] } | undefined;
    const adding = addServerSafely(leader, "n4", { clock: c.clock, pollMs: 10 }).then((cs) => (config = cs));
    // Watch the learner phase: n4 is a learner before it is a voter.
    for (let i = 0; i < 100 && !config; i++) {
      await runFor(c.clock, 10);
      const st = leader.status().config;
      if (st.learners.includes("n4")) seen.push("learner");
    }
    await adding;
    expect(seen.length).toBeGreaterThan(0);
    expect(config!.voters).toContain("n4");
    expect(config!.learners).not.toContain("n4");
    await runFor(c.clock, 200);
    expect(sm.get("k19")).toBe("v");
  });
});

describe("exactly-once apply", () => {
  test("proposals forwarded over a network that duplicates every message are applied once", async () => {
    const c = cluster(3, 5);
    for (const n of c.nodes) await n.start();
    await runFor(c.clock, 1000);
    c.net.faults = { ...c.net.faults, duplicate: 1 };
    const follower = c.nodes.find((n) => n.status().role !== "Leader")!;
    const done = Array.from({ length: 10 }, (_, i) => follower.propose(encodeKvCommand({ op: "put", key: `k${i}`, value: `v${i}` })));
    await runFor(c.clock, 300);
    expect((await Promise.all(done)).every((r) => r.ok)).toBe(true);
    for (const sm of c.sms) {
      const puts = sm.appliedLog.map((e) => e.command);
      expect(new Set(puts).size).toBe(puts.length);
      expect(puts.length).toBe(10);
    }
  });
});

describe("late bootstrap", () => {
  test("servers started with empty logs bootstrap together later; one that already heard from the cluster does not", async () => {
    const clock = simClock();
    const rng = seededRng(6);
    const net = simNetwork(clock, rng);
    const ids = ["n1", "n2", "n3"];
    const sms = ids.map(() => kvStateMachine());
    const nodes = ids.map((id, i) => createConsensusNode({ id, clock, rng, logger: silentLogger(), log: memoryLogStore(), transport: net.transport(id), stateMachine: sms[i]!, tickMs: 10 }));
    for (const n of nodes) await n.start();
    await runFor(clock, 500);
    expect(nodes.every((n) => n.status().role === "Follower" && n.status().leader === "")).toBe(true);
    const results: boolean[] = [];
    void nodes[0]!.bootstrap(ids).then((r) => results.push(r));
    void nodes[1]!.bootstrap(ids).then((r) => results.push(r));
    await runFor(clock, 1000);
    expect(results).toEqual([true, true]);
    const leader = nodes.find((n) => n.status().role === "Leader");
    expect(leader).toBeDefined();
    // n3 has heard from the cluster by now: bootstrapping would fork it, so it does not.
    expect(await Promise.race([nodes[2]!.bootstrap(ids), runFor(clock, 50).then(() => "pending")])).toBe(false);
    void leader!.propose(encodeKvCommand({ op: "put", key: "k", value: "v" }));
    await runFor(clock, 300);
    expect(sms.map((s) => s.get("k"))).toEqual(["v", "v", "v"]);
  });
});

describe("snapshot pacing", () => {
  test("with snapshotIntervalMs, a due snapshot waits for the interval, unless the log grows past 8 x snapshotEntries", async () => {
    const clock = simClock();
    const sm = kvStateMachine();
    const store = memoryLogStore();
    const node = createConsensusNode({
      id: "n1", clock, rng: seededRng(3), logger: silentLogger(), log: store, transport: simNetwork(clock, seededRng(4)).transport("n1"),
      stateMachine: sm, bootstrapVoters: ["n1"], tickMs: 10, snapshotEntries: 10, keepEntries: 2, snapshotIntervalMs: 60_000,
    });
    await node.start();
    await runFor(clock, 500);
    const snapshots = () => store.snapshotIndex();
    const put = async (n: number) => {
      for (let i = 0; i < n; i++) void node.propose(encodeKvCommand({ op: "put", key: `k${i}`, value: "v" }));
      await runFor(clock, 100);
    };
    const bootstrap = snapshots();
    await put(20);
    expect(snapshots()).toBe(bootstrap); // due by entries, but the interval has not passed
    await runFor(clock, 60_000);
    await put(1);
    expect(snapshots()).toBeGreaterThan(20); // the interval passed: taken at the next Ready
    const first = snapshots();
    await put(85);
    expect(snapshots()).toBeGreaterThan(first); // more than 8 x 10 entries pending: taken regardless
    await node.stop();
  });
});

describe("log bytes", () => {
  test("a snapshot is taken once snapshotBytes of commands were applied, whatever the entry count and interval; at most keepBytes stay behind it", async () => {
    const clock = simClock();
    const sm = kvStateMachine();
    const store = memoryLogStore();
    const compactions: number[] = [];
    const compact = store.compact.bind(store);
    store.compact = (index) => (compactions.push(index), compact(index));
    const node = createConsensusNode({
      id: "n1", clock, rng: seededRng(3), logger: silentLogger(), log: store, transport: simNetwork(clock, seededRng(4)).transport("n1"),
      stateMachine: sm, bootstrapVoters: ["n1"], tickMs: 10, snapshotEntries: 10_000, snapshotIntervalMs: 600_000,
      snapshotBytes: 64 * 1024, keepBytes: 16 * 1024, keepEntries: 1024,
    });
    await node.start();
    await runFor(clock, 500);
    const bootstrap = store.snapshotIndex();
    const big = "x".repeat(4096);
    const put = async (n: number) => {
      for (let i = 0; i < n; i++) void node.propose(encodeKvCommand({ op: "put", key: `k${i}`, value: big }));
      await runFor(clock, 100);
    };
    await put(10); // ~40 KiB: below snapshotBytes
    expect(store.snapshotIndex()).toBe(bootstrap);
    await put(10); // past 64 KiB: taken although far below 10,000 entries and the interval
    const snap = store.snapshotIndex();
    expect(snap).toBeGreaterThan(bootstrap);
    // Of the entries behind the snapshot, only keepBytes' worth (3 of 4 KiB and a bit) are kept, not keepEntries.
    expect(compactions.length).toBe(1);
    expect(snap - compactions[0]!).toBe(3);
    await node.stop();
  });
});

describe("linearizable reads", () => {
  test("a lost ReadIndex request is asked again (every 500 ms, as etcd does) instead of waiting for the timeout", async () => {
    const c = cluster(3, 5);
    for (const n of c.nodes) await n.start();
    await runFor(c.clock, 1000);
    const leader = c.nodes.find((n) => n.status().role === "Leader")!;
    const follower = c.nodes.find((n) => n !== leader)!;
    c.net.block(follower.status().id, leader.status().id);
    let readAt: number | undefined;
    const start = c.clock.monotonic();
    void follower.read().then(() => (readAt = c.clock.monotonic() - start));
    await runFor(c.clock, 300);
    expect(readAt).toBeUndefined(); // the request went nowhere
    c.net.unblock(follower.status().id, leader.status().id);
    await runFor(c.clock, 700);
    expect(readAt).toBeDefined();
    expect(readAt!).toBeLessThanOrEqual(1000);
    for (const n of c.nodes) await n.stop();
  });
});

describe("leader's view of its followers (autopilot's server health)", () => {
  test("progress reports match term and last contact; a partitioned follower's contact ages", async () => {
    const c = cluster(3, 11);
    for (const n of c.nodes) await n.start();
    await runFor(c.clock, 1000);
    const leader = c.nodes.find((n) => n.status().role === "Leader")!;
    const leaderId = leader.status().id;
    void leader.propose(encodeKvCommand({ op: "put", key: "a", value: "1" }));
    await runFor(c.clock, 200);
    const st = leader.status();
    expect(st.lastLogTerm).toBe(st.term);
    expect(leader.progress(leaderId)).toMatchObject({ lastContactMs: 0, matchTerm: st.term });
    const [f1, f2] = c.ids.filter((id) => id !== leaderId) as [string, string];
    for (const id of [f1, f2]) {
      const p = leader.progress(id)!;
      expect(p.match).toBe(st.lastIndex);
      expect(p.matchTerm).toBe(st.term);
      expect(p.lastContactMs).toBeLessThanOrEqual(100);
    }
    c.net.partition([[leaderId, f1], [f2]]);
    await runFor(c.clock, 1000);
    expect(leader.progress(f1)!.lastContactMs).toBeLessThanOrEqual(100);
    expect(leader.progress(f2)!.lastContactMs).toBeGreaterThanOrEqual(900);
    // A follower knows nothing of the others' progress.
    expect(c.nodes.find((n) => n.status().id === f1)!.progress(leaderId)).toBeUndefined();
  });
});
