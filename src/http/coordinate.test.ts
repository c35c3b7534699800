import { describe, expect, test } from "bun:test";
import type { CoordinateEntry, DatacenterMap } from "../model/index.ts";
import { fakeState } from "../../test/harness/fake_state.ts";
import { createHttpApi } from "./app.ts";
import type { AgentInfo, CoordinateApi } from "./deps.ts";

const agent = { datacenter: "dc1", nodeName: "n1", server: true, nodeMeta: {}, stats: () => ({}) } as unknown as AgentInfo;
const coord = (x: number) => ({ Vec: [x, 0, 0, 0, 0, 0, 0, 0], Error: 1.5, Adjustment: 0, Height: 1e-5 });
const entry = (Node: string, Segment = ""): CoordinateEntry => ({ Node, Segment, Coord: coord(0.1) });

function setup(coordinates?: CoordinateApi) {
  const state = fakeState();
  const app = createHttpApi({ agent, raft: { leader: () => "", peers: () => [] }, state, random: () => 0, coordinates });
  return { state, app };
}

const put = (body: unknown) => ({ method: "PUT", body: typeof body === "string" ? body : JSON.stringify(body) });

describe("GET /v1/coordinate/nodes and /node/:node", () => {
  test("nodes: the read, blocking headers, ?segment filters", async () => {
    const { state, app } = setup();
    state.values["coordinate-nodes"] = [entry("a"), entry("a", "s1"), entry("b")];
    const res = await app.request("/v1/coordinate/nodes?dc=dc2&index=7");
    expect(res.status).toBe(200);
    expect(res.headers.get("X-Consul-Index")).toBe("42");
    expect(await res.json()).toEqual([entry("a"), entry("a", "s1"), entry("b")]);
    expect(state.reads[0]).toMatchObject({ query: { type: "coordinate-nodes" }, options: { datacenter: "dc2", minIndex: 7 } });
    expect(await (await app.request("/v1/coordinate/nodes?segment=s1")).json()).toEqual([entry("a", "s1")]);
    expect(await (await app.request("/v1/coordinate/nodes?segment=")).json()).toEqual([entry("a"), entry("b")]);
  });

  test("node: its coordinates; none (or none in the segment) is a 404", async () => {
    const { state, app } = setup();
    state.values["coordinate-node"] = [entry("a"), entry("a", "s1")];
    const res = await app.request("/v1/coordinate/node/a");
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual([entry("a"), entry("a", "s1")]);
    expect(state.reads[0]!.query).toEqual({ type: "coordinate-node", node: "a" });
    expect((await app.request("/v1/coordinate/node/a?segment=s2")).status).toBe(404);
    state.values["coordinate-node"] = [];
    const none = await app.request("/v1/coordinate/node/zz");
    expect([none.status, await none.text()]).toEqual([404, ""]);
  });
});

describe("PUT /v1/coordinate/update", () => {
  test("writes one update to the datacenter asked; answers 200 with no body", async () => {
    const { state, app } = setup();
    const res = await app.request("/v1/coordinate/update?dc=dc2", put({ Node: "a", Segment: "", Coord: coord(0.25) }));
    expect([res.status, await res.text()]).toEqual([200, ""]);
    expect(state.writes).toEqual([{ command: { type: "coordinate-batch", updates: [{ Node: "a", Segment: "", Coord: coord(0.25) }] }, datacenter: "dc2" }]);
  });

  test.each([
    ["no Coord", { Node: "a" }, "invalid coordinate"],
    ["a non-finite component", `{"Node":"a","Coord":{"Vec":[1e999,0,0,0,0,0,0,0]}}`, "invalid coordinate"],
    ["another dimensionality", { Node: "a", Coord: { ...coord(0), Vec: [0, 0, 0] } }, "incompatible coordinate"],
    ["a missing Vec", { Node: "a", Coord: { Error: 1 } }, "incompatible coordinate"],
    ["a string component", { Node: "a", Coord: { Vec: ["x"] } }, "Request decode failed: json: cannot unmarshal string into Go struct field CoordinateUpdateRequest.Coord.Vec of type float64"],
    ["a body that is not an object", "[1]", "Request decode failed: json: cannot unmarshal array into Go value of type structs.CoordinateUpdateRequest"],
  ])("refuses %s with 400 and writes nothing", async (_what, body, message) => {
    const { state, app } = setup();
    const res = await app.request("/v1/coordinate/update", put(body));
    expect([res.status, (await res.text()).trim()]).toEqual([400, message]);
    expect(state.writes).toEqual([]);
  });

  test("a server's refusal is passed on", async () => {
    const { state, app } = setup();
    state.failWith = "No cluster leader";
    const res = await app.request("/v1/coordinate/update", put({ Node: "a", Coord: coord(0) }));
    expect(res.status).toBe(500);
    expect(await res.text()).toContain("No cluster leader");
  });
});

