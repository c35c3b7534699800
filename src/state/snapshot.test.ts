import { describe, expect, test } from "bun:test";
import { encodeCommand } from "./codec.ts";
import type { StateCommand } from "./commands.ts";
import { check, harness, register, service, utf8, ws } from "./fixtures.test.ts";
import { catalogNodeServices, catalogServices } from "./queries_catalog.ts";
import { healthServiceNodes } from "./queries_health.ts";
import { kvList, sessionList } from "./queries_kv.ts";
import { createStateMachine } from "./state_machine.ts";

const history: StateCommand[] = [
  register("n1", {
    ID: "aaaaaaaa-0000-0000-0000-000000000001", Datacenter: "dc1", TaggedAddresses: { wan: "1.2.3.4" }, NodeMeta: { b: "2", a: "1" },
    Service: service("web1", "web", { Tags: ["x"], TaggedAddresses: { lan: { Address: "10.0.0.1", Port: 80 } }, Meta: { m: "v" } }),
    Checks: [check("serfHealth", "passing"), check("web-check", "warning", { ServiceID: "web1", Definition: { HTTP: "http://x", Interval: "10s" } })],
  }),
  register("n2", { Service: service("p", "web-proxy", { Kind: "connect-proxy", Proxy: { DestinationServiceName: "web", Upstreams: [{ DestinationName: "db", LocalBindPort: 9 }] } as never }) }),
  { type: "session", op: "create", session: { ID: "sess-1", Node: "n1", NodeChecks: ["serfHealth"], LockDelay: 1e9, Behavior: "release", TTL: "30s", Name: "x", ServiceChecks: null } },
  { type: "kv", op: "lock", entry: { Key: "locks/a", Session: "sess-1", Value: utf8("held"), Flags: 3 } },
  { type: "kv", op: "set", entry: { Key: "cfg/a", Value: utf8("1") } },
  { type: "kv", op: "set", entry: { Key: "cfg/b", Value: null } },
  { type: "kv", op: "delete", entry: { Key: "cfg/a" } },
  { type: "kv", op: "set", entry: { Key: "bin", Value: new Uint8Array([0, 255, 128]) } },
];

function build(cmds: readonly StateCommand[]) {
  const h = harness();
  for (const c of cmds) expect(h.apply(c).type).not.toBe("error");
  return h;
}

function views(h: ReturnType<typeof harness>) {
  const s = h.store;
  return [
    catalogServices(s, ws()), catalogNodeServices(s, ws(), "n1"), healthServiceNodes(s, ws(), "web"),
    healthServiceNodes(s, ws(), "web", { connect: true }), kvList(s, ws(), ""), kvList(s, ws(), "cfg/"), sessionList(s, ws()),
  ];
}

describe("snapshot and restore", () => {
  test("round trip restores every table, index and tombstone; bytes are stable", () => {
    const a = build(history);
    const snap = a.store.snapshot();
    const b = harness();
    b.store.restore(snap);
    expect(b.store.snapshot()).toEqual(snap);
    expect(b.store.lastIndex()).toBe(history.length);
    expect(views(b)).toEqual(views(a));
    expect(b.store.db.tombstones.get("cfg/a")).toBe(7);
    expect([...b.store.db.indexes].sort()).toEqual([...a.store.db.indexes].sort());
    const next: StateCommand[] = [
      { type: "deregister", req: { Node: "n1" } },
      { type: "kv", op: "delete-tree", entry: { Key: "" } },
    ];
    for (const c of next) {
      a.store.apply(a.store.lastIndex() + 1, c);
      b.store.apply(b.store.lastIndex() + 1, c);
    }
    expect(b.store.snapshot()).toEqual(a.store.snapshot());
  });

  test("equal states give equal bytes whatever the map insertion order", () => {
    const one = build([register("n", { NodeMeta: { a: "1", b: "2" } })]);
    const two = build([register("n", { NodeMeta: { b: "2", a: "1" } })]);
    expect(one.store.snapshot()).toEqual(two.store.snapshot());
  });

  test("restore clears lock-delays and a malformed snapshot changes nothing", () => {
    const a = build(history);
    a.apply({ type: "session", op: "destroy", id: "sess-1" });
    expect(a.store.lockDelayRemainingMs("locks/a")).toBe(1000);
    const snap = a.store.snapshot();
    a.store.restore(snap);
    expect(a.store.lockDelayRemainingMs("locks/a")).toBe(0);
    for (const garbage of [utf8("nope"), utf8("{}"), utf8('{"format":"causeway-state/1","lastIndex":1,"nodes":[{}]}')]) {
      expect(() => a.store.restore(garbage)).toThrow(/invalid state snapshot/);
    }
    expect(a.store.snapshot()).toEqual(snap);
  });

  test("a replica snapshot carries running lock-delays; restoring it starts them again from now", async () => {
    const a = build(history);
    a.apply({ type: "session", op: "destroy", id: "sess-1" });
    await a.clock.advance(400);
    const replica = a.store.replicaSnapshot();
    expect(JSON.parse(new TextDecoder().decode(replica)).lockDelays).toEqual([["locks/a", 600]]);
    expect(JSON.parse(new TextDecoder().decode(a.store.snapshot())).lockDelays).toBeUndefined();
    // Another server (a follower catching up, or this one restarting) restores it later: the remainder
    // runs from its now, so the delay is never shorter than the leader's.
    const b = harness();
    await b.clock.advance(5000);
    b.store.restore(replica);
    expect(b.store.lockDelayRemainingMs("locks/a")).toBe(600);
    expect(createStateMachine(b.store).apply(b.store.lastIndex() + 1, encodeCommand({ type: "kv", op: "set", entry: { Key: "x", Value: null } }))).toEqual({ type: "kv", ok: true });
    await b.clock.advance(600);
    expect(b.store.lockDelayRemainingMs("locks/a")).toBe(0);
    // An expired delay is not carried; a malformed one refuses the snapshot.
    expect(JSON.parse(new TextDecoder().decode(b.store.replicaSnapshot())).lockDelays).toBeUndefined();
    const doc = JSON.parse(new TextDecoder().decode(replica));
    doc.lockDelays = [["locks/a", -1]];
    expect(() => b.store.restore(utf8(JSON.stringify(doc)))).toThrow("invalid state snapshot: lockDelays[0] must be [key, ms]");
  });
});

