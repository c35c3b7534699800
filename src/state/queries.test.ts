import { beforeEach, describe, expect, test } from "bun:test";
import { seededRng } from "../platform/index.ts";
import { check, harness, register, service, ws, type Harness } from "./fixtures.test.ts";
import { catalogNodes, catalogNodeServices, catalogServiceNodes, catalogServices } from "./queries_catalog.ts";
import { healthChecksInState, healthNodeChecks, healthServiceChecks, healthServiceNodes, healthServicesOfKind } from "./queries_health.ts";

let h: Harness;

beforeEach(() => {
  h = harness();
  h.apply(register("zeta", { NodeMeta: { env: "prod" }, Service: service("web2", "web", { Tags: ["v2", "b"] }) })); // 1
  h.apply(register("Alpha", { NodeMeta: { env: "dev" }, Service: service("web1", "web", { Tags: ["v1", "b"] }) })); // 2
  h.apply(register("alpha2", { ID: "abcdef00-0000-0000-0000-000000000000", Service: service("db", "db") })); // 3
  h.apply(register("zeta", {
    NodeMeta: { env: "prod" },
    Service: service("web2-proxy", "web-sidecar-proxy", { Kind: "connect-proxy", Proxy: { DestinationServiceName: "web" } as never }),
  })); // 4
  h.apply(register("Alpha", { NodeMeta: { env: "dev" }, Checks: [check("serfHealth", "passing"), check("w1", "warning", { ServiceID: "web1" })] })); // 5
  h.apply(register("zeta", { NodeMeta: { env: "prod" }, Checks: [check("serfHealth", "passing"), check("w2", "passing", { ServiceID: "web2" })] })); // 6
});

describe("catalog queries", () => {
  test("nodes in lowercase-name order, with a meta filter; index of the nodes table", () => {
    expect(catalogNodes(h.store, ws()).value.map((n) => n.Node)).toEqual(["Alpha", "alpha2", "zeta"]);
    expect(catalogNodes(h.store, ws()).index).toBe(3);
    expect(catalogNodes(h.store, ws(), { nodeMeta: { env: "prod" } }).value.map((n) => n.Node)).toEqual(["zeta"]);
  });

  test("services map name -> sorted distinct tags; index of the services table", () => {
    expect(catalogServices(h.store, ws())).toEqual({
      index: 4,
      value: { db: [], web: ["b", "v1", "v2"], "web-sidecar-proxy": [] },
    });
    expect(Object.keys(catalogServices(h.store, ws()).value)).toEqual(["db", "web", "web-sidecar-proxy"]);
    expect(catalogServices(h.store, ws(), { nodeMeta: { env: "dev" } }).value).toEqual({ web: ["b", "v1"] });
  });

  test("the services map from the tag index equals a scan of every instance, through re-registrations and removals (seeded)", () => {
    for (let seed = 1; seed <= 20; seed++) {
      const rng = seededRng(seed);
      const g = harness();
      const names = ["web", "Web", "db", "api", "cache"];
      const tags = ["a", "b", "c", "v1", "v2"];
      for (let i = 0; i < 300; i++) {
        const node = `n${rng.int(6)}`;
        const id = `s${rng.int(12)}`;
        if (rng.int(5) === 0) {
          g.apply({ type: "deregister", req: { Node: node, ServiceID: id } } as never);
        } else if (rng.int(40) === 0) {
          g.apply({ type: "deregister", req: { Node: node } } as never);
        } else {
          const t = Array.from({ length: rng.int(4) }, () => tags[rng.int(tags.length)]!); // duplicates too
          g.apply(register(node, { Service: service(id, names[rng.int(names.length)]!, { Tags: t }) }));
        }
        if (i % 50 === 49) {
          const indexed = catalogServices(g.store, ws()).value;
          const scanned = catalogServices(g.store, ws(), { nodeMeta: {} }).value;
          if (JSON.stringify(indexed) !== JSON.stringify(scanned)) throw new Error(`seed ${seed}, step ${i}: ${JSON.stringify(indexed)} != ${JSON.stringify(scanned)}`);
        }
      }
    }
  });

  test("service nodes: flattened rows by node, tag and meta filters, index of the service's entry", () => {
    const r = catalogServiceNodes(h.store, ws(), "WEB");
    expect(r.value.map((s) => [s.Node, s.ServiceID])).toEqual([["Alpha", "web1"], ["zeta", "web2"]]);
    expect(r.index).toBe(6);
    expect(r.value[0]).toMatchObject({
      ID: "", Node: "Alpha", Address: "10.0.0.1", NodeMeta: { env: "dev" }, ServiceKind: "", ServiceName: "web",
      ServiceTags: ["v1", "b"], ServiceWeights: { Passing: 1, Warning: 1 }, CreateIndex: 2, ModifyIndex: 2,
    });
    expect(catalogServiceNodes(h.store, ws(), "web", { tags: ["V2", "b"] }).value.map((s) => s.ServiceID)).toEqual(["web2"]);
    expect(catalogServiceNodes(h.store, ws(), "web", { nodeMeta: { env: "dev" } }).value.map((s) => s.ServiceID)).toEqual(["web1"]);
    expect(catalogServiceNodes(h.store, ws(), "db").index).toBe(3);
  });

  test("connect service nodes are the proxies for the service and native instances", () => {
    h.apply(register("alpha2", { ID: "abcdef00-0000-0000-0000-000000000000", Service: service("native", "web", { Connect: { Native: true } }) }));
    const r = catalogServiceNodes(h.store, ws(), "web", { connect: true });
    expect(r.value.map((s) => [s.Node, s.ServiceID])).toEqual([["alpha2", "native"], ["zeta", "web2-proxy"]]);
    expect(r.index).toBe(7);
  });

  test("a missing service reports the catalog index until a service goes extinct", () => {
    expect(catalogServiceNodes(h.store, ws(), "nope")).toEqual({ index: 4, value: [] });
    h.apply({ type: "deregister", req: { Node: "alpha2", ServiceID: "db" } });
    expect(catalogServiceNodes(h.store, ws(), "nope")).toEqual({ index: 7, value: [] });
  });

  test("node services by name or unique ID prefix; null when missing", () => {
    const r = catalogNodeServices(h.store, ws(), "ZETA");
    expect(Object.keys(r.value!.Services)).toEqual(["web2", "web2-proxy"]);
    expect(r.index).toBe(4);
    expect(catalogNodeServices(h.store, ws(), "abcdef0")!.value!.Node.Node).toBe("alpha2");
    expect(catalogNodeServices(h.store, ws(), "nobody").value).toBeNull();
  });
});

