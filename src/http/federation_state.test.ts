import { describe, expect, test } from "bun:test";
import { meshGatewaysByDatacenter, type FederationState } from "../model/index.ts";
import { gateway, state } from "../model/federation_state_fixtures.test.ts";
import { fakeState } from "../../test/harness/fake_state.ts";
import { createHttpApi } from "./app.ts";
import type { AgentInfo } from "./deps.ts";

const agent = { datacenter: "dc1", nodeName: "n1", server: true } as AgentInfo;

function setup() {
  const fake = fakeState();
  const app = createHttpApi({ agent, raft: { leader: () => "", peers: () => [] }, state: fake, random: () => 0 });
  const send = (path: string, method = "GET") => app.request(path, { method });
  return { fake, send };
}

const headers = (res: Response) => ["X-Consul-Index", "X-Consul-KnownLeader", "X-Consul-LastContact"].map((h) => res.headers.get(h));

describe("GET /v1/internal/federation-states", () => {
  test("lists the states as a JSON array, blocking with the read's X-Consul-Index; ?dc picks the answering datacenter", async () => {
    const { fake, send } = setup();
    const states: FederationState[] = [state({ Datacenter: "dc1", MeshGateways: undefined }), state()];
    fake.values["federation-state-list"] = states;
    const res = await send("/v1/internal/federation-states?dc=dc2&index=7&wait=2s&stale");
    expect(res.status).toBe(200);
    expect(headers(res)).toEqual(["42", "true", "0"]);
    expect(await res.text()).toBe(JSON.stringify(states));
    expect(fake.reads.map((r) => [r.query, r.options.datacenter, r.options.minIndex, r.options.maxWaitMs, r.options.consistency]))
      .toEqual([[{ type: "federation-state-list" }, "dc2", 7, 2000, "stale"]]);
  });

  test("no states is []", async () => {
    const { fake, send } = setup();
    fake.values["federation-state-list"] = [];
    expect(await (await send("/v1/internal/federation-states")).text()).toBe("[]");
  });

  test("read-only: other methods answer 405, a failed read 500 with its message, bad options 400", async () => {
    const { fake, send } = setup();
    for (const method of ["PUT", "POST", "DELETE"]) expect((await send("/v1/internal/federation-states", method)).status).toBe(405);
    expect((await send("/v1/internal/federation-states?stale&consistent")).status).toBe(400);
    fake.failWith = "No cluster leader";
    const res = await send("/v1/internal/federation-states");
    expect([res.status, await res.text()]).toEqual([500, "No cluster leader\n"]);
    expect(fake.writes).toEqual([]);
  });
});

describe("GET /v1/internal/federation-states/mesh-gateways", () => {
  test("answers the datacenter -> gateways object", async () => {
    const { fake, send } = setup();
    fake.values["federation-state-mesh-gateways"] = meshGatewaysByDatacenter([state({ Datacenter: "dc3", MeshGateways: [gateway({ Node: "g3" })] }), state()]);
    const res = await send("/v1/internal/federation-states/mesh-gateways?dc=dc2");
    expect(headers(res)[0]).toBe("42");
    const body = await res.json();
    expect(Object.keys(body)).toEqual(["dc2", "dc3"]);
    expect(body.dc3[0].Node.Node).toBe("g3");
    expect(fake.reads.map((r) => [r.query, r.options.datacenter])).toEqual([[{ type: "federation-state-mesh-gateways" }, "dc2"]]);
  });

  test("none is {}", async () => {
    const { fake, send } = setup();
    fake.values["federation-state-mesh-gateways"] = { DatacenterNodes: {} };
    expect(await (await send("/v1/internal/federation-states/mesh-gateways")).text()).toBe("{}");
  });
});

describe("GET /v1/internal/federation-state/:dc", () => {
  test("answers the whole FederationStateResponse; the path names the state, ?dc the answering datacenter", async () => {
    const { fake, send } = setup();
    fake.values["federation-state-get"] = state();
    fake.meta = { index: 42, knownLeader: true, lastContactMs: 3 };
    const res = await send("/v1/internal/federation-state/dc2?dc=dc3&consistent");
    expect(res.status).toBe(200);
    expect(headers(res)).toEqual(["42", "true", "3"]);
    expect(await res.text()).toBe(JSON.stringify({ State: state(), Index: 42, LastContact: 3_000_000, KnownLeader: true, ConsistencyLevel: "consistent" }));
    expect(fake.reads.map((r) => [r.query, r.options.datacenter])).toEqual([[{ type: "federation-state-get", datacenter: "dc2" }, "dc3"]]);
  });

  test("ConsistencyLevel is leader by default and stale with ?stale", async () => {
    const { fake, send } = setup();
    fake.values["federation-state-get"] = state();
    expect((await (await send("/v1/internal/federation-state/dc2")).json()).ConsistencyLevel).toBe("leader");
    expect((await (await send("/v1/internal/federation-state/dc2?stale")).json()).ConsistencyLevel).toBe("stale");
  });

  test("a datacenter without a state: 404 with an empty body, the X-Consul headers still set", async () => {
    const { fake, send } = setup();
    fake.values["federation-state-get"] = null;
    const res = await send("/v1/internal/federation-state/dc9?index=3");
    expect([res.status, await res.text()]).toEqual([404, ""]);
    expect(headers(res)).toEqual(["42", "true", "0"]);
    expect(fake.reads[0]!.options.minIndex).toBe(3);
  });

  test("the name is the whole decoded rest of the path (Consul's TrimPrefix)", async () => {
    const { fake, send } = setup();
    fake.values["federation-state-get"] = null;
    await send("/v1/internal/federation-state/dc%2Fx/y");
    expect(fake.reads[0]!.query).toEqual({ type: "federation-state-get", datacenter: "dc/x/y" });
  });

  test("no name: 400 Missing datacenter name, nothing read; a bad escape 400; other methods 405", async () => {
    const { fake, send } = setup();
    for (const path of ["/v1/internal/federation-state/", "/v1/internal/federation-state"]) {
      const res = await send(path);
      expect([res.status, await res.text()]).toEqual([400, "Missing datacenter name\n"]);
    }
    expect((await send("/v1/internal/federation-state/%zz")).status).toBe(400);
    expect(fake.reads).toEqual([]);
    for (const method of ["PUT", "DELETE"]) expect((await send("/v1/internal/federation-state/dc2", method)).status).toBe(405);
    expect(fake.writes).toEqual([]);
  });
});
