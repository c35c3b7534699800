import { describe, expect, test } from "bun:test";
import { seededRng } from "../platform/index.ts";
import { SerfKind, decodeSerfPushPull, encodeSerfPushPull, type SerfMemberRecord } from "./codec.ts";
import { SERF_DEFAULTS, Serf, type SerfOutbox, type SerfRequest } from "./serf.ts";
import { RECENT_INTENTS, RECENT_INTENT_TIMEOUT_MS, RecentIntents, memberIntents, memberRecords } from "./serf_intents.ts";
import type { MemberEvent } from "./types.ts";

const kinds = (o: SerfOutbox) => o.events.map((e) => (e.type === "user" ? `user:${e.name}` : `${e.type}:${e.member.name}`));
const broadcasts = (o: SerfOutbox) => o.requests.filter((r): r is Extract<SerfRequest, { type: "broadcast" }> => r.type === "broadcast");
const asUser = (r: Extract<SerfRequest, { type: "broadcast" }>): MemberEvent => ({ type: "user", key: r.key, payload: r.payload });
const core = (type: "join" | "leave" | "failed", name: string): MemberEvent =>
  ({ type, member: { name, addr: name, meta: new Uint8Array(0), incarnation: 1, state: "alive", stateChange: 0 } });
/** A push-pull bringing `from`'s state, as the core hands it up. */
const pushPullFrom = (from: Serf): MemberEvent => ({ type: "remote-state", state: from.stateDelegate.localState(false), join: false });
const records = (s: Serf) => decodeSerfPushPull(s.stateDelegate.localState(false)).members;

/** Serf `name` that knows itself and `others`, all alive. */
function serf(name: string, others: string[] = [], seed = 1): Serf {
  const s = new Serf({ ...SERF_DEFAULTS, name, tags: {} }, seededRng(seed), 0);
  for (const n of [name, ...others]) s.handle(core("join", n), 0);
  s.outbox();
  return s;
}

/** `x` leaves gracefully; `heard` get its leave intent and the core's leave; returns the intent's Lamport time. */
function leaveOf(x: Serf, heard: Serf[], now = 10): number {
  x.leave(now);
  const intent = asUser(broadcasts(x.outbox())[0]!);
  for (const s of heard) {
    s.handle(intent, now);
    s.handle(core("leave", x.config.name), now);
    s.outbox();
  }
  return x.stats.memberTime - 1;
}

