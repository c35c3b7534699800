import { describe, expect, test } from "bun:test";
import type { CheckServiceNode, HealthCheck, HealthStatus, Node, NodeService } from "../model/index.ts";
import { fakeState } from "../../test/harness/fake_state.ts";
import { createHttpApi } from "./app.ts";
import type { AgentInfo } from "./deps.ts";

const agent = { datacenter: "dc1", nodeName: "n1", server: true } as AgentInfo;

function setup() {
  const state = fakeState();
  const app = createHttpApi({ agent, raft: { leader: () => "", peers: () => [] }, state, random: () => 0 });
  return { state, app };
}

const check = (id: string, status: HealthStatus, tags: string[] | null = null): HealthCheck => ({
  Node: "a", CheckID: id, Name: id, Status: status, Notes: "", Output: "", ServiceID: tags ? "web" : "", ServiceName: tags ? "web" : "",
  ServiceTags: tags, Type: "", Definition: {}, CreateIndex: 1, ModifyIndex: 2,
});
const node: Node = { ID: "", Node: "a", Address: "10.0.0.1", Datacenter: "dc1", TaggedAddresses: {}, Meta: {}, CreateIndex: 1, ModifyIndex: 1 };
const svc = (tags: string[] | null): NodeService => ({
  ID: "web", Service: "web", Tags: tags, Address: "", Meta: null, Port: 80, Weights: { Passing: 1, Warning: 1 }, EnableTagOverride: false,
  Proxy: { MeshGateway: {}, Expose: {} }, Connect: {}, CreateIndex: 1, ModifyIndex: 1,
});

describe("GET /v1/health/node/:node, /checks/:service, /state/:state", () => {
  test("node checks: the read, the headers, null service tags as []", async () => {
    const { state, app } = setup();
    state.values["health-node-checks"] = [check("serfHealth", "passing"), check("web-check", "critical", null)];
    const res = await app.request("/v1/health/node/a?dc=dc2");
    expect(res.status).toBe(200);
    expect(res.headers.get("X-Consul-Index")).toBe("42");
    expect(res.headers.get("X-Consul-LastContact")).toBe("0");
    expect(((await res.json()) as HealthCheck[]).map((c) => c.ServiceTags)).toEqual([[], []]);
    expect(state.reads[0]).toEqual({ query: { type: "health-node-checks", node: "a" }, options: { datacenter: "dc2", consistency: "default", minIndex: 0, maxWaitMs: 0 } });
  });

  test("service checks carry node-meta; ?filter applies to the checks", async () => {
    const { state, app } = setup();
    state.values["health-service-checks"] = [check("a", "passing", ["v1"]), check("b", "critical", ["v1"])];
    const res = await app.request("/v1/health/checks/web?node-meta=rack:r1&filter=" + encodeURIComponent("Status == critical"));
    expect(((await res.json()) as HealthCheck[]).map((c) => c.CheckID)).toEqual(["b"]);
    expect(state.reads[0]!.query).toEqual({ type: "health-service-checks", service: "web", nodeMeta: { rack: "r1" } });
  });

  test("a known state is read as such", async () => {
    const { state, app } = setup();
    state.values["health-state"] = [check("x", "warning")];
    expect(((await (await app.request("/v1/health/state/warning")).json()) as HealthCheck[]).length).toBe(1);
    expect(state.reads[0]!.query).toEqual({ type: "health-state", state: "warning" });
  });

  test("an unknown state matches nothing: 200 [] with the checks index (Consul does not validate it)", async () => {
    const { state, app } = setup();
    state.values["health-state"] = [check("x", "passing"), check("y", "critical")];
    const res = await app.request("/v1/health/state/Passing?node-meta=k:v");
    expect([res.status, await res.text()]).toEqual([200, "[]"]);
    expect(res.headers.get("X-Consul-Index")).toBe("42");
    expect(state.reads[0]!.query).toEqual({ type: "health-state", state: "any", nodeMeta: { k: "v" } });
  });

  test("missing names answer 400 with Consul's words; a bad filter 400; other methods 405", async () => {
    const { state, app } = setup();
    for (const [path, message] of [["/v1/health/node/", "Missing node name"], ["/v1/health/checks/", "Missing service name"], ["/v1/health/state/", "Missing check state"]]) {
      const res = await app.request(path!);
      expect([res.status, await res.text()]).toEqual([400, `${message}\n`]);
    }
    const bad = await app.request("/v1/health/node/a?filter=" + encodeURIComponent("Status =="));
    expect(bad.status).toBe(400);
    expect(await bad.text()).toStartWith("Failed to create boolean expression evaluator: ");
    expect(state.reads).toEqual([]);
    expect((await app.request("/v1/health/state/any", { method: "DELETE" })).status).toBe(405);
  });
});

