import { describe, expect, test } from "bun:test";
import type { Node, NodeService, ServiceNode } from "../model/index.ts";
import { fakeState } from "../../test/harness/fake_state.ts";
import { createHttpApi } from "./app.ts";
import type { AgentInfo } from "./deps.ts";

const agent = { datacenter: "dc1", nodeName: "n1", server: true } as AgentInfo;
const NODE_ID = "0b5e9a1c-8d6f-4f51-9d3a-2c4e6f7a8b9c";

function setup() {
  const state = fakeState();
  const app = createHttpApi({ agent, raft: { leader: () => "", peers: () => [] }, state, random: () => 0 });
  const put = (path: string, body: unknown) =>
    app.request(path, { method: "PUT", body: typeof body === "string" ? body : JSON.stringify(body) });
  return { state, app, put };
}

const node = (name: string, meta: Record<string, string> = {}): Node => ({
  ID: NODE_ID, Node: name, Address: "10.0.0.1", Datacenter: "dc1", TaggedAddresses: {}, Meta: meta, CreateIndex: 3, ModifyIndex: 4,
});
const service = (id: string, tags: string[] | null): NodeService => ({
  ID: id, Service: "web", Tags: tags, Address: "", Meta: null, Port: 80, Weights: { Passing: 1, Warning: 1 }, EnableTagOverride: false,
  Proxy: { MeshGateway: {}, Expose: {} }, Connect: {}, CreateIndex: 5, ModifyIndex: 6,
});
const row = (nodeName: string, tags: string[] | null): ServiceNode => ({
  ID: NODE_ID, Node: nodeName, Address: "10.0.0.1", Datacenter: "dc1", TaggedAddresses: {}, NodeMeta: {}, ServiceKind: "",
  ServiceID: "web", ServiceName: "web", ServiceTags: tags, ServiceAddress: "", ServiceWeights: { Passing: 1, Warning: 1 },
  ServiceMeta: null, ServicePort: 80, ServiceEnableTagOverride: false, ServiceProxy: { MeshGateway: {}, Expose: {} },
  ServiceConnect: {}, CreateIndex: 5, ModifyIndex: 6,
});

