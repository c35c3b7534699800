import { describe, expect, test } from "bun:test";
import type { KVWrite, KVWriteVerb } from "../model/index.ts";
import type { SessionCreate, StateCommand } from "./commands.ts";
import { check, harness, register, service, text, utf8, ws } from "./fixtures.test.ts";
import { lockDelayRejection } from "./lock_delay.ts";
import { kvGet } from "./queries_kv.ts";
import { sessionGet, sessionList, sessionsForNode } from "./queries_kv.ts";

const kv = (op: KVWriteVerb, Key: string, more: Partial<KVWrite> = {}): StateCommand => ({ type: "kv", op, entry: { Key, ...more } });
const create = (s: Partial<SessionCreate> & { ID: string }): StateCommand => ({ type: "session", op: "create", session: { Node: "n1", ...s } as SessionCreate });
const destroy = (id: string): StateCommand => ({ type: "session", op: "destroy", id });
const S = 1e9;

function withNode() {
  const h = harness();
  h.apply(register("n1", { Service: service("web"), Checks: [check("serfHealth", "passing"), check("svc", "passing", { ServiceID: "web" })] }));
  return h;
}

describe("session create", () => {
  test("stores the session with defaults and indexes", () => {
    const h = withNode();
    expect(h.apply(create({ ID: "S1", NodeChecks: ["serfHealth"], ServiceChecks: [{ ID: "svc" }], LockDelay: 15 * S }))).toEqual({ type: "session", id: "S1" });
    expect(sessionGet(h.store, ws(), "s1")).toEqual({
      index: 2,
      value: { ID: "S1", Name: "", Node: "n1", LockDelay: 15 * S, Behavior: "release", TTL: "", NodeChecks: ["serfHealth"], ServiceChecks: [{ ID: "svc" }], CreateIndex: 2, ModifyIndex: 2 },
    });
    h.apply(create({ ID: "S0" }));
    expect(sessionList(h.store, ws()).value.map((s) => s.ID)).toEqual(["S0", "S1"]);
    expect(sessionsForNode(h.store, ws(), "N1").value.map((s) => s.ID)).toEqual(["S0", "S1"]);
  });

  test.each([
    ["no ID", create({ ID: "" }), "Missing session ID"],
    ["a bad behavior", create({ ID: "s", Behavior: "explode" as never }), "Invalid session behavior: explode"],
    ["a missing node", create({ ID: "s", Node: "ghost" }), "Missing node registration"],
    ["a missing check", create({ ID: "s", NodeChecks: ["nope"] }), "Missing check 'nope' registration"],
    ["a missing service check", create({ ID: "s", ServiceChecks: [{ ID: "other" }] }), "Missing check 'other' registration"],
  ])("rejects %s", (_: string, cmd: StateCommand, error: string) => {
    const h = withNode();
    expect(h.apply(cmd)).toEqual({ type: "error", error });
    expect(h.store.db.sessions.size).toBe(0);
  });

  test("rejects a critical check", () => {
    const h = withNode();
    h.apply(register("n1", { Checks: [check("serfHealth", "critical")] }));
    expect(h.apply(create({ ID: "s", NodeChecks: ["serfHealth"] }))).toEqual({ type: "error", error: "Check 'serfHealth' is in critical state" });
  });
});

describe("locks", () => {
  test("lock, re-lock, contention, unlock and LockIndex", () => {
    const h = withNode();
    h.apply(create({ ID: "a" }));
    h.apply(create({ ID: "b" }));
    expect(h.apply(kv("lock", "k", { Session: "a", Value: utf8("1") }))).toEqual({ type: "kv", ok: true });
    expect(kvGet(h.store, ws(), "k").value).toMatchObject({ Session: "a", LockIndex: 1, CreateIndex: 4, ModifyIndex: 4 });
    expect(h.apply(kv("lock", "k", { Session: "b" }))).toEqual({ type: "kv", ok: false });
    expect(h.apply(kv("lock", "k", { Session: "a", Value: utf8("1") }))).toEqual({ type: "kv", ok: true });
    expect(kvGet(h.store, ws(), "k").value!.ModifyIndex).toBe(4);
    expect(h.apply(kv("unlock", "k", { Session: "b" }))).toEqual({ type: "kv", ok: false });
    expect(h.apply(kv("unlock", "k", { Session: "a", Value: utf8("2") }))).toEqual({ type: "kv", ok: true });
    const e = kvGet(h.store, ws(), "k").value!;
    expect([e.Session, e.LockIndex, text(e.Value), e.ModifyIndex]).toEqual([undefined, 1, "2", 8]);
    h.apply(kv("lock", "k", { Session: "b" }));
    expect(kvGet(h.store, ws(), "k").value).toMatchObject({ Session: "b", LockIndex: 2 });
  });

  test("a plain set keeps the lock holder", () => {
    const h = withNode();
    h.apply(create({ ID: "a" }));
    h.apply(kv("lock", "k", { Session: "a" }));
    h.apply(kv("set", "k", { Value: utf8("x") }));
    expect(kvGet(h.store, ws(), "k").value!.Session).toBe("a");
  });

  test.each([
    ["lock without a session", kv("lock", "k"), "missing session"],
    ["lock with an unknown session", kv("lock", "k", { Session: "ghost" }), 'invalid session "ghost"'],
    ["unlock without a session", kv("unlock", "k"), "missing session"],
  ])("%s is an error", (_: string, cmd: StateCommand, error: string) => {
    expect(withNode().apply(cmd)).toEqual({ type: "error", error });
  });
});

