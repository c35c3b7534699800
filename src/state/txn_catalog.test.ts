import { describe, expect, test } from "bun:test";
import type { HealthCheck, Node, NodeService, TxnCheckOp, TxnNodeOp, TxnOp, TxnServiceOp, Unindexed } from "../model/index.ts";
import type { StateCommand } from "./commands.ts";
import { decodeCommand, encodeCommand } from "./codec.ts";
import { decodeTxnCommand } from "./codec_txn.ts";
import { check, harness, register, service, text, utf8, ws } from "./fixtures.test.ts";
import { catalogNode } from "./queries_catalog.ts";
import { healthNodeChecks } from "./queries_health.ts";
import { kvGet, kvReadTxn } from "./queries_kv.ts";
import { txnWire } from "./codec_txn.ts";

const ID1 = "11111111-2222-3333-4444-555555555555";
const txn = (...ops: TxnOp[]): StateCommand => ({ type: "txn", ops });
const nodeRec = (name: string, more: Partial<Unindexed<Node>> = {}): Unindexed<Node> => ({
  ID: "", Node: name, Address: "10.0.0.9", Datacenter: "dc1", TaggedAddresses: {}, Meta: {}, ...more,
});
const node = (Verb: TxnNodeOp["Verb"], name: string, more: Partial<Unindexed<Node>> = {}, Index?: number): TxnOp =>
  ({ Node: { Verb, Node: nodeRec(name, more), ...(Index !== undefined ? { Index } : {}) } });
const svc = (Verb: TxnServiceOp["Verb"], nodeName: string, s: Partial<Unindexed<NodeService>> & { ID: string }, Index?: number): TxnOp =>
  ({ Service: { Verb, Node: nodeName, Service: s, ...(Index !== undefined ? { Index } : {}) } });
const chk = (Verb: TxnCheckOp["Verb"], c: Partial<Unindexed<HealthCheck>> & { Node: string; CheckID: string }, Index?: number): TxnOp =>
  ({ Check: { Verb, Check: c, ...(Index !== undefined ? { Index } : {}) } });
const kvSet = (Key: string, v: string): TxnOp => ({ KV: { Verb: "set", Key, Value: utf8(v) } });

/** The state's tables, without lastIndex (a rejected command still counts as applied). */
function tables(snap: Uint8Array): unknown {
  const doc = JSON.parse(new TextDecoder().decode(snap));
  delete doc.lastIndex;
  return doc;
}

