import { describe, expect, test } from "bun:test";
import { seededRng } from "../../src/platform/index.ts";
import { MemoryStorage, RawNode, type Entry } from "../../src/raft/index.ts";
import { CommitSafety, hasUncommittedTail, observeCommits } from "./commit_safety.ts";

const normal = (index: number, term: number, text: string): Entry => ({ type: "Normal", index, term, data: new TextEncoder().encode(text) });
const leader = (term: number) => ({ term, leader: true });
const follower = (term: number) => ({ term, leader: false });

describe("CommitSafety", () => {
  test("the same entry committed by every server is fine", () => {
    const c = new CommitSafety();
    c.observeCommitted("s1", normal(2, 1, "x"), leader(1), 10);
    c.observeCommitted("s2", normal(2, 1, "x"), follower(1), 12);
    expect(c.violations).toEqual([]);
  });

  test("another entry at a committed index is reported once, naming an earlier-term commit by a leader", () => {
    const c = new CommitSafety();
    c.observeCommitted("s1", normal(2, 2, "x"), leader(4), 10);
    c.observeCommitted("s5", normal(2, 3, "y"), leader(5), 20);
    c.observeCommitted("s3", normal(2, 3, "y"), follower(5), 21);
    expect(c.violations).toEqual([
      "committed entry lost: s1 (leader of term 4) committed index 2 with term 2 (t=10ms) but s5 later committed term 3 there " +
        "(t=20ms); s1 committed an entry of an earlier term than its own, which Raft allows only by committing an entry " +
        "of its own term after it (§5.4.2, Figure 8)",
    ]);
  });

  test("same term but other bytes is a lost entry too; a follower's commit names no leader", () => {
    const c = new CommitSafety();
    c.observeCommitted("s2", normal(7, 3, "x"), follower(3), 1);
    c.observeCommitted("s3", normal(7, 3, "y"), follower(3), 2);
    expect(c.violations).toEqual(["committed entry lost: s2 committed index 7 with term 3 (t=1ms) but s3 later committed term 3 there (t=2ms)"]);
  });
});

/** A voter of {a, b, c} whose log holds index 2 (term 2) and 3 (term 3), committed up to `commit`, elected in term 4. */
function electedWith(commit: number): RawNode {
  const storage = new MemoryStorage();
  storage.applySnapshot({ index: 1, term: 1, confState: { voters: ["a", "b", "c"], learners: [], votersOutgoing: [], learnersNext: [], autoLeave: false } });
  storage.append([normal(2, 2, "x"), normal(3, 3, "y")]);
  storage.setHardState({ term: 3, vote: "", commit });
  const raw = new RawNode({ id: "a", electionTick: 10, heartbeatTick: 1, maxInflightMsgs: 4, storage, applied: 1, rng: seededRng(1) });
  raw.campaign();
  raw.step({ type: "MsgVoteResp", from: "b", to: "a", term: 4, reject: false });
  expect(raw.raft.state).toBe("Leader");
  return raw;
}

describe("hasUncommittedTail", () => {
  test("a new leader holding earlier-term entries past its commit index has one", () => {
    expect(hasUncommittedTail(electedWith(1))).toBe(true);
    expect(hasUncommittedTail(electedWith(2))).toBe(true);
  });

  test("a new leader whose log past its commit index is only its own empty entry has none", () => {
    expect(hasUncommittedTail(electedWith(3))).toBe(false);
  });
});

test("observeCommits sees every committed entry a Ready hands out, with the core's term and role", () => {
  const seen: string[] = [];
  const raw = observeCommits(electedWith(2), (e, by) => seen.push(`${e.index}/${e.term} ${by.leader ? "leader" : "follower"} t${by.term}`));
  raw.ready();
  expect(seen).toEqual(["2/2 leader t4"]);
});
