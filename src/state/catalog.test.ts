import { describe, expect, test } from "bun:test";
import type { StateCommand } from "./commands.ts";
import { check, harness, ok, register, service, ws } from "./fixtures.test.ts";
import { catalogNode, catalogNodeServices, catalogServiceNodes, catalogServiceNodesByAddress } from "./queries_catalog.ts";
import { healthNodeChecks, healthServiceChecks } from "./queries_health.ts";

const idx = (h: ReturnType<typeof harness>, name: string) => h.store.db.indexes.get(name);

describe("service instances by address (DNS reverse lookups)", () => {
  test("every service registered with exactly that address, by node then ID; the node's own address is not a match", () => {
    const h = harness();
    h.apply(register("n2", { Service: service("b", "api", { Address: "10.9.0.1" }) }));
    h.apply(register("n1", { Service: service("z", "web", { Address: "10.9.0.1" }) }));
    h.apply(register("n1", { Service: service("a", "db", { Address: "10.9.0.1" }) }));
    h.apply(register("n3", { Service: service("c", "other", { Address: "10.9.0.2" }) }));
    const r = catalogServiceNodesByAddress(h.store, ws(), "10.9.0.1");
    expect(r.value.map((s) => [s.Node, s.ServiceID, s.ServiceName])).toEqual([["n1", "a", "db"], ["n1", "z", "web"], ["n2", "b", "api"]]);
    expect(r.index).toBe(idx(h, "services")!);
    expect(catalogServiceNodesByAddress(h.store, ws(), "10.0.0.1").value).toEqual([]);
  });
});