describe("txn catalog ops", () => {
  test("node, service, check and KV writes land together at one index, with Consul's result shapes", () => {
    const h = harness();
    const r = h.apply(txn(
      node("set", "n1", { ID: ID1, Meta: { rack: "a" } }),
      svc("set", "n1", service("web", "web", { Port: 80, Tags: ["v1"] })),
      chk("set", { ...check("web-alive", "passing"), Node: "n1", ServiceID: "web" }),
      kvSet("config/web", "on"),
    ));
    if (r.type !== "txn") throw new Error(r.type);
    expect(r.Errors).toBeNull();
    expect(r.Results).toHaveLength(4);
    expect(r.Results![0]).toEqual({ Node: { ...nodeRec("n1", { ID: ID1, Meta: { rack: "a" } }), CreateIndex: 1, ModifyIndex: 1 } });
    expect(r.Results![1]!.Service).toMatchObject({ ID: "web", Service: "web", Port: 80, Tags: ["v1"], Weights: { Passing: 1, Warning: 1 }, CreateIndex: 1, ModifyIndex: 1 });
    expect(r.Results![2]!.Check).toMatchObject({ Node: "n1", CheckID: "web-alive", Status: "passing", ServiceName: "web", ServiceTags: ["v1"], CreateIndex: 1 });
    expect(r.Results![3]!.KV).toMatchObject({ Key: "config/web", Value: null, ModifyIndex: 1 });
    expect(catalogNode(h.store, ws(), "n1").value?.Meta).toEqual({ rack: "a" });
    expect(text(kvGet(h.store, ws(), "config/web").value!.Value)).toBe("on");
  });

  test("a failing catalog op rolls back the KV and catalog writes before and after it", () => {
    const h = harness();
    h.apply(register("n1"));
    h.apply(txn(kvSet("k", "old")));
    const before = h.store.snapshot();
    const r = h.apply(txn(
      kvSet("k", "new"),
      node("set", "n2"),
      svc("set", "ghost", service("api")),
      chk("set", { ...check("c", "passing"), Node: "n1", ServiceID: "nope" }),
      node("delete", "n1"),
      node("get", "missing"),
      svc("get", "n1", { ID: "zzz" }),
      chk("get", { Node: "n1", CheckID: "zzz" }),
      { Node: { Verb: "frob" as never, Node: nodeRec("n1") } },
      { Service: { Verb: "frob" as never, Node: "n1", Service: { ID: "x" } } },
      { Check: { Verb: "frob" as never, Check: { Node: "n1", CheckID: "x" } } },
      {} as TxnOp,
    ));
    expect(r).toEqual({
      type: "txn",
      Results: null,
      Errors: [
        { OpIndex: 2, What: "Missing node registration" },
        { OpIndex: 3, What: "Missing service registration" },
        { OpIndex: 5, What: 'node "missing" doesn\'t exist' },
        { OpIndex: 6, What: 'service "zzz" on node "n1" doesn\'t exist' },
        { OpIndex: 7, What: 'check "zzz" on node "n1" doesn\'t exist' },
        { OpIndex: 8, What: 'unknown Node verb "frob"' },
        { OpIndex: 9, What: 'unknown Service verb "frob"' },
        { OpIndex: 10, What: 'unknown Check verb "frob"' },
        { OpIndex: 11, What: "no operation specified" },
      ],
    });
    expect(tables(h.store.snapshot())).toEqual(tables(before));
    expect(catalogNode(h.store, ws(), "n2").value).toBeNull();
    expect(text(kvGet(h.store, ws(), "k").value!.Value)).toBe("old");
  });

  test("a failing KV op rolls back catalog writes", () => {
    const h = harness();
    const before = h.store.snapshot();
    const r = h.apply(txn(node("set", "n1"), svc("set", "n1", service("web")), { KV: { Verb: "cas", Key: "k", Index: 9 } }));
    expect(r).toEqual({ type: "txn", Results: null, Errors: [{ OpIndex: 2, What: 'failed to set key "k", index is stale' }] });
    expect(tables(h.store.snapshot())).toEqual(tables(before));
  });

  test("node cas: 0 only creates; otherwise the ModifyIndex must match; delete-cas likewise", () => {
    const h = harness();
    expect(h.apply(txn(node("cas", "n1", {}, 0)))).toMatchObject({ Errors: null, Results: [{ Node: { Node: "n1", ModifyIndex: 1 } }] });
    expect(h.apply(txn(node("cas", "n1", {}, 0)))).toMatchObject({ Errors: [{ OpIndex: 0, What: 'failed to set node "n1", index is stale' }] });
    expect(h.apply(txn(node("cas", "n1", { Address: "10.1.1.1" }, 7)))).toMatchObject({ Errors: [{ What: 'failed to set node "n1", index is stale' }] });
    expect(h.apply(txn(node("cas", "n9", {}, 1)))).toMatchObject({ Errors: [{ What: 'failed to set node "n9", index is stale' }] });
    expect(h.apply(txn(node("cas", "n1", { Address: "10.1.1.1" }, 1)))).toMatchObject({ Results: [{ Node: { Address: "10.1.1.1", CreateIndex: 1, ModifyIndex: 5 } }] });
    expect(h.apply(txn(node("delete-cas", "n1", {}, 1)))).toMatchObject({ Errors: [{ What: 'failed to delete node "n1", index is stale' }] });
    expect(h.apply(txn(node("delete-cas", "nx", {}, 0)))).toMatchObject({ Errors: [{ What: 'failed to delete node "nx", index is stale' }] });
    expect(h.apply(txn(node("delete-cas", "n1", {}, 5)))).toEqual({ type: "txn", Results: [], Errors: null });
    expect(catalogNode(h.store, ws(), "n1").value).toBeNull();
  });

  test("node get finds by ID when one is given (it must be a UUID), else by name; delete removes services and checks", () => {
    const h = harness();
    h.apply(register("n1", { ID: ID1, Service: service("web"), Checks: [check("c1", "passing")] }));
    expect(h.apply(txn(node("get", "other-name", { ID: ID1.toUpperCase() })))).toMatchObject({ Results: [{ Node: { Node: "n1", ID: ID1 } }] });
    expect(h.apply(txn(node("get", "n1", { ID: "nope" })))).toMatchObject({
      Errors: [{ What: "node lookup by ID failed, wrong UUID: uuid string is wrong length for 'nope'" }],
    });
    expect(h.apply(txn(node("delete", "N1"), node("delete", "never-there")))).toEqual({ type: "txn", Results: [], Errors: null });
    expect(catalogNode(h.store, ws(), "n1").value).toBeNull();
    expect(h.store.db.services.get("n1")).toBeUndefined();
    expect(healthNodeChecks(h.store, ws(), "n1").value).toEqual([]);
  });

  test("service set, cas, get, delete and delete-cas", () => {
    const h = harness();
    h.apply(register("n1"));
    expect(h.apply(txn(svc("cas", "n1", service("web"), 0)))).toMatchObject({ Results: [{ Service: { ID: "web", CreateIndex: 2, ModifyIndex: 2 } }] });
    expect(h.apply(txn(svc("cas", "n1", service("web"), 0)))).toMatchObject({ Errors: [{ What: 'failed to set service "web" on node "n1", index is stale' }] });
    expect(h.apply(txn(svc("cas", "n1", service("web", "web", { Port: 81 }), 2)))).toMatchObject({ Results: [{ Service: { Port: 81, CreateIndex: 2, ModifyIndex: 4 } }] });
    expect(h.apply(txn(svc("get", "N1", { ID: "WEB" })))).toMatchObject({ Results: [{ Service: { ID: "web", Port: 81 } }] });
    expect(h.apply(txn(svc("delete-cas", "n1", { ID: "web" }, 2)))).toMatchObject({ Errors: [{ What: 'failed to delete service "web" on node "n1", index is stale' }] });
    expect(h.apply(txn(svc("delete-cas", "n1", { ID: "web" }, 4)))).toEqual({ type: "txn", Results: [], Errors: null });
    expect(h.apply(txn(svc("set", "n1", service("db")), svc("delete", "n1", { ID: "db" }), svc("delete", "n1", { ID: "db" })))).toMatchObject({ Errors: null });
    expect(h.store.db.services.get("n1")?.size ?? 0).toBe(0);
  });

  test("check set, cas, get, delete and delete-cas; Status defaults to critical", () => {
    const h = harness();
    h.apply(register("n1"));
    const c = { Node: "n1", CheckID: "mem", Name: "mem" };
    expect(h.apply(txn(chk("set", c)))).toMatchObject({ Results: [{ Check: { CheckID: "mem", Status: "critical", CreateIndex: 2, ModifyIndex: 2 } }] });
    expect(h.apply(txn(chk("cas", { ...c, Status: "passing" }, 9)))).toMatchObject({ Errors: [{ What: 'failed to set check "mem" on node "n1", index is stale' }] });
    expect(h.apply(txn(chk("cas", { ...c, Status: "passing" }, 0)))).toMatchObject({ Errors: [{ What: 'failed to set check "mem" on node "n1", index is stale' }] });
    expect(h.apply(txn(chk("cas", { ...c, Status: "passing" }, 2)))).toMatchObject({ Results: [{ Check: { Status: "passing", ModifyIndex: 5 } }] });
    expect(h.apply(txn(chk("get", { Node: "n1", CheckID: "mem" })))).toMatchObject({ Results: [{ Check: { Status: "passing" } }] });
    expect(h.apply(txn(chk("delete-cas", c, 2)))).toMatchObject({ Errors: [{ What: 'failed to delete check "mem" on node "n1", index is stale' }] });
    expect(h.apply(txn(chk("delete-cas", c, 5)))).toEqual({ type: "txn", Results: [], Errors: null });
    expect(h.apply(txn(chk("set", c), chk("delete", c)))).toMatchObject({ Errors: null });
    expect(healthNodeChecks(h.store, ws(), "n1").value).toEqual([]);
    expect(h.apply(txn(chk("set", { ...c, Node: "ghost" })))).toMatchObject({ Errors: [{ What: "Missing node registration" }] });
  });

  test("a compare index past 2^53 never matches", () => {
    const h = harness();
    h.apply(register("n1"));
    const r = h.apply({ type: "txn", ops: [{ Node: { Verb: "delete-cas", Node: nodeRec("n1"), Index: 2n ** 60n } }] });
    expect(r).toMatchObject({ Errors: [{ What: 'failed to delete node "n1", index is stale' }] });
  });

  test("read-only transactions accept catalog gets and refuse catalog writes", () => {
    const h = harness();
    h.apply(register("n1", { Service: service("web"), Checks: [check("c1", "passing")] }));
    h.apply(txn(kvSet("a", "1")));
    const r = kvReadTxn(h.store, [node("get", "n1"), svc("get", "n1", { ID: "web" }), chk("get", { Node: "n1", CheckID: "c1" }), { KV: { Verb: "get", Key: "a" } }]);
    expect(r).toMatchObject({ index: 2, Errors: null, Results: [{ Node: { Node: "n1" } }, { Service: { ID: "web" } }, { Check: { CheckID: "c1" } }, { KV: { Key: "a" } }] });
    expect(kvReadTxn(h.store, [svc("delete", "n1", { ID: "web" })])).toEqual({ index: 2, Results: null, Errors: [{ OpIndex: 0, What: '"delete" is not a read operation' }] });
    expect(h.store.db.services.get("n1")?.size).toBe(1);
  });
});

