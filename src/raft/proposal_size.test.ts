/**
 * maxEntryBytes: an entry bigger than the limit is never appended, on whichever node the proposal is
 * stepped, and the proposer of a forwarded one learns of the refusal (MsgPropTooLarge) instead of
 * waiting for a timeout.
 */
import { describe, expect, test } from "bun:test";
import { Cluster } from "../../test/raft/cluster.ts";
import { ErrProposalDropped, ErrProposalTooLarge } from "./errors.ts";
import type { Message } from "./types.ts";

const bytes = (n: number) => new Uint8Array(n).fill(7);

/** A 3-node cluster with `a` elected leader; `limits` per node (undefined: no limit). */
function elected(limits: Record<string, number | undefined>): Cluster {
  const c = new Cluster(["a", "b", "c"], { seed: 1 });
  for (const [id, limit] of Object.entries(limits)) {
    const n = c.node(id);
    (n as { config: unknown }).config = { ...n.config, maxEntryBytes: limit };
    c.restart(id);
  }
  c.node("a").raw.campaign();
  c.stabilize();
  expect(c.node("a").raw.raft.state).toBe("Leader");
  return c;
}

const lastIndex = (c: Cluster, id: string) => c.node(id).raw.raft.raftLog.lastIndex();

describe("maxEntryBytes", () => {
  test("a local proposal over the limit throws ErrProposalTooLarge and appends nothing; one at the limit is appended", () => {
    const c = elected({ a: 100, b: 100, c: 100 });
    const before = lastIndex(c, "a");
    let err: unknown;
    try {
      c.node("a").raw.propose(bytes(101), "ctx");
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ErrProposalTooLarge);
    expect(err).toBeInstanceOf(ErrProposalDropped);
    expect([(err as ErrProposalTooLarge).size, (err as ErrProposalTooLarge).limit]).toEqual([101, 100]);
    expect(lastIndex(c, "a")).toBe(before);
    c.node("a").raw.propose(bytes(100));
    c.stabilize();
    expect(["a", "b", "c"].map((id) => lastIndex(c, id))).toEqual([before + 1, before + 1, before + 1]);
  });

  test("a follower refuses to forward an oversized proposal of its own", () => {
    const c = elected({ a: 100, b: 100, c: 100 });
    expect(() => c.node("b").raw.propose(bytes(500), "ctx")).toThrow(ErrProposalTooLarge);
    expect(c.node("b").raw.raft.msgs.filter((m) => m.type === "MsgProp")).toEqual([]);
  });

  test("the leader refuses an oversized proposal forwarded by a follower without the limit, and tells that follower", () => {
    // b is "older or misconfigured": it has no limit and forwards anything.
    const c = elected({ a: 100, b: undefined, c: 100 });
    const before = lastIndex(c, "a");
    c.node("b").raw.propose(bytes(1000), "prop-1");
    c.processReady("b");
    const forwarded = c.pool.filter((m) => m.type === "MsgProp");
    expect(forwarded.map((m) => [m.from, m.to, (m as Message & { type: "MsgProp" }).context])).toEqual([["b", "a", "prop-1"]]);
    c.deliverWhere((m) => m.type === "MsgProp");
    expect(lastIndex(c, "a")).toBe(before);

    // The leader's answer goes back to b, which reports the refusal in its next Ready.
    c.processReady("a");
    const answers = c.pool.filter((m) => m.type === "MsgPropTooLarge");
    expect(answers).toEqual([{ type: "MsgPropTooLarge", from: "a", to: "b", term: 0, context: "prop-1", size: 1000, limit: 100 }]);
    c.deliverWhere((m) => m.type === "MsgPropTooLarge");
    const b = c.node("b").raw;
    expect(b.hasReady()).toBe(true);
    const rd = b.ready();
    expect(rd.refusedProposals).toEqual([{ context: "prop-1", size: 1000, limit: 100 }]);
    b.advance();
    expect(b.hasReady()).toBe(false);

    // The cluster is not wedged: later proposals from anyone commit everywhere.
    c.node("b").raw.propose(bytes(10));
    c.stabilize();
    expect(["a", "b", "c"].map((id) => lastIndex(c, id))).toEqual([before + 1, before + 1, before + 1]);
  });

  test("without a context the refusal is not reported (nothing to name it by)", () => {
    const c = elected({ a: 100, b: undefined, c: 100 });
    c.node("b").raw.propose(bytes(1000));
    c.processReady("b");
    c.deliverWhere((m) => m.type === "MsgProp");
    c.processReady("a");
    expect(c.pool.filter((m) => m.type === "MsgPropTooLarge")).toEqual([]);
  });
});