describe("member records in push-pull state (serf LocalState / MergeRemoteState)", () => {
  test("the state carries the member clock and every member's status time, left ones marked, in name order", () => {
    const x = serf("x", ["a", "c"]);
    const a = serf("a", ["c", "x"]);
    const l = leaveOf(x, [a]);
    const pp = decodeSerfPushPull(a.stateDelegate.localState(false));
    expect(pp.memberLTime).toBe(a.stats.memberTime);
    expect(pp.memberLTime).toBeGreaterThan(l);
    expect(pp.members).toEqual([{ name: "a", statusLTime: 0, left: false }, { name: "c", statusLTime: 0, left: false }, { name: "x", statusLTime: l, left: true }]);
  });

  test("a member that missed a leave (and then declared the leaver failed) learns it left: member-leave, not re-broadcast", () => {
    const x = serf("x", ["a", "b"]);
    const a = serf("a", ["b", "x"]), b = serf("b", ["a", "x"], 2);
    leaveOf(x, [a]);
    b.handle(core("failed", "x"), 20); // b's own failure detection
    expect(kinds(b.outbox())).toEqual(["member-failed:x"]);
    b.handle(pushPullFrom(a), 30);
    const o = b.outbox();
    expect(kinds(o)).toEqual(["member-leave:x"]);
    expect(b.member("x")).toMatchObject({ status: "left", statusChange: 30 });
    expect(o.requests).toEqual([]); // serf MergeRemoteState ignores the intents' rebroadcast
    expect(b.stats.memberTime).toBeGreaterThanOrEqual(a.stats.memberTime); // the clock was witnessed
    b.handle(pushPullFrom(a), 40); // again: nothing new
    expect(b.outbox()).toEqual({ events: [], requests: [], queries: [] });
  });

  test("before failure detection the leaver reads leaving, and left once the core reports it failed", () => {
    const x = serf("x", ["a", "b"]);
    const a = serf("a", ["b", "x"]), b = serf("b", ["a", "x"], 2);
    leaveOf(x, [a]);
    b.handle(pushPullFrom(a), 20);
    expect(b.member("x")?.status).toBe("leaving");
    expect(b.outbox()).toEqual({ events: [], requests: [], queries: [] });
    b.handle(core("failed", "x"), 30);
    expect(kinds(b.outbox())).toEqual(["member-leave:x"]);
    expect(b.member("x")?.status).toBe("left");
  });

  test("a leave that a peer learned from the core alone still spreads (the leave intent is one past its status time)", () => {
    const a = serf("a", ["b", "x"]), b = serf("b", ["a", "x"], 2);
    a.handle(core("leave", "x"), 10); // a missed the intent too
    expect(records(a).find((r) => r.name === "x")).toEqual({ name: "x", statusLTime: 0, left: true });
    b.handle(core("failed", "x"), 20);
    b.outbox();
    b.handle(pushPullFrom(a), 30);
    expect(kinds(b.outbox())).toEqual(["member-leave:x"]);
  });

  test("a member that came back (refuting its old leave with a newer join intent) is not marked left by an old push-pull", () => {
    const x = serf("x", ["a", "b"]);
    const a = serf("a", ["b", "x"]), b = serf("b", ["a", "x"], 2);
    const l = leaveOf(x, [a, b]);
    const old = pushPullFrom(a); // a's state with x left, before x came back

    // x restarts and joins through a: the join push-pull brings a's record of its leave, which it refutes (serf
    // handleNodeLeaveIntent about itself while alive) with a join intent past it, gossiped to all.
    const x2 = serf("x", [], 3);
    x2.handle(core("join", "a"), 100);
    x2.handle(pushPullFrom(a), 100);
    const xo = x2.outbox();
    expect(x2.member("x")?.status).toBe("alive");
    expect(xo.requests.some((r) => r.type === "leave")).toBe(false);
    const refute = broadcasts(xo);
    expect(refute.length).toBe(1);
    const j = records(x2).find((r) => r.name === "x")!.statusLTime;
    expect(j).toBeGreaterThan(l + 1);
    for (const s of [a, b]) {
      s.handle(asUser(refute[0]!), 110);
      s.handle(core("join", "x"), 110); // the core's alive at a newer incarnation
      expect(kinds(s.outbox())).toEqual(["member-join:x"]);
      expect(s.member("x")?.status).toBe("alive");
    }

    // The old push-pull, replayed to everyone (x included): nothing changes, nothing is sent.
    for (const s of [a, b, x2]) {
      s.handle(old, 120);
      expect(s.member("x")?.status).toBe("alive");
      expect(s.outbox()).toEqual({ events: [], requests: [], queries: [] });
    }
    // And a record at the old leave's own time (a peer that held x left while x refuted) is stale too.
    const stale = encodeSerfPushPull({ memberLTime: l + 1, members: [{ name: "x", statusLTime: l, left: true }], eventLTime: 0, queryLTime: 0, events: [] });
    b.handle({ type: "remote-state", state: stale, join: false }, 130);
    expect(b.member("x")?.status).toBe("alive");
  });

  test("join records: a newer one turns leaving back to alive; older or equal ones change nothing", () => {
    const b = serf("b", ["x"]);
    b.handle({ type: "remote-state", state: stateWith([{ name: "x", statusLTime: 4, left: true }]), join: false }, 0); // a leave at 5
    expect(b.member("x")?.status).toBe("leaving");
    b.handle({ type: "remote-state", state: stateWith([{ name: "x", statusLTime: 5, left: false }]), join: false }, 1);
    expect(b.member("x")?.status).toBe("leaving");
    b.handle({ type: "remote-state", state: stateWith([{ name: "x", statusLTime: 6, left: false }]), join: false }, 2);
    expect(b.member("x")?.status).toBe("alive");
    expect(b.outbox()).toEqual({ events: [], requests: [], queries: [] });
  });

  test("records about unknown members wait as recent intents, for at most serf's RecentIntentTimeout", () => {
    const b = serf("b");
    b.handle({ type: "remote-state", state: stateWith([{ name: "y", statusLTime: 4, left: true }, { name: "z", statusLTime: 2, left: false }]), join: false }, 0);
    expect(b.stats.intentQueue).toBe(2);
    b.handle(core("join", "y"), 1000); // y shows up within the timeout: the leave applies
    expect(b.member("y")?.status).toBe("leaving");
    b.handle({ type: "remote-state", state: stateWith([{ name: "w", statusLTime: 4, left: true }]), join: false }, 2000);
    b.tick(2000 + RECENT_INTENT_TIMEOUT_MS + 1);
    expect(b.stats.intentQueue).toBe(0); // reaped (serf reapIntents)
    b.handle(core("join", "w"), 2000 + RECENT_INTENT_TIMEOUT_MS + 2);
    expect(b.member("w")?.status).toBe("alive");
    expect(b.member("z")).toBeUndefined();
  });

  test("a remote state that does not decode is counted and changes nothing", () => {
    const b = serf("b", ["x"]);
    const state = stateWith([{ name: "x", statusLTime: 1, left: true }]);
    b.handle({ type: "remote-state", state: state.subarray(0, state.length - 1), join: false }, 0);
    expect(b.stats.badRemoteStates).toBe(1);
    expect(b.member("x")?.status).toBe("alive");
  });
});