describe("txn command codec", () => {
  test("catalog ops survive the log's JSON form", () => {
    const cmd = txn(
      node("cas", "n1", { ID: ID1, TaggedAddresses: { lan: "10.0.0.1" } }, 3),
      svc("set", "n1", service("web", "web", { Tags: ["a"], Meta: { m: "1" } })),
      chk("delete-cas", { Node: "n1", CheckID: "c" }, 7),
      kvSet("k", "v"),
    );
    const wire = JSON.parse(JSON.stringify(txnWire(cmd as Extract<StateCommand, { type: "txn" }>)));
    expect(decodeTxnCommand(wire)).toEqual(cmd);
    // Through codec.ts as a whole (needs its txn case to use txnWire).
    expect(decodeCommand(encodeCommand(cmd))).toEqual(cmd);
  });

  test("malformed ops are refused with the path", () => {
    const bad = (ops: unknown[]) => () => decodeTxnCommand({ type: "txn", ops });
    expect(bad([{}])).toThrow("invalid state command: txn.ops[0] must have exactly one of KV, Node, Service or Check");
    expect(bad([{ KV: { Verb: "get", Key: "a" }, Node: { Verb: "get" } }])).toThrow("exactly one of");
    expect(bad([{ Node: { Verb: "get", Node: {} } }])).toThrow("txn.ops[0].Node.Node.Node must be a string");
    expect(bad([{ Service: { Verb: "get", Node: "n", Service: { Port: "x" } } }])).toThrow("txn.ops[0].Service.Service.Port must be a number");
    expect(bad([{ Service: { Verb: "get", Node: "n", Service: {} } }])).toThrow("txn.ops[0].Service.Service.ID must be a string");
    expect(bad([{ Check: { Verb: "set", Check: { Node: "n", CheckID: "c", Status: "meh" } } }])).toThrow("txn.ops[0].Check.Check.Status must be passing");
    expect(bad([{ Check: { Verb: "set", Check: { Node: "n", CheckID: "c" }, Index: -1 } }])).toThrow("txn.ops[0].Check.Index must be an unsigned");
  });
});