describe("register", () => {
  test("creates node, service and checks stamped with the Raft index", () => {
    const h = harness();
    const r = h.apply(register("n1", {
      ID: "11111111-2222-3333-4444-555555555555", Datacenter: "dc1", NodeMeta: { rack: "a" },
      Service: service("web1", "web", { Tags: ["v1"], Port: 80 }),
      Check: check("c1", "passing", { ServiceID: "web1" }),
      Checks: [check("serfHealth", "passing")],
    }));
    expect(r).toEqual(ok);
    const node = catalogNode(h.store, ws(), "N1").value!;
    expect(node).toEqual({
      ID: "11111111-2222-3333-4444-555555555555", Node: "n1", Address: "10.0.0.1", Datacenter: "dc1",
      TaggedAddresses: {}, Meta: { rack: "a" }, CreateIndex: 1, ModifyIndex: 1,
    });
    const svc = catalogNodeServices(h.store, ws(), "n1").value!.Services.web1!;
    expect(svc).toEqual({
      ID: "web1", Service: "web", Tags: ["v1"], Address: "", Meta: null, Port: 80, Weights: { Passing: 1, Warning: 1 },
      EnableTagOverride: false, Proxy: { MeshGateway: {}, Expose: {} }, Connect: {}, CreateIndex: 1, ModifyIndex: 1,
    });
    const checks = healthNodeChecks(h.store, ws(), "n1").value;
    expect(checks.map((c) => [c.CheckID, c.ServiceName, c.ServiceTags, c.CreateIndex])).toEqual([
      ["c1", "web", ["v1"], 1],
      ["serfHealth", "", null, 1],
    ]);
    for (const t of ["nodes", "services", "checks", "service.web"]) expect(idx(h, t)).toBe(1);
  });

  test("an unchanged re-register writes nothing and bumps no index", () => {
    const h = harness();
    const cmd = register("n1", { Service: service("web"), Check: check("c", "passing", { ServiceID: "web" }) });
    h.apply(cmd);
    h.apply(cmd);
    expect(h.idx).toBe(2);
    const csn = catalogServiceNodes(h.store, ws(), "web");
    expect(csn.index).toBe(1);
    expect(csn.value[0]!.ModifyIndex).toBe(1);
    expect(healthNodeChecks(h.store, ws(), "n1").value[0]!.ModifyIndex).toBe(1);
    for (const t of ["nodes", "services", "checks", "service.web"]) expect(idx(h, t)).toBe(1);
  });

  test("an update keeps CreateIndex and moves ModifyIndex and the service's entry", () => {
    const h = harness();
    h.apply(register("n1", { Service: service("web", "web", { Port: 1 }) }));
    h.apply(register("n1", { Service: service("web", "web", { Port: 2 }) }));
    const s = catalogServiceNodes(h.store, ws(), "web").value[0]!;
    expect([s.CreateIndex, s.ModifyIndex, s.ServicePort]).toEqual([1, 2, 2]);
    expect(idx(h, "service.web")).toBe(2);
    expect(idx(h, "nodes")).toBe(1);
  });

  test("a node change moves the entries of every service on it", () => {
    const h = harness();
    h.apply(register("n1", { Service: service("a") }));
    h.apply(register("n1", { Service: service("b") }));
    h.apply(register("n1", { Address: "10.9.9.9" }));
    expect([idx(h, "service.a"), idx(h, "service.b"), idx(h, "nodes")]).toEqual([3, 3, 3]);
    expect(catalogNode(h.store, ws(), "n1").value!.CreateIndex).toBe(1);
  });

  test("SkipNodeUpdate leaves the node alone", () => {
    const h = harness();
    h.apply(register("n1", { NodeMeta: { a: "1" } }));
    h.apply(register("n1", { Address: "", SkipNodeUpdate: true, Service: service("web") }));
    expect(catalogNode(h.store, ws(), "n1").value).toMatchObject({ Address: "10.0.0.1", Meta: { a: "1" }, ModifyIndex: 1 });
  });

  test("a node-level check change moves its node's services; a service check only its service", () => {
    const h = harness();
    h.apply(register("n1", { Service: service("a") }));
    h.apply(register("n1", { Service: service("b") }));
    h.apply(register("n1", { Check: check("node", "passing") }));
    expect([idx(h, "service.a"), idx(h, "service.b")]).toEqual([3, 3]);
    h.apply(register("n1", { Check: check("ca", "warning", { ServiceID: "a" }) }));
    expect([idx(h, "service.a"), idx(h, "service.b"), idx(h, "checks")]).toEqual([4, 3, 4]);
  });

  test("a check's Status defaults to critical and its CheckID to its Name", () => {
    const h = harness();
    h.apply(register("n1", { Check: { Name: "mem" } as never }));
    expect(healthNodeChecks(h.store, ws(), "n1").value[0]).toMatchObject({ CheckID: "mem", Status: "critical" });
  });

  test.each([
    ["check for a missing service", register("n1", { Check: check("c", "passing", { ServiceID: "nope" }) }), "failed inserting check: Missing service registration"],
    ["check for another node", register("n1", { Check: check("c", "passing", { Node: "n2" }) }), 'check node "n2" does not match node "n1"'],
  ])("rejects a %s and changes nothing", (_: string, cmd: StateCommand, error: string) => {
    const h = harness();
    expect(h.apply(cmd)).toEqual({ type: "error", error });
    expect(catalogNode(h.store, ws(), "n1").value).toBeNull();
    expect(h.store.db.indexes.size).toBe(0);
  });

  test("renaming a node by ID moves it; a healthy node keeps its name from another ID", () => {
    const h = harness();
    const id = "aaaaaaaa-0000-0000-0000-000000000001";
    h.apply(register("old", { ID: id, Service: service("web") }));
    h.apply(register("new", { ID: id }));
    expect(catalogNode(h.store, ws(), "old").value).toBeNull();
    expect(catalogNode(h.store, ws(), "new").value).toMatchObject({ ID: id, CreateIndex: 1, ModifyIndex: 2 });
    expect(catalogServiceNodes(h.store, ws(), "web").value).toEqual([]);
    h.apply(register("new", { ID: id, Checks: [check("serfHealth", "passing")] }));
    const r = h.apply(register("NEW", { ID: "bbbbbbbb-0000-0000-0000-000000000002" }));
    expect(r).toEqual({
      type: "error",
      error: `failed inserting node: Error while renaming Node ID: "bbbbbbbb-0000-0000-0000-000000000002": Node name NEW is reserved by node ${id} with name new`,
    });
  });

  test("a node without an ID may be taken over by one with an ID", () => {
    const h = harness();
    h.apply(register("n1", { Checks: [check("serfHealth", "passing")] }));
    expect(h.apply(register("n1", { ID: "cccccccc-0000-0000-0000-000000000003" }))).toEqual(ok);
    expect(catalogNodeServices(h.store, ws(), "cccccccc").value!.Node.Node).toBe("n1");
  });
});