describe("PUT /v1/catalog/register", () => {
  test("decodes the body case-insensitively, fills Consul's defaults and writes one register command", async () => {
    const { state, put } = setup();
    const res = await put("/v1/catalog/register", {
      node: "web-1", ADDRESS: "10.0.0.9", id: NODE_ID, TaggedAddresses: { wan: "1.2.3.4" }, NodeMeta: { rack: "r1" },
      Service: { service: "web", tags: ["v1"], port: 8080 },
      Check: { Name: "web alive", ServiceID: "web", Definition: { HTTP: "http://x/", Interval: "10s", Timeout: 1500000000 } },
      Checks: [{ CheckID: "mem", Status: "passing" }],
    });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/json");
    expect(await res.text()).toBe("true");
    expect(state.writes).toEqual([{
      datacenter: undefined,
      command: {
        type: "register",
        req: {
          Datacenter: "dc1", ID: NODE_ID, Node: "web-1", Address: "10.0.0.9", TaggedAddresses: { wan: "1.2.3.4" }, NodeMeta: { rack: "r1" },
          Service: {
            ID: "web", Service: "web", Tags: ["v1"], Address: "", Meta: null, Port: 8080, Weights: { Passing: 1, Warning: 1 },
            EnableTagOverride: false, Proxy: { MeshGateway: {}, Expose: {} }, Connect: {},
          },
          Checks: [
            { Node: "web-1", CheckID: "mem", Name: "", Status: "passing", Notes: "", Output: "", ServiceID: "", ServiceName: "", ServiceTags: null, Type: "", Definition: {} },
            {
              Node: "web-1", CheckID: "web alive", Name: "web alive", Status: "critical", Notes: "", Output: "", ServiceID: "web", ServiceName: "",
              ServiceTags: null, Type: "", Definition: { Interval: "10s", Timeout: "1.5s", HTTP: "http://x/" },
            },
          ],
        },
      },
    }]);
  });

  test("a service port past 65535 (or negative) is a 400 and writes nothing", async () => {
    const { state, put } = setup();
    const res = await put("/v1/catalog/register", { Node: "a", Address: "1.1.1.1", Service: { Service: "web", Port: 65536 } });
    expect(res.status).toBe(400);
    expect(await res.text()).toContain("Invalid port 65536 in Service.Port: must be between 0 and 65535");
    expect((await put("/v1/catalog/register", { Node: "a", Address: "1.1.1.1", Service: { Service: "web", TaggedAddresses: { lan: { Address: "1.1.1.1", Port: -2 } } } })).status).toBe(400);
    expect(state.writes).toEqual([]);
  });

  test("the body's Datacenter routes the write; ?dc is not consulted (Consul's CatalogRegister)", async () => {
    const { state, put } = setup();
    await put("/v1/catalog/register?dc=dc9", { Datacenter: "dc2", Node: "a", Address: "1.1.1.1" });
    await put("/v1/catalog/register?dc=dc9", { Node: "b", Address: "1.1.1.1" });
    expect(state.writes.map((w) => [w.datacenter, (w.command as { req: { Datacenter: string } }).req.Datacenter])).toEqual([["dc2", "dc2"], [undefined, "dc1"]]);
  });

  test("SkipNodeUpdate allows a missing address; proxies and gateways keep their config shape", async () => {
    const { state, put } = setup();
    await put("/v1/catalog/register", {
      Node: "a", SkipNodeUpdate: true,
      Service: {
        Kind: "connect-proxy", Service: "web-proxy", Port: 21000, Weights: { Passing: 3, Warning: 2 }, TaggedAddresses: { lan: { Address: "10.0.0.1", Port: 1 } },
        Proxy: { DestinationServiceName: "web", Upstreams: [{ DestinationName: "db", LocalBindPort: 9191, MeshGateway: { Mode: "local" } }], Expose: { Paths: [{ Path: "/h", ListenerPort: 21500 }] } },
      },
    });
    const req = (state.writes[0]!.command as { req: Record<string, unknown> }).req;
    expect(req.SkipNodeUpdate).toBe(true);
    expect(req.Service).toEqual({
      Kind: "connect-proxy", ID: "web-proxy", Service: "web-proxy", Tags: null, Address: "", TaggedAddresses: { lan: { Address: "10.0.0.1", Port: 1 } },
      Meta: null, Port: 21000, Weights: { Passing: 3, Warning: 2 }, EnableTagOverride: false,
      Proxy: {
        DestinationServiceName: "web", Upstreams: [{ DestinationName: "db", LocalBindPort: 9191, MeshGateway: { Mode: "local" } }],
        MeshGateway: {}, Expose: { Paths: [{ ListenerPort: 21500, Path: "/h", ParsedFromCheck: false }] },
      },
      Connect: {},
    });
  });

  const cases: [string, unknown, string][] = [
    ["an empty body", "", "Request decode failed: EOF"],
    ["truncated JSON", '{"Node": "a"', "Request decode failed: unexpected EOF"],
    ["malformed JSON", "{Node}", "Request decode failed: invalid character 'N' looking for beginning of object key string"],
    ["a wrong type", { Node: 5 }, "Request decode failed: json: cannot unmarshal number into Go struct field RegisterRequest.Node of type string"],
    ["a nested wrong type", { Node: "a", Service: { Port: "80" } }, "Request decode failed: json: cannot unmarshal string into Go struct field RegisterRequest.Service.Port of type int"],
    ["a bad duration", { Node: "a", Address: "x", Check: { Name: "c", Definition: { Interval: "10" } } }, "Request decode failed: time: missing unit in duration 10"],
    ["no node", { Address: "1.1.1.1" }, "Must provide node"],
    ["a bad node ID", { Node: "a", ID: "nope", Address: "x" }, "Bad node ID: uuid string is wrong length"],
    ["no address", { Node: "a" }, "Must provide address if SkipNodeUpdate is not set"],
    ["a service ID without a name", { Node: "a", Address: "x", Service: { ID: "w" } }, "Must provide service name with ID"],
    ["a service without a name", { Node: "a", Address: "x", Service: { Port: 1 } }, "Must provide service name"],
    ["an unspecified service address", { Node: "a", Address: "x", Service: { Service: "w", Address: "0.0.0.0" } }, "Invalid service address"],
    ["an IPv6 unspecified address", { Node: "a", Address: "x", Service: { Service: "w", Address: "[::]" } }, "Invalid service address"],
    ["an unknown kind", { Node: "a", Address: "x", Service: { Service: "w", Kind: "nope" } }, 'Invalid service kind: "nope"'],
    ["a bad mesh gateway mode", { Node: "a", Address: "x", Service: { Service: "w", Proxy: { MeshGateway: { Mode: "far" } } } }, 'Invalid Mesh Gateway Mode: "far"'],
    ["a bad check status", { Node: "a", Address: "x", Check: { Name: "c", Status: "ok" } }, 'Invalid check status "ok": must be one of passing, warning, critical'],
    ["a check without ID or name", { Node: "a", Address: "x", Checks: [{ Status: "passing" }] }, "Must provide a check ID or name"],
    [
      "an incomplete connect proxy", { Node: "a", Address: "x", Service: { Service: "p", Kind: "connect-proxy", Connect: { Native: true } } },
      "3 errors occurred:\n\t* Proxy.DestinationServiceName must be non-empty for Connect proxy services\n\t* Port must be set for a Connect proxy\n\t* A Proxy cannot also be Connect Native, only typical services\n\n",
    ],
    [
      "duplicate upstreams", {
        Node: "a", Address: "x",
        Service: { Service: "p", Kind: "connect-proxy", Port: 1, Proxy: { DestinationServiceName: "w", Upstreams: [{ DestinationName: "db", LocalBindPort: 1 }, { DestinationName: "db", LocalBindPort: 2 }, { DestinationName: "c", LocalBindPort: 1 }, { LocalBindPort: 3 }] } },
      },
      '3 errors occurred:\n\t* upstreams cannot contain duplicates of [type="", name="db", namespace="", datacenter=""]\n\t* upstreams cannot contain duplicates by local bind address and port; "127.0.0.1:1" is specified twice\n\t* upstream destination name cannot be empty\n\n',
    ],
    [
      "a mesh gateway without a port", { Node: "a", Address: "x", Service: { Service: "gw", Kind: "mesh-gateway", Proxy: { DestinationServiceName: "w" } } },
      "2 errors occurred:\n\t* Port must be non-zero for a mesh-gateway\n\t* The Proxy.DestinationServiceName configuration is invalid for a mesh-gateway\n\n",
    ],
  ];
  for (const [what, body, message] of cases) {
    test(`${what} answers 400 "${message.split("\n")[0]}" and writes nothing`, async () => {
      const { state, put } = setup();
      const res = await put("/v1/catalog/register", body);
      expect(res.status).toBe(400);
      expect(await res.text()).toBe(message.endsWith("\n") ? message : `${message}\n`);
      expect(state.writes).toEqual([]);
    });
  }

  test("a refusal by the state store answers 400 with its message (Consul: 500); no state answers 500", async () => {
    const { state, put } = setup();
    state.writeResult = { type: "error", error: "Missing node registration" };
    const res = await put("/v1/catalog/register", { Node: "a", Address: "x" });
    expect([res.status, await res.text()]).toEqual([400, "Missing node registration\n"]);
    const bare = createHttpApi({ agent, raft: { leader: () => "", peers: () => [] } });
    expect((await bare.request("/v1/catalog/register", { method: "PUT", body: '{"Node":"a","Address":"x"}' })).status).toBe(500);
  });

  test("other methods answer 405", async () => {
    const { app } = setup();
    const res = await app.request("/v1/catalog/register");
    expect([res.status, await res.text()]).toEqual([405, "method GET not allowed\n"]);
  });
});

