/**
 * The State backend's limits and restores, over a real (single-node) consensus node: a command too big
 * for a Raft entry is refused before it is proposed; a restore is checked on the receiving server and
 * proposed in chunks that each fit in an entry; an abandoned staged restore is aborted by the leader.
 */
import { describe, expect, test } from "bun:test";
import { Code, ConnectError } from "@connectrpc/connect";
import { decodeConfigEntry } from "../connect/index.ts";
import { createConsensusNode } from "../consensus/index.ts";
import { seededRng, silentLogger } from "../platform/index.ts";
import { createStateStore, decodeCommand, encodeCommand, type StateCommand, type StateResult } from "../state/index.ts";
import { memoryLogStore } from "../../test/harness/memory_log_store.ts";
import { runSimTimers, simClock } from "../../test/harness/sim_clock.ts";
import { simNetwork } from "../../test/harness/sim_network.ts";
import { createLeaderRunner } from "./leader_routines.ts";
import { STAGED_RESTORE_IDLE_MS } from "./leader_restore_gc.ts";
import { createReplicatedState } from "./replicated_state.ts";
import { restoreChunkBytes, restoreInChunks } from "./staged_restore.ts";

const dec = new TextDecoder();
const enc = new TextEncoder();

/** A server's replicated state on a one-node cluster whose Raft entries are at most `maxEntryBytes`. */
async function server(maxEntryBytes: number) {
  const clock = simClock();
  const rs = createReplicatedState({ clock, logger: silentLogger(), datacenter: "dc1", nodeName: "s1", rng: seededRng(3) });
  const log = memoryLogStore();
  const node = createConsensusNode<StateResult>({
    id: "s1", clock, rng: seededRng(4), logger: silentLogger(), log, transport: simNetwork(clock, seededRng(5)).transport("s1"),
    stateMachine: rs.stateMachine, bootstrapVoters: ["s1"], tickMs: 10, maxEntryBytes,
  });
  rs.attach(node);
  await node.start();
  await runSimTimers(clock, 500);
  expect(node.status().role).toBe("Leader");
  /** Applies through the backend while the simulated clock runs. */
  const apply = async (cmd: StateCommand): Promise<StateResult> => {
    const p = rs.backend.apply(encodeCommand(cmd));
    p.catch(() => {});
    for (let i = 0; i < 200; i++) {
      const done = await Promise.race([p.then(() => true, () => true), Promise.resolve(false)]);
      if (done) break;
      await runSimTimers(clock, 10);
    }
    return JSON.parse(dec.decode(await p)) as StateResult;
  };
  const entries = () => log.durableEntries().filter((e) => e.type === "Normal" && e.data.length > 16).map((e) => decodeCommand((e as { data: Uint8Array }).data.subarray(16)));
  return { clock, rs, node, apply, entries };
}

/** A user snapshot with `n` KV keys of `size` bytes each. */
function snapshotOf(n: number, size: number): Uint8Array {
  const store = createStateStore({ clock: simClock() });
  for (let i = 0; i < n; i++) store.apply(i + 1, { type: "kv", op: "set", entry: { Key: `restored/${i}`, Value: new Uint8Array(size).fill(65 + (i % 26)) } });
  return store.snapshot();
}

/** The ConnectError `p` rejects with. */
const refusal = (p: Promise<unknown>) => p.then(() => expect.unreachable("accepted"), (e: ConnectError) => (expect(e).toBeInstanceOf(ConnectError), e));

describe("entry size limit on the server a write reaches", () => {
  test("a command over the limit is refused with ResourceExhausted and a clear message, before anything is proposed", async () => {
    const s = await server(64 * 1024);
    const before = s.entries().length;
    const big: StateCommand = { type: "register", req: { Node: "n1", Address: "10.0.0.1", NodeMeta: { blob: "x".repeat(100_000) } } };
    const e = await refusal(s.apply(big));
    expect(e.code).toBe(Code.ResourceExhausted);
    expect(e.rawMessage).toMatch(/^Request too large: the encoded Raft entry is \d+ bytes, more than the 65536-byte limit$/);
    expect(s.entries().length).toBe(before);
    expect(await s.apply({ type: "register", req: { Node: "n1", Address: "10.0.0.1" } })).toEqual({ type: "ok" });
  });
});