describe("session invalidation", () => {
  test("destroy releases held keys (value kept, ModifyIndex bumped) and starts the lock-delay", () => {
    const h = withNode();
    h.apply(create({ ID: "a", LockDelay: 10 * S }));
    h.apply(kv("lock", "k", { Session: "a", Value: utf8("v") }));
    h.apply(destroy("a"));
    expect(kvGet(h.store, ws(), "k").value).toMatchObject({ LockIndex: 1, ModifyIndex: 4 });
    expect(kvGet(h.store, ws(), "k").value!.Session).toBeUndefined();
    expect(text(kvGet(h.store, ws(), "k").value!.Value)).toBe("v");
    expect(h.store.lockDelayRemainingMs("k")).toBe(10_000);
    const lock = kv("lock", "k", { Session: "b" });
    expect(lockDelayRejection(h.store, lock)).toEqual({ type: "kv", ok: false });
    expect(lockDelayRejection(h.store, { type: "txn", ops: [{ KV: { Verb: "get", Key: "k" } }, { KV: { Verb: "lock", Key: "k", Session: "b" } }] })).toEqual({
      type: "txn", Results: null, Errors: [{ OpIndex: 1, What: 'failed to lock key "k" due to lock delay' }],
    });
    h.clock.advance(9_999);
    expect(lockDelayRejection(h.store, lock)).toBeDefined();
    h.clock.advance(1);
    expect(lockDelayRejection(h.store, lock)).toBeUndefined();
  });

  test("apply itself ignores the lock-delay (only proposers consult it)", () => {
    const h = withNode();
    h.apply(create({ ID: "a", LockDelay: 10 * S }));
    h.apply(create({ ID: "b" }));
    h.apply(kv("lock", "k", { Session: "a" }));
    h.apply(destroy("a"));
    expect(h.apply(kv("lock", "k", { Session: "b" }))).toEqual({ type: "kv", ok: true });
  });

  test("lock-delay is capped at 60 s", () => {
    const h = withNode();
    h.apply(create({ ID: "a", LockDelay: 3600 * S }));
    h.apply(kv("lock", "k", { Session: "a" }));
    h.apply(destroy("a"));
    expect(h.store.lockDelayRemainingMs("k")).toBe(60_000);
  });

  test("a check going critical destroys sessions tied to it; Behavior delete removes held keys", () => {
    const h = withNode();
    h.apply(create({ ID: "a", Behavior: "delete", NodeChecks: ["serfHealth"] }));
    h.apply(create({ ID: "b", ServiceChecks: [{ ID: "svc" }] }));
    h.apply(kv("lock", "k1", { Session: "a" }));
    h.apply(kv("lock", "k2", { Session: "b" }));
    h.apply(register("n1", { Checks: [check("serfHealth", "critical")] }));
    expect(sessionGet(h.store, ws(), "a").value).toBeNull();
    expect(sessionGet(h.store, ws(), "b").value).not.toBeNull();
    expect(kvGet(h.store, ws(), "k1").value).toBeNull();
    expect(h.store.db.tombstones.get("k1")).toBe(6);
    h.apply({ type: "deregister", req: { Node: "n1", ServiceID: "web" } });
    expect(sessionGet(h.store, ws(), "b").value).toBeNull();
    expect(kvGet(h.store, ws(), "k2").value!.Session).toBeUndefined();
  });

  test("destroying a missing session is a no-op", () => {
    const h = withNode();
    expect(h.apply(destroy("ghost"))).toEqual({ type: "ok" });
    expect(h.store.db.indexes.get("sessions")).toBeUndefined();
  });
});
