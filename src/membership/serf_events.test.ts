import { describe, expect, test } from "bun:test";
import { seededRng } from "../platform/index.ts";
import {
  CodecError, SERF_PUSH_PULL_KIND, SERF_PUSH_PULL_V1_KIND, SerfKind, decodeSerfPushPull, decodeStream, encodeSerfMsg, encodeSerfPushPull, encodeStream,
} from "./codec.ts";
import { LAN_PROFILE, memberlistConfig } from "./config.ts";
import { Memberlist, type StateDelegate } from "./memberlist.ts";
import { EVENTS_PER_WINDOW_TIME, SerfEventLog } from "./serf_events.ts";
import { SERF_DEFAULTS, Serf, type SerfConfig, type SerfOutbox, type SerfRequest } from "./serf.ts";
import type { MemberEvent, PushPullMsg } from "./types.ts";
import { Writer } from "./wire.ts";

const text = (s: string) => new TextEncoder().encode(s);
const cfg = (name: string, o: Partial<SerfConfig> = {}): SerfConfig => ({ ...SERF_DEFAULTS, name, tags: {}, ...o });
const users = (o: SerfOutbox) => o.events.flatMap((e) => (e.type === "user" ? [`${e.name}@${e.ltime}`] : []));
const broadcasts = (o: SerfOutbox) => o.requests.filter((r): r is Extract<SerfRequest, { type: "broadcast" }> => r.type === "broadcast");
const remote = (from: Serf, join = false): MemberEvent => ({ type: "remote-state", state: from.stateDelegate.localState(join), join });

function serf(name: string, o: Partial<SerfConfig> = {}): Serf {
  const s = new Serf(cfg(name, o), seededRng(1), 0);
  s.handle({ type: "join", member: { name, addr: name, meta: new Uint8Array(0), incarnation: 1, state: "alive", stateChange: 0 } }, 0);
  s.outbox();
  return s;
}

describe("user events in push-pull state (serf LocalState / MergeRemoteState)", () => {
  test("a member that missed an event's gossip delivers it from a push-pull once, without re-broadcasting it", () => {
    const a = serf("a"), b = serf("b");
    a.userEvent("deploy", text("v2"), 0);
    const gossiped = broadcasts(a.outbox())[0]!;
    b.handle(remote(a), 10);
    const o = b.outbox();
    expect(users(o)).toEqual(["deploy@1"]);
    expect(o.events[0]).toMatchObject({ type: "user", name: "deploy", payload: text("v2"), ltime: 1 });
    expect(broadcasts(o)).toEqual([]); // serf MergeRemoteState ignores handleUserEvent's rebroadcast
    b.handle(remote(a), 20);
    b.handle({ type: "user", key: gossiped.key, payload: gossiped.payload }, 30); // the gossiped copy, late
    const again = b.outbox();
    expect(users(again)).toEqual([]);
    expect(broadcasts(again)).toEqual([]);
    // b now pushes it on: c, which heard from neither, gets it from b.
    const c = serf("c");
    c.handle(remote(b), 40);
    expect(users(c.outbox())).toEqual(["deploy@1"]);
  });

  test("the peer's event and query clocks are witnessed (minus one: nothing was sent at them yet)", () => {
    const a = serf("a"), b = serf("b");
    for (let i = 0; i < 5; i++) a.userEvent(`e${i}`, text(""), 0);
    a.query("q", text(""), {}, 0);
    a.query("q", text(""), {}, 0);
    expect([a.stats.eventTime, a.stats.queryTime]).toEqual([6, 3]);
    b.handle(remote(a), 0);
    expect([b.stats.eventTime, b.stats.queryTime]).toEqual([6, 3]);
    expect(users(b.outbox())).toEqual(["e0@1", "e1@2", "e2@3", "e3@4", "e4@5"]);
  });

  test("only the events of the last eventWindow Lamport times are pushed and accepted", () => {
    const a = serf("a", { eventWindow: 4 });
    for (let i = 0; i < 10; i++) a.userEvent(`e${i}`, text(""), 0);
    const state = decodeSerfPushPull(a.stateDelegate.localState(false));
    expect(state.eventLTime).toBe(11);
    expect(state.events.map((e) => e.key)).toEqual(["e7:1:ae6", "e8:1:ae7", "e9:1:ae8", "e10:1:ae9"]);
    const b = serf("b", { eventWindow: 4 });
    b.handle(remote(a), 0);
    expect(users(b.outbox())).toEqual(["e6@7", "e7@8", "e8@9", "e9@10"]);
  });

  test("during a join that ignores old events, a join push-pull raises the event floor to the peer's clock", () => {
    const a = serf("a");
    a.userEvent("old", text(""), 0);
    const b = serf("b");
    const endJoin = b.ignoreOldEvents();
    b.handle(remote(a, false), 0); // not a join push-pull: delivered as usual
    const c = serf("c");
    const endC = c.ignoreOldEvents();
    c.handle(remote(a, true), 0);
    endC();
    endC(); // twice is harmless
    endJoin();
    expect(users(b.outbox())).toEqual(["old@1"]);
    expect(users(c.outbox())).toEqual([]);
    a.userEvent("new", text(""), 0);
    c.handle(remote(a, true), 0); // after the join: no floor change, the newer event is delivered
    expect(users(c.outbox())).toEqual(["new@2"]);
    // Without ignoreOld (serf's reconnect joins) the old events are replayed.
    const d = serf("d");
    d.handle(remote(a, true), 0);
    expect(users(d.outbox())).toEqual(["old@1", "new@2"]);
  });

  test("a state that does not decode, or carries something other than user events, is counted and dropped", () => {
    const b = serf("b");
    b.handle({ type: "remote-state", state: new Uint8Array([6, 1, 2]), join: false }, 0);
    const intent = encodeSerfMsg(SerfKind.LeaveIntent, 3, "x", new Uint8Array(0));
    const event = encodeSerfMsg(SerfKind.Event, 4, "ok", new Uint8Array(0));
    const events = [{ key: "l", msg: intent }, { key: "g", msg: new Uint8Array([1]) }, { key: "e", msg: event }];
    const state = encodeSerfPushPull({ memberLTime: 0, members: [], eventLTime: 5, queryLTime: 1, events });
    b.handle({ type: "remote-state", state, join: false }, 0);
    expect(b.stats.badRemoteStates).toBe(3);
    expect(users(b.outbox())).toEqual(["ok@4"]);
    expect(b.member("x")).toBeUndefined();
  });
});