describe("PUT /v1/catalog/deregister", () => {
  test("writes a deregister command with the agent's datacenter by default", async () => {
    const { state, put } = setup();
    const res = await put("/v1/catalog/deregister", { node: "a", serviceid: "web" });
    expect(await res.json()).toBe(true);
    expect(state.writes).toEqual([{ datacenter: undefined, command: { type: "deregister", req: { Datacenter: "dc1", Node: "a", ServiceID: "web" } } }]);
  });

  test("a missing node or an undecodable body answers 400", async () => {
    const { state, put } = setup();
    const a = await put("/v1/catalog/deregister", { CheckID: "c" });
    expect([a.status, await a.text()]).toEqual([400, "Must provide node\n"]);
    const b = await put("/v1/catalog/deregister", "[1]");
    expect([b.status, await b.text()]).toEqual([400, "Request decode failed: json: cannot unmarshal array into Go value of type structs.DeregisterRequest\n"]);
    expect(state.writes).toEqual([]);
  });
});

describe("GET /v1/catalog/nodes and /services", () => {
  test("node-meta filters are passed to the read; ?filter applies to the nodes; headers are set", async () => {
    const { state, app } = setup();
    state.values["catalog-nodes"] = [node("a", { rack: "r1" }), node("b", { rack: "r2" })];
    const res = await app.request("/v1/catalog/nodes?node-meta=rack:r1&node-meta=os&filter=" + encodeURIComponent('Meta.rack == "r2"') + "&near=_agent&stale");
    expect(res.status).toBe(200);
    expect(res.headers.get("X-Consul-Index")).toBe("42");
    expect(res.headers.get("X-Consul-KnownLeader")).toBe("true");
    expect(((await res.json()) as Node[]).map((n) => n.Node)).toEqual(["b"]);
    expect(state.reads[0]).toEqual({
      query: { type: "catalog-nodes", nodeMeta: { rack: "r1", os: "" }, near: "n1" },
      options: { datacenter: undefined, consistency: "stale", minIndex: 0, maxWaitMs: 0 },
    });
  });

  test("an empty catalog is [] and a read without node-meta carries none", async () => {
    const { state, app } = setup();
    state.values["catalog-nodes"] = [];
    expect(await (await app.request("/v1/catalog/nodes")).text()).toBe("[]");
    expect(state.reads[0]!.query).toEqual({ type: "catalog-nodes" });
  });

  test("a filter over a large catalog yields to the event loop while it runs; one past the work budget is a 400", async () => {
    const { state, app } = setup();
    state.values["catalog-nodes"] = Array.from({ length: 3000 }, (_, i) => node(`node-${i}-${"x".repeat(200)}`, { rack: "r".repeat(512) }));
    let ticks = 0;
    const ticker = setInterval(() => ticks++, 0);
    const heavy = Array.from({ length: 40 }, (_, i) => `Node matches "n.*${i}.*x{3}$" or Meta.rack contains "q${i}"`).join(" or ");
    const res = await app.request("/v1/catalog/nodes?filter=" + encodeURIComponent(heavy));
    clearInterval(ticker);
    expect(res.status).toBe(200);
    expect(ticks).toBeGreaterThan(0); // timers ran while the filter was being evaluated
    const pathological = Array.from({ length: 8 }, (_, i) => `Meta.rack matches ".{0,500}w${i}"`).join(" or ");
    const refused = await app.request("/v1/catalog/nodes?filter=" + encodeURIComponent(pathological));
    expect(refused.status).toBe(400);
    expect(await refused.text()).toStartWith("filter too expensive");
  });

  test("a bad filter answers 400 with go-bexpr's message and reads nothing", async () => {
    const { state, app } = setup();
    const res = await app.request("/v1/catalog/nodes?filter=" + encodeURIComponent("Nope == 1"));
    expect(res.status).toBe(400);
    expect(await res.text()).toStartWith("Failed to create boolean expression evaluator: ");
    expect(state.reads).toEqual([]);
  });

  test("bad read options answer 400", async () => {
    const { app } = setup();
    const res = await app.request("/v1/catalog/nodes?stale&consistent");
    expect([res.status, await res.text()]).toEqual([400, "Cannot specify ?stale with ?consistent, conflicting semantics.\n"]);
  });

  test("/services answers the name -> tags map", async () => {
    const { state, app } = setup();
    state.values["catalog-services"] = { consul: [], web: ["v1"] };
    const res = await app.request("/v1/catalog/services?node-meta=rack:r1&dc=dc2");
    expect(await res.json()).toEqual({ consul: [], web: ["v1"] });
    expect(state.reads[0]!.query).toEqual({ type: "catalog-services", nodeMeta: { rack: "r1" } });
    expect(state.reads[0]!.options.datacenter).toBe("dc2");
  });
});

