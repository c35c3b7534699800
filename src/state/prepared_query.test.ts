import { describe, expect, test } from "bun:test";
import { AUTOPILOT_DEFAULTS, type PreparedQuery } from "../model/index.ts";
import { decodeCommand, encodeCommand } from "./codec.ts";
import type { PreparedQueryWrite, StateCommand } from "./commands.ts";
import { check, harness, ok, register, ws } from "./fixtures.test.ts";
import { autopilotConfigGet, preparedQueryGet, preparedQueryList, preparedQueryResolve } from "./queries_prepared.ts";
import { checkSnapshot } from "./snapshot_check.ts";
import { createStateStore } from "./store.ts";
import { simClock } from "../../test/harness/sim_clock.ts";
import { waitFor } from "./watch.ts";

const ID1 = "8f246b77-f3e1-ff88-5b48-8ec93abf3e05";
const ID2 = "a7e1ab52-9e8f-4b9c-ae0b-3b7e7b3d2c10";
const ID3 = "0b0c0d0e-1111-2222-3333-444455556666";

export function pq(ID: string, more: Partial<PreparedQueryWrite> = {}, service: Partial<PreparedQuery["Service"]> = {}): PreparedQueryWrite {
  return {
    ID, Name: "", Session: "", Token: "",
    Template: { Type: "", Regexp: "", RemoveEmptyTags: false },
    Service: {
      Service: "web", Failover: { NearestN: 0, Datacenters: null }, OnlyPassing: false, IgnoreCheckIDs: null, Near: "",
      Tags: null, NodeMeta: null, ServiceMeta: null, Connect: false, ...service,
    },
    DNS: { TTL: "" },
    ...more,
  };
}
const TEMPLATE = { Type: "name_prefix_match", Regexp: "", RemoveEmptyTags: false };
const create = (query: PreparedQueryWrite): StateCommand => ({ type: "prepared-query", op: "create", query });
const update = (query: PreparedQueryWrite): StateCommand => ({ type: "prepared-query", op: "update", query });
const del = (id: string): StateCommand => ({ type: "prepared-query", op: "delete", id });

function withSession() {
  const h = harness();
  h.apply(register("n1", { Checks: [check("serfHealth", "passing")] }));
  h.apply({ type: "session", op: "create", session: { ID: "S1", Name: "", Node: "n1", LockDelay: 0, Behavior: "release", TTL: "", NodeChecks: [], ServiceChecks: null } });
  return h;
}