describe("restores", () => {
  test("a snapshot many times the entry limit is restored through chunks that each fit", async () => {
    const s = await server(64 * 1024);
    await s.apply({ type: "kv", op: "set", entry: { Key: "before", Value: enc.encode("x") } });
    const snap = snapshotOf(40, 10_000); // ~540 KB of JSON: more than 8 entries' worth
    expect(await s.apply({ type: "restore", data: snap })).toEqual({ type: "ok" });
    const kinds = s.entries().filter((c) => c.type === "restore-stage").map((c) => (c as { op: string }).op);
    const chunks = Math.ceil(snap.length / restoreChunkBytes(s.node.maxCommandBytes));
    expect(chunks).toBeGreaterThan(8);
    expect(kinds).toEqual(["begin", ...Array(chunks).fill("chunk"), "commit"]);
    expect(s.rs.store.snapshot()).not.toEqual(snap); // at the commit's index, not the snapshot's
    const keys = JSON.parse(dec.decode(s.rs.store.snapshot())).kvs.map((r: unknown[]) => r[1]);
    expect(keys.length).toBe(40);
    expect(keys).not.toContain("before");
    expect(s.rs.store.stagedRestore()).toBeUndefined();
  });

  test("an invalid snapshot is refused with InvalidArgument naming the problem, and nothing is proposed", async () => {
    const s = await server(64 * 1024);
    const before = s.entries().length;
    const doc = JSON.parse(dec.decode(snapshotOf(2, 10)));
    doc.kvs[0][4] = "no-such-session";
    const e = await refusal(s.apply({ type: "restore", data: enc.encode(JSON.stringify(doc)) }));
    expect([e.code, e.rawMessage]).toEqual([Code.InvalidArgument, 'invalid snapshot: kvs[0] (key "restored/0") is locked by session "no-such-session", which the snapshot does not have']);

    // A config-entry graph that no write could have produced: a redirect cycle.
    const store = createStateStore({ clock: simClock() });
    const resolver = (name: string, to: string) => decodeConfigEntry({ Kind: "service-resolver", Name: name, Redirect: { Service: to } });
    store.apply(1, { type: "config-entry", op: "set", entry: resolver("web", "api") });
    store.apply(2, { type: "config-entry", op: "set", entry: resolver("api", "web") });
    const cyclic = await refusal(s.apply({ type: "restore", data: store.snapshot() }));
    expect(cyclic.code).toBe(Code.InvalidArgument);
    expect(cyclic.rawMessage).toMatch(/^invalid snapshot: configEntries: service-resolver "(api|web)": .*circular/);
    expect(s.entries().length).toBe(before);

    const stage = await refusal(s.apply({ type: "restore-stage", op: "abort", id: "x" }));
    expect(stage.code).toBe(Code.InvalidArgument);
  });

  test("a restore whose chunk fails is aborted, and its chunks do not stay staged", async () => {
    const proposed: StateCommand[] = [];
    const store = createStateStore({ clock: simClock() });
    let index = 0;
    const propose = async (cmd: StateCommand): Promise<StateResult> => {
      proposed.push(cmd);
      if (cmd.type === "restore-stage" && cmd.op === "chunk" && cmd.seq === 2) throw new Error("proposal timed out");
      return store.apply(++index, cmd);
    };
    await expect(restoreInChunks(snapshotOf(5, 100), { propose, rng: seededRng(1), chunkBytes: 100 })).rejects.toThrow("proposal timed out");
    await Promise.resolve();
    expect(proposed.map((c) => (c as { op: string }).op)).toEqual(["begin", "chunk", "chunk", "chunk", "abort"]);
    expect(store.stagedRestore()).toBeUndefined();
  });

  test("the leader aborts a staged restore that stopped receiving chunks, and leaves a progressing one alone", async () => {
    const s = await server(64 * 1024);
    const runner = createLeaderRunner(s.rs.leaderRoutines, silentLogger());
    runner.setLeader(true);
    const sha = "0".repeat(64);
    await s.apply({ type: "kv", op: "set", entry: { Key: "k", Value: null } });
    // As a proposer that crashed after its first chunk would leave it (proposed directly: the backend refuses restore-stage).
    const stage = (cmd: StateCommand) => s.node.propose(encodeCommand(cmd));
    const begun = stage({ type: "restore-stage", op: "begin", id: "live", chunks: 100, size: 100, sha256: sha });
    await runSimTimers(s.clock, 50);
    await begun;
    for (let t = 0; t < 3; t++) {
      const p = stage({ type: "restore-stage", op: "chunk", id: "live", seq: t, data: new Uint8Array(1) });
      await runSimTimers(s.clock, STAGED_RESTORE_IDLE_MS * 0.9);
      await p;
      expect(s.rs.store.stagedRestore()?.id).toBe("live");
    }
    await runSimTimers(s.clock, STAGED_RESTORE_IDLE_MS * 2 + 100);
    expect(s.rs.store.stagedRestore()).toBeUndefined();
    expect(s.entries().filter((c) => c.type === "restore-stage").map((c) => (c as { op: string }).op).at(-1)).toBe("abort");
    runner.setLeader(false);
  });
});