describe("GET /v1/catalog/service/:service and /connect/:service", () => {
  test("tags and node-meta go to the read; null tags become []; ?filter applies to the rows", async () => {
    const { state, app } = setup();
    state.values["catalog-service-nodes"] = [row("a", null), row("b", ["v2"])];
    const res = await app.request("/v1/catalog/service/web?tag=v1&tag=v2&node-meta=k:v&index=5");
    const rows = (await res.json()) as ServiceNode[];
    expect(rows.map((r) => r.ServiceTags)).toEqual([[], ["v2"]]);
    expect(rows[0]).toEqual({ ...row("a", []) });
    expect(state.reads[0]).toEqual({
      query: { type: "catalog-service-nodes", service: "web", connect: false, tags: ["v1", "v2"], nodeMeta: { k: "v" } },
      options: { datacenter: undefined, consistency: "default", minIndex: 5, maxWaitMs: 300_000 },
    });
    const filtered = await app.request("/v1/catalog/service/web?filter=" + encodeURIComponent("Node == b"));
    expect(((await filtered.json()) as ServiceNode[]).map((r) => r.Node)).toEqual(["b"]);
  });

  test("/connect reads Connect-capable instances; the name is URL-decoded once, %2F included", async () => {
    const { state, app } = setup();
    state.values["catalog-service-nodes"] = [];
    expect(await (await app.request("/v1/catalog/connect/a%2Fb%20c")).text()).toBe("[]");
    expect(state.reads[0]!.query).toEqual({ type: "catalog-service-nodes", service: "a/b c", connect: true });
  });

  test("a missing name answers 400; other methods 405", async () => {
    const { app } = setup();
    const res = await app.request("/v1/catalog/service/");
    expect([res.status, await res.text()]).toEqual([400, "Missing service name\n"]);
    const put = await app.request("/v1/catalog/service/web", { method: "PUT" });
    expect([put.status, await put.text()]).toEqual([405, "method PUT not allowed\n"]);
  });
});

