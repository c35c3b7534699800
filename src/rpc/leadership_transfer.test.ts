import { describe, expect, test } from "bun:test";
import { Code, ConnectError } from "@connectrpc/connect";
import { runSimTimers, simClock } from "../../test/harness/sim_clock.ts";
import type { ConsensusStatus } from "../consensus/index.ts";
import type { RaftView } from "./forward.ts";
import { pickTransferee, transferLeadership } from "./leadership_transfer.ts";

/** A leader "a" with voters a, b, c, d and learner l; `view.status` can be swapped to simulate the outcome. */
function fixture(match: Record<string, number> = { b: 7, c: 9, d: 9 }) {
  let status: ConsensusStatus = {
    id: "a", leader: "a", role: "Leader", term: 3, commit: 9, applied: 9, lastIndex: 9, lastLogTerm: 3, lastLeaderContactMs: 0,
    config: { voters: ["a", "b", "c", "d"], learners: ["l"], votersOutgoing: [], learnersNext: [], autoLeave: false },
  };
  const transfers: string[] = [];
  const raft: RaftView = { status: () => status, changeMembership: () => Promise.reject(new Error("unused")) };
  const node = { transferLeadership: (to: string) => void transfers.push(to), progress: (id: string) => (id in match ? { match: match[id]! } : undefined) };
  const follow = (leader: string) => (status = { ...status, role: "Follower", leader });
  return { raft, node, transfers, follow };
}

const refusal = (f: () => unknown) => {
  try {
    f();
  } catch (err) {
    return [(err as ConnectError).code, (err as ConnectError).rawMessage];
  }
  return "accepted";
};

describe("pickTransferee", () => {
  test("without an id: the other voter with the highest match index, ties by ID; learners never", () => {
    const { raft, node } = fixture({ b: 7, c: 9, d: 9, l: 50 });
    expect(pickTransferee(raft, node, "")).toBe("c");
    expect(pickTransferee(raft, { ...node, progress: () => undefined }, "")).toBe("b");
  });

  test("a named id must be another voter (Consul's texts where it has them)", () => {
    const { raft, node } = fixture();
    expect(pickTransferee(raft, node, "b")).toBe("b");
    expect(refusal(() => pickTransferee(raft, node, "zz"))).toEqual([Code.NotFound, "Could not find address for server id zz"]);
    expect(refusal(() => pickTransferee(raft, node, "a"))).toEqual([Code.InvalidArgument, "cannot transfer leadership to itself"]);
    expect(refusal(() => pickTransferee(raft, node, "l"))).toEqual([Code.InvalidArgument, "server id l is not a voter: leadership can only be transferred to a voter"]);
  });

  test("no other voter: FailedPrecondition \"cannot find peer\"", () => {
    const { raft, node } = fixture();
    const alone: RaftView = { ...raft, status: () => ({ ...raft.status(), config: { ...raft.status().config, voters: ["a"] } }) };
    expect(refusal(() => pickTransferee(alone, node, ""))).toEqual([Code.FailedPrecondition, "cannot find peer"]);
  });
});

describe("transferLeadership", () => {
  test("starts the transfer and resolves with the new leader once another server leads", async () => {
    const clock = simClock();
    const f = fixture();
    let result: string | undefined;
    void transferLeadership(f.raft, { node: f.node, clock, timeoutMs: 1_000 }, "", undefined).then((r) => (result = r));
    await runSimTimers(clock, 100);
    expect([f.transfers, result]).toEqual([["c"], undefined]);
    f.follow(""); // stepped down, new leader not known yet: still waiting
    await runSimTimers(clock, 100);
    expect(result).toBeUndefined();
    f.follow("c");
    expect(await runSimTimers(clock, 100, () => result !== undefined)).toBe(true);
    expect(result).toBe("c");
  });

  test("leadership that went elsewhere than asked, or nowhere in time, is an Aborted error", async () => {
    const clock = simClock();
    const f = fixture();
    const elsewhere = transferLeadership(f.raft, { node: f.node, clock }, "b").catch((e: ConnectError) => [e.code, e.rawMessage]);
    f.follow("d");
    await runSimTimers(clock, 100);
    expect(await elsewhere).toEqual([Code.Aborted, "leadership moved to server id d, not to the requested b"]);

    const g = fixture();
    let outcome: unknown;
    void transferLeadership(g.raft, { node: g.node, clock, timeoutMs: 500 }, "b").catch((e: ConnectError) => (outcome = [e.code, e.rawMessage]));
    await runSimTimers(clock, 499);
    expect(outcome).toBeUndefined();
    await runSimTimers(clock, 100, () => outcome !== undefined);
    expect(outcome).toEqual([Code.Aborted, "leadership transfer timeout: no new leader within 500 ms (transferee b)"]);
  });

  test("an aborted call stops waiting with an AbortError", async () => {
    const clock = simClock();
    const f = fixture();
    const abort = new AbortController();
    const waiting = transferLeadership(f.raft, { node: f.node, clock }, "", abort.signal).catch((e: Error) => e.name);
    abort.abort();
    await runSimTimers(clock, 100);
    expect(await waiting).toBe("AbortError");
  });
});