describe("memberRecords / memberIntents", () => {
  test("records sort by name and mark left; intents put the left first, one past their time", () => {
    const recs = memberRecords([
      { name: "c", status: "failed", statusLTime: 3 }, { name: "a", status: "left", statusLTime: 7 },
      { name: "b", status: "leaving", statusLTime: 5 }, { name: "d", status: "left", statusLTime: 0 },
    ]);
    expect(recs).toEqual([
      { name: "a", statusLTime: 7, left: true }, { name: "b", statusLTime: 5, left: false },
      { name: "c", statusLTime: 3, left: false }, { name: "d", statusLTime: 0, left: true },
    ]);
    expect(memberIntents(recs).map((m) => `${m.kind === SerfKind.LeaveIntent ? "leave" : "join"}:${m.name}@${m.ltime}`))
      .toEqual(["leave:a@8", "leave:d@1", "join:b@5", "join:c@3"]);
  });
});

describe("RecentIntents (serf recentIntents)", () => {
  test("keeps the latest intent per node, forgets after the timeout, holds at most RECENT_INTENTS", () => {
    const r = new RecentIntents();
    expect(r.upsert("x", SerfKind.JoinIntent, 3, 0)).toBe(true);
    expect(r.upsert("x", SerfKind.LeaveIntent, 3, 1)).toBe(false); // not newer
    expect(r.upsert("x", SerfKind.LeaveIntent, 4, 2)).toBe(true);
    expect(r.take("x", 3)).toEqual({ kind: SerfKind.LeaveIntent, ltime: 4 });
    expect(r.take("x", 4)).toBeUndefined();
    r.upsert("y", SerfKind.JoinIntent, 9, 0);
    expect(r.upsert("y", SerfKind.JoinIntent, 1, RECENT_INTENT_TIMEOUT_MS + 1)).toBe(true); // the old one expired
    r.prune(2 * RECENT_INTENT_TIMEOUT_MS + 2);
    expect(r.size).toBe(0);
    for (let i = 0; i <= RECENT_INTENTS; i++) r.upsert(`n${i}`, SerfKind.JoinIntent, 1, 0);
    expect(r.size).toBe(RECENT_INTENTS);
    expect(r.take("n0", 0)).toBeUndefined(); // the first recorded went first
  });
});

function stateWith(members: SerfMemberRecord[]): Uint8Array {
  return encodeSerfPushPull({ memberLTime: 1, members, eventLTime: 0, queryLTime: 0, events: [] });
}