describe("codec: serf push-pull state", () => {
  test("round trip; strict decoding", () => {
    const s = {
      memberLTime: 12, members: [{ name: "a", statusLTime: 3, left: false }, { name: "b", statusLTime: 7, left: true }],
      eventLTime: 9, queryLTime: 4, events: [{ key: "e1:1:adeploy", msg: encodeSerfMsg(SerfKind.Event, 1, "deploy", text("v")) }],
    };
    const b = encodeSerfPushPull(s);
    expect(b[0]).toBe(SERF_PUSH_PULL_KIND);
    expect(decodeSerfPushPull(b)).toEqual(s);
    expect(() => decodeSerfPushPull(b.subarray(0, b.length - 1))).toThrow(CodecError);
    expect(() => decodeSerfPushPull(new Uint8Array([...b, 0]))).toThrow(CodecError);
    expect(() => decodeSerfPushPull(new Uint8Array([8, ...b.subarray(1)]))).toThrow(CodecError);
    const bytes = (...parts: number[][]) => new Uint8Array(parts.flat());
    const u32 = (n: number) => [n >>> 24, (n >>> 16) & 0xff, (n >>> 8) & 0xff, n & 0xff];
    const member = (name: string, ltime: number, left: number) => [0, name.length, ...text(name), ...u32(ltime), left];
    const v2 = (members: number[][], events = [u32(0)]) => bytes([7], u32(1), u32(1), u32(1), u32(members.length), ...members, ...events);
    expect(decodeSerfPushPull(v2([member("x", 2, 1)])).members).toEqual([{ name: "x", statusLTime: 2, left: true }]);
    expect(() => decodeSerfPushPull(v2([member("x", 2, 2)]))).toThrow("bad boolean");
    expect(() => decodeSerfPushPull(v2([member("", 2, 0)]))).toThrow("empty or duplicate");
    expect(() => decodeSerfPushPull(v2([member("x", 2, 0), member("x", 3, 1)]))).toThrow("empty or duplicate");
    expect(() => decodeSerfPushPull(bytes([7], u32(1), u32(1), u32(1), u32(0xffff_ffff), u32(0)))).toThrow("cannot fit");
    expect(() => decodeSerfPushPull(bytes([7], u32(1), u32(1), u32(1), u32(0), u32(1), [0xff, 0xff, 0xff]))).toThrow("cannot fit");
  });

  test("a version-1 state (clocks and events, no member part) still decodes, with no members", () => {
    const msg = encodeSerfMsg(SerfKind.Event, 1, "deploy", text("v"));
    const w = new Writer().u8(SERF_PUSH_PULL_V1_KIND).u32(9).u32(4).u32(1).str("e1:1:adeploy").bytes32(msg);
    const v1 = w.finish();
    expect(decodeSerfPushPull(v1)).toEqual({ memberLTime: 0, members: [], eventLTime: 9, queryLTime: 4, events: [{ key: "e1:1:adeploy", msg }] });
    expect(() => decodeSerfPushPull(new Uint8Array([...v1, 0]))).toThrow(CodecError);
    const huge = new Uint8Array([6, 0, 0, 0, 1, 0, 0, 0, 1, 0xff, 0xff, 0xff, 0xff]);
    expect(() => decodeSerfPushPull(huge)).toThrow("cannot fit");
    // A version-1 peer's events are merged as before.
    const b = serf("b");
    b.handle({ type: "remote-state", state: v1, join: false }, 0);
    expect(users(b.outbox())).toEqual(["deploy@1"]);
    expect([b.stats.eventTime, b.stats.queryTime, b.stats.badRemoteStates]).toEqual([9, 4, 0]);
  });
});