describe("deregister", () => {
  test("a service removes its checks; the last instance drops the service entry and sets extinction", () => {
    const h = harness();
    h.apply(register("n1", { Service: service("web"), Checks: [check("c", "passing", { ServiceID: "web" }), check("n", "passing")] }));
    h.apply(register("n2", { Service: service("web") }));
    expect(h.apply({ type: "deregister", req: { Node: "n1", ServiceID: "WEB" } })).toEqual(ok);
    expect(healthNodeChecks(h.store, ws(), "n1").value.map((c) => c.CheckID)).toEqual(["n"]);
    expect([idx(h, "service.web"), idx(h, "checks"), idx(h, "services")]).toEqual([3, 3, 3]);
    h.apply({ type: "deregister", req: { Node: "n2", ServiceID: "web" } });
    expect(idx(h, "service.web")).toBeUndefined();
    expect(idx(h, "service_last_extinction")).toBe(4);
    expect(catalogServiceNodes(h.store, ws(), "web").index).toBe(4);
  });

  test("a check alone", () => {
    const h = harness();
    h.apply(register("n1", { Checks: [check("a", "passing"), check("b", "passing")] }));
    h.apply({ type: "deregister", req: { Node: "n1", CheckID: "a" } });
    expect(healthNodeChecks(h.store, ws(), "n1")).toEqual({ index: 2, value: [expect.objectContaining({ CheckID: "b" })] });
  });

  test("a node removes its services, checks and sessions; missing things are no-ops", () => {
    const h = harness();
    h.apply(register("n1", { Service: service("web"), Checks: [check("serfHealth", "passing")] }));
    h.apply({ type: "session", op: "create", session: { ID: "s1", Node: "n1", NodeChecks: ["serfHealth"] } as never });
    expect(h.apply({ type: "deregister", req: { Node: "nope" } })).toEqual(ok);
    expect(h.apply({ type: "deregister", req: { Node: "n1", ServiceID: "nope" } })).toEqual(ok);
    h.apply({ type: "deregister", req: { Node: "N1" } });
    expect(catalogNode(h.store, ws(), "n1").value).toBeNull();
    expect(catalogServiceNodes(h.store, ws(), "web").value).toEqual([]);
    expect(healthServiceChecks(h.store, ws(), "web").value).toEqual([]);
    expect(h.store.db.sessions.size).toBe(0);
    expect([idx(h, "nodes"), idx(h, "sessions"), idx(h, "service_last_extinction")]).toEqual([5, 5, 5]);
  });
});

describe("service summaries (/v1/internal/ui/services)", () => {
  test("per name: kind, tags, nodes, instances, check counts (node checks once per instance), external sources", async () => {
    const { uiServiceSummaries } = await import("./queries_health.ts");
    const h = harness();
    h.apply(register("n1", { Service: service("web1", "web", { Tags: ["v1"], Meta: { "external-source": "nomad" } }), Checks: [check("serfHealth", "passing"), check("w1", "warning", { ServiceID: "web1" })] }));
    h.apply(register("n2", { Service: service("web2", "web", { Tags: ["v2"] }), Checks: [check("serfHealth", "critical"), check("w2", "passing", { ServiceID: "web2" })] }));
    h.apply(register("n2", { Service: service("gw", "mesh-gateway", { Kind: "mesh-gateway", Port: 8443 }) }));
    const r = uiServiceSummaries(h.store, ws());
    expect(r.value).toEqual([
      { Kind: "mesh-gateway", Name: "mesh-gateway", Tags: [], Nodes: ["n2"], InstanceCount: 1, ChecksPassing: 0, ChecksWarning: 0, ChecksCritical: 1, ExternalSources: [] },
      { Name: "web", Tags: ["v1", "v2"], Nodes: ["n1", "n2"], InstanceCount: 2, ChecksPassing: 2, ChecksWarning: 1, ChecksCritical: 1, ExternalSources: ["nomad"] },
    ]);
  });
});

describe("node dumps (/v1/internal/ui/nodes)", () => {
  test("every node by name with its services and all its checks", async () => {
    const { uiNodes } = await import("./queries_health.ts");
    const h = harness();
    h.apply(register("n2", { Service: service("web2", "web"), Checks: [check("serfHealth", "passing"), check("w2", "critical", { ServiceID: "web2" })] }));
    h.apply(register("n1", { Service: service("db1", "db") }));
    const r = uiNodes(h.store, ws());
    expect(r.value.map((n) => [n.Node, n.Services.map((s) => s.ID), n.Checks.map((c) => `${c.CheckID}:${c.Status}`)])).toEqual([
      ["n1", ["db1"], []],
      ["n2", ["web2"], ["serfHealth:passing", "w2:critical"]],
    ]);
    expect(r.index).toBe(2);
  });
});