describe("state machine adapter", () => {
  test("applies encoded commands, answers garbage with an error and never throws", () => {
    const h = harness();
    const sm = createStateMachine(h.store);
    expect(sm.apply(1, encodeCommand(register("n1")))).toEqual({ type: "ok" });
    expect(sm.apply(2, encodeCommand({ type: "kv", op: "cas", entry: { Key: "k", Value: utf8("v"), ModifyIndex: 0 } }))).toEqual({ type: "kv", ok: true });
    expect(sm.apply(3, utf8("\u0000garbage"))).toEqual({ type: "error", error: "invalid state command: not UTF-8 JSON" });
    expect(h.store.lastIndex()).toBe(3);
    const other = harness();
    const sm2 = createStateMachine(other.store);
    sm2.restore(sm.snapshot());
    expect(sm2.snapshot()).toEqual(sm.snapshot());
  });
});

describe("state machine adapter: decode once", () => {
  test("a command the proposer decoded is applied from its decoded form, others are decoded", () => {
    const h = harness();
    const decoded = new WeakMap<Uint8Array, StateCommand>();
    const sm = createStateMachine(h.store, decoded);
    const own = encodeCommand({ type: "kv", op: "set", entry: { Key: "own", Value: utf8("1") } });
    // The cached form wins over the bytes (which a decode would turn into key "own").
    decoded.set(own, { type: "kv", op: "set", entry: { Key: "cached", Value: utf8("1") } });
    expect(sm.apply(1, own)).toEqual({ type: "kv", ok: true });
    expect(sm.apply(2, encodeCommand({ type: "kv", op: "set", entry: { Key: "other", Value: utf8("2") } }))).toEqual({ type: "kv", ok: true });
    expect(kvList(h.store, ws(), "").value.map((e) => e.Key)).toEqual(["cached", "other"]);
  });
});

describe("restore command", () => {
  test("replaces the state on apply, at the command's index, and wakes watchers; bad data changes nothing", () => {
    const a = build(history);
    const b = build([register("other"), register("other2")]);
    const sm = createStateMachine(b.store);
    const cmd: StateCommand = { type: "restore", data: a.store.snapshot() };
    expect(sm.apply(50, encodeCommand(cmd))).toEqual({ type: "ok" });
    expect(b.store.lastIndex()).toBe(50);
    expect(views(b)).toEqual(views(a));
    const before = b.store.snapshot();
    expect(b.store.apply(51, { type: "restore", data: utf8("junk") })).toEqual({ type: "error", error: "invalid state snapshot: not JSON" });
    expect(JSON.parse(new TextDecoder().decode(b.store.snapshot())).nodes).toEqual(JSON.parse(new TextDecoder().decode(before)).nodes);
  });
});