describe("prepared-query writes", () => {
  test("create, update keeps CreateIndex, delete; list and get by ID (case-insensitive)", () => {
    const h = withSession();
    expect(h.apply(create(pq(ID1, { Name: "web" })))).toEqual(ok);
    expect(h.apply(create(pq(ID2, { Session: "s1" })))).toEqual(ok);
    expect(preparedQueryList(h.store, ws()).value.map((q) => q.ID)).toEqual([ID1, ID2]);
    expect(h.apply(update(pq(ID1, { Name: "web2" })))).toEqual(ok);
    expect(preparedQueryGet(h.store, ws(), ID1.toUpperCase())).toEqual({ index: 5, value: { ...pq(ID1, { Name: "web2" }), CreateIndex: 3, ModifyIndex: 5 } });
    expect(h.apply(create(pq(ID3, { Name: "WEB" })))).toEqual(ok); // the old name is free again
    expect(h.apply(del(ID1))).toEqual(ok);
    expect(preparedQueryGet(h.store, ws(), ID1).value).toBeNull();
  });

  test.each([
    ["an empty ID", create(pq("", { Name: "x" })), "Missing Query ID"],
    ["an update of a missing query", update(pq(ID3, { Name: "x" })), `Cannot modify non-existent prepared query: '${ID3}'`],
    ["a delete of a missing query", del(ID3), `Cannot modify non-existent prepared query: '${ID3}'`],
    ["a create over an existing ID", create(pq(ID1, { Name: "other" })), `Prepared query ID '${ID1}' is already in use`],
    ["a name in use (case-insensitive)", create(pq(ID3, { Name: "Web" })), "name 'Web' aliases an existing query name"],
    ["a second unnamed template", create(pq(ID3, { Template: TEMPLATE })), "a query template with an empty name already exists"],
    ["a name that is another query's ID", create(pq(ID3, { Name: ID1.toUpperCase() })), `name '${ID1.toUpperCase()}' aliases an existing query ID`],
    ["an unknown session", create(pq(ID3, { Session: "nope" })), 'invalid session "nope"'],
    ["an unknown template type", create(pq(ID3, { Name: "t", Template: { ...TEMPLATE, Type: "glob" } })), "failed compiling template: Bad Template.Type 'glob'"],
  ])("refuses %s and writes nothing", (_: string, cmd: StateCommand, error: string) => {
    const h = withSession();
    h.apply(create(pq(ID1, { Name: "web" })));
    h.apply(create(pq(ID2, { Template: TEMPLATE })));
    const before = h.store.snapshot();
    expect(h.apply(cmd)).toEqual({ type: "error", error });
    expect(new TextDecoder().decode(h.store.snapshot()).replace(/"lastIndex":\d+/, "")).toBe(new TextDecoder().decode(before).replace(/"lastIndex":\d+/, ""));
  });

  test("destroying a session (directly or through its node) deletes the queries bound to it", () => {
    const h = withSession();
    h.apply(create(pq(ID1, { Session: "S1" })));
    h.apply(create(pq(ID2, { Name: "kept" })));
    h.apply({ type: "session", op: "destroy", id: "s1" });
    expect(preparedQueryList(h.store, ws()).value.map((q) => q.ID)).toEqual([ID2]);
    h.apply({ type: "session", op: "create", session: { ID: "S2", Name: "", Node: "n1", LockDelay: 0, Behavior: "release", TTL: "", NodeChecks: [], ServiceChecks: null } });
    h.apply(create(pq(ID3, { Session: "S2" })));
    h.apply({ type: "deregister", req: { Node: "n1" } });
    expect(preparedQueryList(h.store, ws()).value.map((q) => q.ID)).toEqual([ID2]);
  });

  test("a write wakes a blocked list; another table's write does not", async () => {
    const h = withSession();
    const w = ws();
    preparedQueryList(h.store, w);
    let outcome: string | undefined;
    void waitFor(w, { clock: h.clock, timeoutMs: 60_000 }).then((o) => (outcome = o));
    h.apply({ type: "kv", op: "set", entry: { Key: "k" } });
    for (let i = 0; i < 20; i++) await Promise.resolve();
    expect(outcome).toBeUndefined();
    h.apply(create(pq(ID1, { Name: "a" })));
    for (let i = 0; i < 20; i++) await Promise.resolve();
    expect(outcome).toBe("changed");
  });
});

describe("preparedQueryResolve", () => {
  function resolver() {
    const h = withSession();
    h.apply(create(pq(ID1, { Name: "geo-db" })));
    h.apply(create(pq(ID2, { Name: "geo", Template: TEMPLATE })));
    h.apply(create(pq(ID3, { Template: TEMPLATE })));
    return (s: string) => {
      const v = preparedQueryResolve(h.store, ws(), s).value;
      return v.type === "found" ? v.query.ID : v;
    };
  }

  test("ID first, then exact name, then the longest template prefix, case-insensitive", () => {
    const r = resolver();
    expect(r(ID1)).toBe(ID1);
    expect(r("GEO-DB")).toBe(ID1);
    expect(r("geo-db-x")).toBe(ID2);
    expect(r("Geox")).toBe(ID2);
    expect(r("other")).toBe(ID3);
    expect(r("")).toEqual({ type: "error", error: "Missing Query ID" });
    expect(r(ID2)).toEqual({ type: "error", error: "prepared query templates can only be resolved up by name, not by ID" });
  });

  test("nothing matches without a catch-all template", () => {
    const h = withSession();
    h.apply(create(pq(ID1, { Name: "a" })));
    expect(preparedQueryResolve(h.store, ws(), "b").value).toEqual({ type: "not-found" });
  });
});

describe("codec", () => {
  test("round-trips prepared-query and autopilot commands; refuses bad shapes", () => {
    const cmds: StateCommand[] = [
      create(pq(ID1, { Name: "x" }, { Tags: ["a"], NodeMeta: { k: "v" }, Failover: { NearestN: 2, Datacenters: ["dc2"] } })),
      update(pq(ID1)),
      del(ID1),
      { type: "autopilot", op: "set-config", config: AUTOPILOT_DEFAULTS },
      { type: "autopilot", op: "set-config", config: AUTOPILOT_DEFAULTS, cas: 7 },
    ];
    for (const c of cmds) expect(decodeCommand(encodeCommand(c))).toEqual(c);
    const bad = (o: unknown) => () => decodeCommand(new TextEncoder().encode(JSON.stringify(o)));
    expect(bad({ type: "prepared-query", op: "create", query: { ...pq(ID1), Service: { ...pq(ID1).Service, Failover: { NearestN: -1 } } } }))
      .toThrow("invalid state command: prepared-query.query.Service.Failover.NearestN must be a non-negative integer");
    expect(bad({ type: "prepared-query", op: "nuke", id: ID1 })).toThrow("prepared-query.op must be create, update or delete");
    expect(bad({ type: "autopilot", op: "set-config", config: { ...AUTOPILOT_DEFAULTS, MinQuorum: "3" } })).toThrow("autopilot.config.MinQuorum must be a number");
  });
});

