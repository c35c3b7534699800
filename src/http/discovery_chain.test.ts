import { describe, expect, test } from "bun:test";
import { compileDiscoveryChain, decodeConfigEntry, type ConfigEntry } from "../connect/index.ts";
import { fakeState } from "../../test/harness/fake_state.ts";
import { createHttpApi } from "./app.ts";
import type { AgentInfo } from "./deps.ts";
import { decodeChainOverrides } from "./discovery_chain.ts";

const agent = { datacenter: "dc1", nodeName: "n1", server: true } as AgentInfo;
const TRUST_DOMAIN = "11111111-2222-3333-4444-555555555555.consul";

const entries: ConfigEntry[] = [
  decodeConfigEntry({ Kind: "service-defaults", Name: "web", Protocol: "http" }),
  decodeConfigEntry({ Kind: "service-router", Name: "web", Routes: [{ Match: { HTTP: { PathPrefix: "/v2" } }, Destination: { ServiceSubset: "v2" } }] }),
  decodeConfigEntry({
    Kind: "service-resolver", Name: "web", ConnectTimeout: "3s", Subsets: { v2: { Filter: "Service.Meta.version == v2" } },
    Failover: { "*": { Datacenters: ["dc2"] } },
  }),
];

function setup(trustDomain = TRUST_DOMAIN, list: readonly ConfigEntry[] = entries) {
  const state = fakeState();
  state.values["config-entry-list"] = list;
  state.values["ca-roots"] = { roots: [], trustDomain, activeRootId: trustDomain ? "aa:bb" : "" };
  const app = createHttpApi({ agent, raft: { leader: () => "", peers: () => [] }, state, random: () => 0 });
  return { state, app };
}

const expected = (extra: Partial<Parameters<typeof compileDiscoveryChain>[0]> = {}) =>
  JSON.parse(JSON.stringify({
    Chain: compileDiscoveryChain({
      serviceName: "web", evaluateInNamespace: "default", evaluateInDatacenter: "dc1", evaluateInTrustDomain: TRUST_DOMAIN, useInDatacenter: "dc1", entries, ...extra,
    }),
  }));

describe("GET /v1/discovery-chain/:service", () => {
  test("answers compileDiscoveryChain's output for the same entries, with the entries' index", async () => {
    const { state, app } = setup();
    const res = await app.request("/v1/discovery-chain/web?index=3&wait=2s");
    expect(res.status).toBe(200);
    expect(res.headers.get("X-Consul-Index")).toBe("42");
    expect(await res.json()).toEqual(expected());
    expect(state.reads.map((r) => [r.query, r.options.minIndex])).toEqual([[{ type: "config-entry-list" }, 3], [{ type: "ca-roots" }, 0]]);
    expect(state.writes).toEqual([]);
  });

  test("?compile-dc= evaluates in that datacenter, still used from ours", async () => {
    const { app } = setup();
    const body = await (await app.request("/v1/discovery-chain/web?compile-dc=dc2")).json();
    expect(body).toEqual(expected({ evaluateInDatacenter: "dc2" }));
    expect(body.Chain.Datacenter).toBe("dc2");
  });

  test("a service without entries gets the default chain", async () => {
    const { app } = setup(TRUST_DOMAIN, []);
    const body = await (await app.request("/v1/discovery-chain/db")).json();
    expect(body.Chain.StartNode).toBe("resolver:db.default.dc1");
    expect(body.Chain.Protocol).toBe("tcp");
  });

  test("before the CA exists: 500 no cluster ca config setup (Consul's DiscoveryChain.Get)", async () => {
    const { app } = setup("");
    const res = await app.request("/v1/discovery-chain/web");
    expect([res.status, await res.text()]).toEqual([500, "no cluster ca config setup\n"]);
  });

  test("a chain that the stored entries keep from compiling is a 500 with the compiler's message", async () => {
    const { app } = setup(TRUST_DOMAIN, [entries[1]!]);
    const res = await app.request("/v1/discovery-chain/web");
    expect(res.status).toBe(500);
    expect(await res.text()).toBe('service "web" does not have a subset named "v2"\n');
  });

  test("a missing name is 400; PUT is 405; a failed read is 500", async () => {
    const { state, app } = setup();
    const res = await app.request("/v1/discovery-chain/");
    expect([res.status, await res.text()]).toEqual([400, "Missing chain name\n"]);
    expect((await app.request("/v1/discovery-chain/web", { method: "PUT" })).status).toBe(405);
    state.failWith = "No cluster leader";
    expect((await app.request("/v1/discovery-chain/web")).status).toBe(500);
  });
});

describe("POST /v1/discovery-chain/:service", () => {
  const post = (app: ReturnType<typeof setup>["app"], body: unknown) =>
    app.request("/v1/discovery-chain/web", { method: "POST", body: typeof body === "string" ? body : JSON.stringify(body) });

  test("overrides in camel case are passed to the compiler", async () => {
    const { app } = setup();
    const res = await post(app, { OverrideConnectTimeout: "7s", OverrideProtocol: "grpc", OverrideMeshGateway: { Mode: "remote" } });
    const body = await res.json();
    expect(body).toEqual(expected({ overrideConnectTimeoutMs: 7000, overrideProtocol: "grpc", overrideMeshGateway: { Mode: "remote" } }));
    expect(body.Chain.CustomizationHash).toMatch(/^[0-9a-f]{8}$/);
  });

  test("snake case works the same, and a number is nanoseconds", async () => {
    const { app } = setup();
    const body = await (await post(app, { override_connect_timeout: 7e9, override_protocol: "grpc", override_mesh_gateway: { mode: "remote" } })).json();
    expect(body).toEqual(expected({ overrideConnectTimeoutMs: 7000, overrideProtocol: "grpc", overrideMeshGateway: { Mode: "remote" } }));
  });

  test.each([
    [{ OverrideMeshGateway: { Mode: "bogus" } }, "Invalid OverrideMeshGateway.Mode parameter"],
    [{ OverrideMeshGateway: { Mode: "default" } }, "Invalid OverrideMeshGateway.Mode parameter"],
    ["", "Request decoding failed: EOF"],
    ["{", "Request decoding failed: unexpected EOF"],
    ["[]", "Request decoding failed: json: cannot unmarshal array into Go value of type map[string]interface {}"],
    [{ OverrideConnectTimeout: "soon" }, "Request decoding failed: 1 error(s) decoding:\n\n* error decoding 'OverrideConnectTimeout': time: invalid duration soon"],
    [{ OverrideProtocol: {} }, "Request decoding failed: 1 error(s) decoding:\n\n* 'OverrideProtocol' expected type 'string', got unconvertible type 'map[string]interface {}'"],
  ])("%j is 400 %j and reads nothing", async (body: unknown, message: string) => {
    const { state, app } = setup();
    const res = await post(app, body);
    expect([res.status, await res.text()]).toEqual([400, `${message}\n`]);
    expect(state.reads).toEqual([]);
  });
});

describe("decodeChainOverrides", () => {
  test("null is no override; weak typing turns numbers into strings; camel case wins over snake", () => {
    expect(decodeChainOverrides("null")).toEqual({});
    expect(decodeChainOverrides('{"OverrideProtocol": 5}')).toEqual({ protocol: "5" });
    expect(decodeChainOverrides('{"override_protocol": "tcp", "OverrideProtocol": "http"}')).toEqual({ protocol: "http" });
  });
});