describe("health queries", () => {
  test("node checks, service checks and checks in state (ordered by node, check ID)", () => {
    expect(healthNodeChecks(h.store, ws(), "alpha").value.map((c) => c.CheckID)).toEqual(["serfHealth", "w1"]);
    expect(healthServiceChecks(h.store, ws(), "web").value.map((c) => `${c.Node}/${c.CheckID}`)).toEqual(["Alpha/w1", "zeta/w2"]);
    expect(healthChecksInState(h.store, ws(), "passing").value.map((c) => `${c.Node}/${c.CheckID}`)).toEqual(["Alpha/serfHealth", "zeta/serfHealth", "zeta/w2"]);
    expect(healthChecksInState(h.store, ws(), "any").value).toHaveLength(4);
    expect(healthChecksInState(h.store, ws(), "any", { nodeMeta: { env: "dev" } }).value).toHaveLength(2);
    expect(healthChecksInState(h.store, ws(), "critical")).toEqual({ index: 6, value: [] });
  });

  test("service nodes carry node checks then service checks; passing-only drops any non-passing", () => {
    const r = healthServiceNodes(h.store, ws(), "web");
    expect(r.index).toBe(6);
    expect(r.value.map((c) => [c.Node.Node, c.Service.ID, c.Checks.map((x) => x.CheckID)])).toEqual([
      ["Alpha", "web1", ["serfHealth", "w1"]],
      ["zeta", "web2", ["serfHealth", "w2"]],
    ]);
    expect(healthServiceNodes(h.store, ws(), "web", { passingOnly: true }).value.map((c) => c.Service.ID)).toEqual(["web2"]);
    expect(healthServiceNodes(h.store, ws(), "web", { tags: ["v1"] }).value.map((c) => c.Service.ID)).toEqual(["web1"]);
    expect(healthServiceNodes(h.store, ws(), "web", { nodeMeta: { env: "prod" } }).value.map((c) => c.Service.ID)).toEqual(["web2"]);
  });

  test("connect variant: index from the proxies' entries", () => {
    const r = healthServiceNodes(h.store, ws(), "web", { connect: true });
    expect(r.value.map((c) => c.Service.ID)).toEqual(["web2-proxy"]);
    expect(r.value[0]!.Checks.map((c) => c.CheckID)).toEqual(["serfHealth"]);
    expect(r.index).toBe(6);
  });
});

describe("services of a kind", () => {
  test("lists instances of the kind with checks; the kind's entry moves with their changes only", () => {
    h.apply(register("gw", { Service: service("mgw", "mesh-gateway", { Kind: "mesh-gateway", Port: 443 }), Checks: [check("serfHealth", "passing")] })); // 7
    const r = healthServicesOfKind(h.store, ws(), "mesh-gateway");
    expect(r.index).toBe(7);
    expect(r.value.map((c) => [c.Node.Node, c.Service.ID, c.Checks.map((x) => x.CheckID)])).toEqual([["gw", "mgw", ["serfHealth"]]]);
    h.apply(register("zeta", { NodeMeta: { env: "prod" }, Service: service("other") })); // 8
    expect(healthServicesOfKind(h.store, ws(), "mesh-gateway").index).toBe(7);
    expect(healthServicesOfKind(h.store, ws(), "").index).toBe(8);
    expect(healthServicesOfKind(h.store, ws(), "connect-proxy").value.map((c) => c.Service.ID)).toEqual(["web2-proxy"]);
    h.apply({ type: "deregister", req: { Node: "gw" } }); // 9
    expect(healthServicesOfKind(h.store, ws(), "mesh-gateway")).toEqual({ index: 9, value: [] });
  });
});
