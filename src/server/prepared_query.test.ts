import { describe, expect, test } from "bun:test";
import type { QuerySource } from "../model/index.ts";
import { seededRng } from "../platform/index.ts";
import { createStateStore, WatchSet, type PreparedQueryWrite, type StateCommand } from "../state/index.ts";
import { simClock } from "../../test/harness/sim_clock.ts";
import { runRead } from "./run_read.ts";

const AGENT: QuerySource = { Datacenter: "dc1", Segment: "", Node: "agent1", Ip: "" };
const ID1 = "8f246b77-f3e1-ff88-5b48-8ec93abf3e05";
const ID2 = "a7e1ab52-9e8f-4b9c-ae0b-3b7e7b3d2c10";

function query(ID: string, more: Partial<PreparedQueryWrite>, service: Partial<PreparedQueryWrite["Service"]> = {}): PreparedQueryWrite {
  return {
    ID, Name: "", Session: "", Token: "", Template: { Type: "", Regexp: "", RemoveEmptyTags: false },
    Service: {
      Service: "web", Failover: { NearestN: 0, Datacenters: null }, OnlyPassing: false, IgnoreCheckIDs: null, Near: "", Tags: null,
      NodeMeta: null, ServiceMeta: null, Connect: false, ...service,
    },
    DNS: { TTL: "5s" }, ...more,
  };
}

function setup() {
  const store = createStateStore({ clock: simClock() });
  let idx = 0;
  const apply = (c: StateCommand) => expect(store.apply(++idx, c)).toEqual({ type: "ok" });
  for (const [node, status, tags] of [["n1", "passing", ["v1"]], ["n2", "warning", ["v2"]], ["n3", "critical", ["v1"]], ["n4", "passing", ["v2"]]] as const) {
    apply({
      type: "register",
      req: { Node: node, Address: `10.0.0.${node[1]}`, Service: { ID: "web", Service: "web", Tags: [...tags] } as never, Check: { CheckID: "c", Name: "c", Status: status, ServiceID: "web" } as never },
    });
  }
  apply({ type: "prepared-query", op: "create", query: query(ID1, { Name: "web" }, { OnlyPassing: false }) });
  apply({ type: "prepared-query", op: "create", query: query(ID2, { Name: "web-", Template: { Type: "name_prefix_match", Regexp: "", RemoveEmptyTags: false } }, { Tags: ["${name.suffix}"], Near: "_ip" }) });
  const rng = seededRng(1);
  const ctx = { term: () => 1, datacenter: "dc1", random: () => rng.next() };
  const read = (q: Parameters<typeof runRead>[2]) => runRead(store, new WatchSet(), q, ctx).value;
  return { read, store };
}

describe("prepared-query reads on the server", () => {
  test("execute: healthy instances of this datacenter, shuffled, cut to the limit, the near node first", () => {
    const { read } = setup();
    const all = read({ type: "prepared-query-execute", idOrName: "web", agent: AGENT, source: { ...AGENT, Node: "" }, limit: 0, connect: false }) as never as {
      type: string; value: { Nodes: { Node: { Node: string } }[]; Datacenter: string; DNS: unknown; Failovers: number };
    };
    expect(all.type).toBe("found");
    expect(all.value.Nodes.map((n) => n.Node.Node).sort()).toEqual(["n1", "n2", "n4"]);
    expect([all.value.Datacenter, all.value.DNS, all.value.Failovers]).toEqual(["dc1", { TTL: "5s" }, 0]);
    const near = read({ type: "prepared-query-execute", idOrName: ID1, agent: AGENT, source: { ...AGENT, Node: "n4" }, limit: 2, connect: false }) as never as {
      value: { Nodes: { Node: { Node: string } }[] };
    };
    expect(near.value.Nodes.length).toBe(2);
    expect(near.value.Nodes[0]!.Node.Node).toBe("n4");
  });

  test("a template renders for the name asked; _ip sorts near the node with the source address", () => {
    const { read } = setup();
    const r = read({ type: "prepared-query-execute", idOrName: "web-v2", agent: AGENT, source: { ...AGENT, Node: "", Ip: "10.0.0.4" }, limit: 0, connect: false }) as never as {
      query: { Service: { Tags: string[] } }; value: { Nodes: { Node: { Node: string } }[] };
    };
    expect(r.query.Service.Tags).toEqual(["v2"]);
    expect(r.value.Nodes.map((n) => n.Node.Node)).toEqual(["n4", "n2"]);
    expect(read({ type: "prepared-query-explain", idOrName: "web-v1", agent: AGENT })).toMatchObject({ type: "found", query: { ID: ID2, Service: { Tags: ["v1"] } } });
    expect(read({ type: "prepared-query-explain", idOrName: ID2, agent: AGENT })).toEqual({ type: "error", error: "prepared query templates can only be resolved up by name, not by ID" });
    expect(read({ type: "prepared-query-explain", idOrName: "nope", agent: AGENT })).toEqual({ type: "not-found" });
  });

  test("execute-remote runs the query it is given, stamped with this datacenter", () => {
    const { read } = setup();
    const q = { ...query(ID1, { Name: "shipped" }, { Tags: ["v1"] }), CreateIndex: 1, ModifyIndex: 1 };
    const r = read({ type: "prepared-query-execute-remote", query: q, limit: 0, connect: false }) as never as { Datacenter: string; Nodes: { Node: { Node: string } }[] };
    expect([r.Datacenter, r.Nodes.map((n) => n.Node.Node)]).toEqual(["dc1", ["n1"]]);
  });
});