describe("GET /v1/catalog/node/:node", () => {
  test("answers the node and its services, null tags as []; ?filter applies to the services", async () => {
    const { state, app } = setup();
    state.values["catalog-node-services"] = { Node: node("a"), Services: { web: service("web", null), api: service("api", ["x"]) } };
    const body = (await (await app.request("/v1/catalog/node/a")).json()) as { Node: Node; Services: Record<string, NodeService> };
    expect(body.Node).toEqual(node("a"));
    expect(body.Services).toEqual({ web: service("web", []), api: service("api", ["x"]) });
    expect(state.reads[0]!.query).toEqual({ type: "catalog-node-services", node: "a" });
    const filtered = (await (await app.request("/v1/catalog/node/a?filter=" + encodeURIComponent("ID == api"))).json()) as { Services: object };
    expect(Object.keys(filtered.Services)).toEqual(["api"]);
  });

  test("an unknown node answers 200 with a null body (Consul encodes its nil NodeServices)", async () => {
    const { state, app } = setup();
    state.values["catalog-node-services"] = null;
    const res = await app.request("/v1/catalog/node/ghost");
    expect([res.status, await res.text()]).toEqual([200, "null"]);
    expect(res.headers.get("X-Consul-Index")).toBe("42");
  });

  test("a missing node name answers 400; a failed read 500", async () => {
    const { state, app } = setup();
    const res = await app.request("/v1/catalog/node/");
    expect([res.status, await res.text()]).toEqual([400, "Missing node name\n"]);
    state.failWith = "No cluster leader";
    const failed = await app.request("/v1/catalog/node/a");
    expect([failed.status, await failed.text()]).toEqual([500, "No cluster leader\n"]);
  });
});