describe("autopilot configuration", () => {
  test("null before any set; set keeps CreateIndex; CAS by ModifyIndex", () => {
    const h = harness();
    expect(autopilotConfigGet(h.store, ws())).toEqual({ index: 0, value: null });
    expect(h.apply({ type: "autopilot", op: "set-config", config: AUTOPILOT_DEFAULTS, cas: 5 })).toEqual({ type: "cas", ok: false });
    expect(h.apply({ type: "autopilot", op: "set-config", config: AUTOPILOT_DEFAULTS, cas: 0 })).toEqual({ type: "cas", ok: true });
    expect(h.apply({ type: "autopilot", op: "set-config", config: { ...AUTOPILOT_DEFAULTS, MinQuorum: 3 } })).toEqual(ok);
    expect(autopilotConfigGet(h.store, ws())).toEqual({ index: 3, value: { ...AUTOPILOT_DEFAULTS, MinQuorum: 3, CreateIndex: 2, ModifyIndex: 3 } });
    expect(h.apply({ type: "autopilot", op: "set-config", config: AUTOPILOT_DEFAULTS, cas: 0 })).toEqual({ type: "cas", ok: false });
    expect(h.apply({ type: "autopilot", op: "set-config", config: AUTOPILOT_DEFAULTS, cas: 2 })).toEqual({ type: "cas", ok: false });
    expect(h.apply({ type: "autopilot", op: "set-config", config: AUTOPILOT_DEFAULTS, cas: 3 })).toEqual({ type: "cas", ok: true });
    expect(autopilotConfigGet(h.store, ws()).value).toEqual({ ...AUTOPILOT_DEFAULTS, CreateIndex: 2, ModifyIndex: 6 });
  });
});

describe("snapshots", () => {
  test("prepared queries and the autopilot configuration survive a snapshot and pass the restore checks", () => {
    const h = withSession();
    h.apply(create(pq(ID1, { Session: "S1", Name: "a" })));
    h.apply(create(pq(ID2, { Template: TEMPLATE })));
    h.apply({ type: "autopilot", op: "set-config", config: AUTOPILOT_DEFAULTS });
    const snap = h.store.snapshot();
    expect(() => checkSnapshot(snap)).not.toThrow();
    const copy = createStateStore({ clock: simClock() });
    copy.restore(snap);
    expect(copy.snapshot()).toEqual(snap);
    expect(preparedQueryResolve(copy, ws(), "anything").value).toMatchObject({ type: "found", query: { ID: ID2 } });
    expect(autopilotConfigGet(copy, ws()).value?.ModifyIndex).toBe(5);
    copy.apply(10, { type: "session", op: "destroy", id: "S1" });
    expect(preparedQueryList(copy, ws()).value.map((q) => q.ID)).toEqual([ID2]);
  });

  test("the restore checks refuse bad prepared query rows", () => {
    const h = withSession();
    h.apply(create(pq(ID1, { Session: "S1", Name: "a" })));
    const doc = JSON.parse(new TextDecoder().decode(h.store.snapshot()));
    const bad = (patch: (d: typeof doc) => void, msg: string) => {
      const d = structuredClone(doc);
      patch(d);
      expect(() => checkSnapshot(new TextEncoder().encode(JSON.stringify(d)))).toThrow(msg);
    };
    bad((d) => (d.sessions = []), `preparedQueries[0] is bound to session "S1", which the snapshot does not have`);
    bad((d) => d.preparedQueries.push({ ...d.preparedQueries[0], ID: ID2, Session: "" }), 'preparedQueries[1] repeats prepared query name "a"');
    bad((d) => (d.preparedQueries[0].Template.Type = "glob"), 'preparedQueries[0].Template.Type "glob" is not a template type');
    bad((d) => (d.preparedQueries[0].ModifyIndex = 99), "preparedQueries[0].ModifyIndex (99) is above the snapshot's lastIndex");
    bad((d) => (d.autopilotConfig = { ...AUTOPILOT_DEFAULTS, MaxTrailingLogs: -1, CreateIndex: 1, ModifyIndex: 1 }), "autopilotConfig.MaxTrailingLogs must be a non-negative integer");
  });
});