describe("memberlist StateDelegate (Delegate.LocalState / MergeRemoteState)", () => {
  const peer = { name: "b", addr: "b", meta: new Uint8Array(0), incarnation: 1, state: "alive" as const };
  const pushPull = (userState: Uint8Array, join: boolean): PushPullMsg => ({ type: "push-pull", reply: false, join, nodes: [peer], userState });
  const core = (state?: StateDelegate) => new Memberlist(memberlistConfig(LAN_PROFILE, { name: "a", addr: "a" }), seededRng(1), 0, undefined, state);

  test("push-pulls carry the delegate's state; a peer's non-empty state comes out after the members it brought", () => {
    const asked: boolean[] = [];
    const ml = core({ localState: (join) => (asked.push(join), new Uint8Array([join ? 2 : 1])) });
    ml.outbox();
    const reply = ml.handleStream("b", pushPull(new Uint8Array([9, 9]), true), 0) as PushPullMsg;
    expect(reply.userState).toEqual(new Uint8Array([2]));
    expect(decodeStream(encodeStream(reply))).toEqual(reply);
    expect(ml.outbox().events.map((e) => e.type === "remote-state" ? `remote-state:${e.state.join()}:${e.join}` : `${e.type}`)).toEqual(["join", "remote-state:9,9:true"]);
    ml.join(["c"], 0);
    const req = ml.outbox().streamRequests[0]!.msg as PushPullMsg;
    expect(req.userState).toEqual(new Uint8Array([2]));
    expect(asked).toEqual([true, true]);
    ml.handleStream("b", pushPull(new Uint8Array(0), false), 0); // empty: nothing to merge (memberlist)
    expect(ml.outbox().events).toEqual([]);
  });

  test("without a delegate the state is empty and a peer's is ignored", () => {
    const ml = core();
    const reply = ml.handleStream("b", pushPull(new Uint8Array([9]), false), 0) as PushPullMsg;
    expect(reply.userState).toEqual(new Uint8Array(0));
    expect(ml.outbox().events.map((e) => e.type)).toEqual(["join", "join"]);
  });
});

test("a peer's push-pull with tens of thousands of events is bounded: merged in time linear in the bound, and kept to it", () => {
  const log = new SerfEventLog(64);
  const raw = encodeSerfMsg(SerfKind.Event, 5, "x", new Uint8Array(0));
  const events = Array.from({ length: 40_000 }, (_, i) => ({ key: `k${i}`, msg: raw }));
  const merged = log.merge({ eventLTime: 6, events }, false);
  const cap = 64 * EVENTS_PER_WINDOW_TIME;
  expect(merged.news.length).toBe(cap);
  expect(merged.bad).toBe(40_000 - cap);
  // What this node pushes on is bounded too, so the flood does not spread.
  expect(log.localState().events.length).toBe(cap);
});