describe("GET /v1/health/service/:service and /connect/:service", () => {
  const instance = (checks: HealthCheck[] | null, tags: string[] | null): CheckServiceNode => ({ Node: node, Service: svc(tags), Checks: checks as HealthCheck[] });

  test("builds the read from ?passing, ?tag and ?node-meta; fixes null lists and tags to []", async () => {
    const { state, app } = setup();
    state.values["health-service-nodes"] = [instance(null, null), instance([check("c", "passing", null)], ["v1"])];
    const res = await app.request("/v1/health/service/web?passing&tag=v1&node-meta=k:v&near=_agent&consistent");
    const body = (await res.json()) as CheckServiceNode[];
    expect(body[0]).toEqual({ Node: node, Service: svc([]), Checks: [] });
    expect(body[1]!.Checks[0]!.ServiceTags).toEqual([]);
    expect(body[1]!.Service.Tags).toEqual(["v1"]);
    expect(state.reads[0]).toEqual({
      query: { type: "health-service-nodes", service: "web", passingOnly: true, connect: false, tags: ["v1"], nodeMeta: { k: "v" }, near: "n1" },
      options: { datacenter: undefined, consistency: "consistent", minIndex: 0, maxWaitMs: 0 },
    });
  });

  test("?passing takes Go's booleans; absent is false; /connect reads Connect instances", async () => {
    const { state, app } = setup();
    state.values["health-service-nodes"] = [];
    await app.request("/v1/health/service/web?passing=false");
    await app.request("/v1/health/service/web?passing=1");
    await app.request("/v1/health/connect/web");
    expect(state.reads.map((r) => r.query)).toEqual([
      { type: "health-service-nodes", service: "web", passingOnly: false, connect: false },
      { type: "health-service-nodes", service: "web", passingOnly: true, connect: false },
      { type: "health-service-nodes", service: "web", passingOnly: false, connect: true },
    ]);
  });

  test("a bad ?passing, a missing name and a bad filter answer 400", async () => {
    const { state, app } = setup();
    const a = await app.request("/v1/health/service/web?passing=yes");
    expect([a.status, await a.text()]).toEqual([400, "Invalid value for ?passing\n"]);
    const b = await app.request("/v1/health/connect/");
    expect([b.status, await b.text()]).toEqual([400, "Missing service name\n"]);
    const c = await app.request("/v1/health/service/web?filter=" + encodeURIComponent("Service.Nope == 1"));
    expect(c.status).toBe(400);
    expect(state.reads).toEqual([]);
  });

  test("?filter applies to CheckServiceNode values", async () => {
    const { state, app } = setup();
    state.values["health-service-nodes"] = [instance([check("c", "critical")], ["v1"]), instance([check("c", "passing")], ["v2"])];
    const res = await app.request("/v1/health/service/web?filter=" + encodeURIComponent('Checks.Status == critical'));
    expect(((await res.json()) as CheckServiceNode[]).map((n) => n.Service.Tags)).toEqual([["v1"]]);
  });
});
