/**
 * Proves the safety checker catches a real bug: a leader variant that commits an entry of an EARLIER
 * term by counting replicas (forbidden by Raft §5.4.2) loses a committed entry in the Figure 8
 * scenario of the Raft paper, and SafetyChecker reports it. The correct core runs the same script
 * without a violation.
 */
import { expect, test } from "bun:test";
import type { Config, Message } from "../../src/raft/index.ts";
import { CountingCommitRaft } from "../sim/broken_variants.ts";
import { Cluster } from "./cluster.ts";

const among = (...ids: string[]) => (m: Message) => ids.includes(m.from) && ids.includes(m.to);

function figure8(unsafe: boolean): string[] {
  const c = new Cluster(["1", "2", "3", "4", "5"], {
    seed: 8, maxSizePerMsg: 0, // one entry per MsgApp, so a follower can receive index 2 without index 3
    factory: unsafe ? (cfg: Config) => new CountingCommitRaft(cfg) : undefined,
  });
  const n = (id: string) => c.node(id).raw;
  const leaderOf = (id: string) => n(id).raft.state === "Leader";

  // (a) S1 leads; index xIndex = "x" reaches S2 only.
  n("1").campaign();
  c.stabilize();
  expect(leaderOf("1")).toBe(true);
  const t1 = n("1").raft.term;
  n("1").propose(new TextEncoder().encode("x"));
  c.stabilize(among("1", "2"));
  const xIndex = n("1").raft.raftLog.lastIndex();
  expect(n("2").raft.raftLog.lastIndex()).toBe(xIndex);

  // (b) S1 crashes (and restarts later); S5 is elected by S3, S4, S5 and appends its no-op at xIndex, unreplicated.
  while (!leaderOf("5")) {
    n("5").campaign();
    c.stabilize((m) => among("3", "4", "5")(m) && m.type !== "MsgApp");
  }
  expect(n("5").raft.raftLog.term(xIndex)).toBeGreaterThan(t1);

  // (c) S5 "crashes"; S1 comes back and wins a later term with S2 and S3. S2 gets S1's new no-op, S3
  // only gets index xIndex (term t1): a quorum (S1, S2, S3) now holds xIndex.
  c.restart("1");
  c.restart("5");
  while (!leaderOf("1")) {
    n("1").campaign();
    c.stabilize((m) => among("1", "2", "3")(m) && m.type !== "MsgApp");
  }
  for (let i = 0; i < n("1").raft.heartbeatTimeout; i++) n("1").tick();
  for (let i = 0; i < 10; i++) {
    c.processAll();
    // Deliver to S2 and S3, but never S3's copy of S1's new-term entry (xIndex + 1).
    c.pool = c.pool.filter((m) => among("1", "2", "3")(m) &&
      !(m.to === "3" && m.type === "MsgApp" && n("3").raft.raftLog.lastIndex() >= xIndex));
    if (c.pool.length === 0) break;
    c.deliverWhere(() => true);
  }
  c.processAll();
  c.pool = [];
  expect(n("3").raft.raftLog.lastIndex()).toBe(xIndex);

  c.restart("1");
  // (d) S1 crashes again; S5 wins with S3 and S4 (its last term beats S3's) and overwrites xIndex.
  for (let i = 0; i < 5 && !leaderOf("5"); i++) {
    n("5").campaign();
    c.stabilize(among("3", "4", "5"));
  }
  expect(leaderOf("5")).toBe(true);
  c.stabilize(among("3", "4", "5"));
  return c.checker.violations;
}

test("figure 8: unsafe earlier-term commit is caught by the safety checker", () => {
  const v = figure8(true);
  expect(v.length).toBeGreaterThan(0);
  expect(v[0]).toContain("state machine safety: index 3 applied as 1/3 EntryNormal \"x\" by 1");
});

test("figure 8: the real commit rule (current-term entries only) keeps the script safe", () => {
  expect(figure8(false)).toEqual([]);
});