describe("GET /v1/coordinate/datacenters, disabled coordinates, agent/self Coord", () => {
  const maps: DatacenterMap[] = [{ Datacenter: "dc1", AreaID: "wan", Coordinates: [{ Node: "s1", Segment: "", Coord: coord(0) }] }];

  test("datacenters come from the agent's WAN view; none on this agent is a 500", async () => {
    const { app } = setup({ enabled: true, lan: () => coord(0.5), datacenters: () => maps });
    expect(await (await app.request("/v1/coordinate/datacenters")).json()).toEqual(maps);
    const res = await setup({ enabled: true, lan: () => undefined }).app.request("/v1/coordinate/datacenters");
    expect(res.status).toBe(500);
  });

  test("with coordinates disabled every route answers 401 and Coord is null", async () => {
    const { app, state } = setup({ enabled: false, lan: () => coord(0.5), datacenters: () => maps });
    for (const [path, init] of [["/v1/coordinate/datacenters"], ["/v1/coordinate/nodes"], ["/v1/coordinate/node/a"], ["/v1/coordinate/update", put({ Node: "a", Coord: coord(0) })]] as const) {
      const res = await app.request(path, init);
      expect([path, res.status, (await res.text()).trim()]).toEqual([path, 401, "Coordinate support disabled"]);
    }
    expect(state.reads.length + state.writes.length).toBe(0);
    expect(((await (await app.request("/v1/agent/self")).json()) as { Coord: unknown }).Coord).toBeNull();
  });

  test("agent/self carries the LAN coordinate", async () => {
    const { app } = setup({ enabled: true, lan: () => coord(0.5) });
    expect(((await (await app.request("/v1/agent/self")).json()) as { Coord: unknown }).Coord).toEqual(coord(0.5));
  });
});

describe("?near on the catalog and health reads", () => {
  test.each([
    ["/v1/catalog/nodes?near=b", { type: "catalog-nodes", near: "b" }],
    ["/v1/catalog/service/web?near=_agent", { type: "catalog-service-nodes", service: "web", connect: false, near: "n1" }],
    ["/v1/catalog/connect/web?near=x", { type: "catalog-service-nodes", service: "web", connect: true, near: "x" }],
    ["/v1/health/service/web?near=_agent", { type: "health-service-nodes", service: "web", passingOnly: false, connect: false, near: "n1" }],
    ["/v1/health/checks/web?near=c", { type: "health-service-checks", service: "web", near: "c" }],
    ["/v1/health/state/any?near=c", { type: "health-state", state: "any", near: "c" }],
    ["/v1/health/state/any?near=", { type: "health-state", state: "any" }],
  ])("%s", async (path, want) => {
    const { state, app } = setup();
    state.values["catalog-nodes"] = [];
    state.values["catalog-service-nodes"] = [];
    state.values["health-service-nodes"] = [];
    state.values["health-service-checks"] = [];
    state.values["health-state"] = [];
    expect((await app.request(path)).status).toBe(200);
    expect(state.reads[0]!.query).toEqual(want as never);
  });
});
