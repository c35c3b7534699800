/**
 * The entry size limit in the driver: an oversized command is refused before it is proposed, and one
 * that a follower with a larger limit (older or configured otherwise) forwards is refused by the leader
 * with a definite ProposalTooLargeError for its proposer, not a timeout; the cluster keeps committing.
 */
import { describe, expect, test } from "bun:test";
import { seededRng, silentLogger } from "../platform/index.ts";
import { runSimTimers, simClock } from "../../test/harness/sim_clock.ts";
import { simNetwork } from "../../test/harness/sim_network.ts";
import { memoryLogStore } from "../../test/harness/memory_log_store.ts";
import { encodeKvCommand, kvStateMachine, type KvResult } from "../../test/harness/kv_state_machine.ts";
import { createConsensusNode, DEFAULT_MAX_ENTRY_BYTES, DEFAULT_MAX_FRAME_BYTES, ProposalDroppedError, ProposalTooLargeError, type ConsensusNode } from "./index.ts";

/** n1 (limit 1000 bytes) is the leader; n2 has a limit of 100,000 bytes; n3 the default. */
async function cluster() {
  const clock = simClock();
  const net = simNetwork(clock, seededRng(9));
  const ids = ["n1", "n2", "n3"];
  const limits = [1000, 100_000, undefined];
  const logs = ids.map(() => memoryLogStore());
  const sms = ids.map(() => kvStateMachine());
  const nodes: ConsensusNode<KvResult>[] = ids.map((id, i) =>
    createConsensusNode({
      id, clock, rng: seededRng(10 + i), logger: silentLogger(), log: logs[i]!, transport: net.transport(id), stateMachine: sms[i]!,
      bootstrapVoters: ids, tickMs: 10, requestTimeoutMs: 5000, maxEntryBytes: limits[i],
    }),
  );
  for (const n of nodes) await n.start();
  nodes[0]!.campaign();
  await runSimTimers(clock, 500);
  expect(nodes[0]!.status().role).toBe("Leader");
  return { clock, nodes, logs, sms };
}

const put = (key: string, padBytes: number) => {
  const c = encodeKvCommand({ op: "put", key, value: "v" });
  const out = new Uint8Array(c.length + padBytes);
  out.set(c);
  out.fill(0x20, c.length); // trailing JSON whitespace: the same command, padded
  return out;
};

const outcome = (p: Promise<unknown>) => p.then(() => "applied", (e: Error) => e);

describe("entry size limit", () => {
  test("the default leaves a frame's worth of room: 1 MiB less than the transport's frame limit", () => {
    expect(DEFAULT_MAX_FRAME_BYTES - DEFAULT_MAX_ENTRY_BYTES).toBe(1024 * 1024);
  });

  test("a command over the node's own limit is refused at once, before it reaches any log", async () => {
    const c = await cluster();
    const before = c.logs[0]!.durableEntries().length;
    expect(c.nodes[0]!.maxCommandBytes).toBe(1000 - 16);
    const err = await outcome(c.nodes[0]!.propose(put("big", 2000)));
    expect(err).toBeInstanceOf(ProposalTooLargeError);
    expect(err).toBeInstanceOf(ProposalDroppedError); // definite: safe to report as "not applied"
    const e = err as ProposalTooLargeError;
    expect(e.message).toBe(`Request too large: the encoded Raft entry is ${e.size} bytes, more than the 1000-byte limit`);
    expect(e.size).toBe(16 + put("big", 2000).length);
    await runSimTimers(c.clock, 100);
    expect(c.logs[0]!.durableEntries().length).toBe(before);
  });

  test("the leader refuses an oversized entry forwarded by a follower with a larger limit; the proposer gets a definite error quickly", async () => {
    const c = await cluster();
    const lastBefore = c.nodes[0]!.status().lastIndex;
    const started = c.clock.monotonic();
    let settledAt = 0;
    const p = outcome(c.nodes[1]!.propose(put("big", 5000))).then((r) => ((settledAt = c.clock.monotonic() - started), r));
    await runSimTimers(c.clock, 200);
    const err = await p;
    expect(err).toBeInstanceOf(ProposalTooLargeError);
    expect((err as ProposalTooLargeError).limit).toBe(1000);
    // Answered within a few message delays, not after the 5 s proposal timeout ("outcome unknown").
    expect(settledAt).toBeLessThan(100);
    expect(c.nodes[0]!.status().lastIndex).toBe(lastBefore);

    // Not wedged: writes through every server keep committing everywhere.
    const rs = await Promise.all([
      c.nodes[0]!.propose(put("a", 0)), c.nodes[1]!.propose(put("b", 500)), c.nodes[2]!.propose(put("c", 0)),
      runSimTimers(c.clock, 300),
    ]);
    expect(rs.slice(0, 3)).toEqual([{ ok: true }, { ok: true }, { ok: true }]);
    expect(c.sms.map((s) => [s.get("a"), s.get("b"), s.get("c"), s.get("big")])).toEqual([
      ["v", "v", "v", undefined], ["v", "v", "v", undefined], ["v", "v", "v", undefined],
    ]);
  });
});
