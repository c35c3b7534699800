import { describe, expect, test } from "bun:test";
import { fakeState } from "../../test/harness/fake_state.ts";
import { createHttpApi } from "./app.ts";
import { datacenterNameError } from "./datacenter.ts";
import type { AgentInfo } from "./deps.ts";

const agent = { datacenter: "dc1", nodeName: "n1", server: true } as AgentInfo;

function setup() {
  const state = fakeState();
  state.values["catalog-nodes"] = [];
  return { state, app: createHttpApi({ agent, raft: { leader: () => "", peers: () => [] }, state, random: () => 0 }) };
}

describe("datacenter names", () => {
  test("a DNS label of letters, digits, '-' and '_' is a name; compared as given (DC1 is not dc1)", () => {
    for (const ok of ["dc1", "us-east_2", "DC1", "a".repeat(63)]) expect(datacenterNameError(ok)).toBeUndefined();
    expect(datacenterNameError("a b")).toBe(`Invalid datacenter name "a b": only letters, digits, '-' and '_' are allowed`);
    for (const bad of ["dc1.consul", "x/y", "dc1:8300", "é", "http://x", "a\nb"]) expect(datacenterNameError(bad)).toBeString();
    expect(datacenterNameError("a".repeat(64))).toBe("Invalid datacenter name: longer than 63 characters");
  });

  test("?dc= that cannot be a datacenter is 400 on every route, before the state is asked", async () => {
    const { app, state } = setup();
    for (const [method, path] of [["GET", "/v1/catalog/nodes"], ["PUT", "/v1/kv/k"], ["DELETE", "/v1/kv/k"], ["GET", "/v1/health/service/web"], ["PUT", "/v1/txn"], ["GET", "/v1/operator/raft/configuration"]]) {
      const res = await app.request(`${path!}?dc=${encodeURIComponent("dc1.evil/x")}`, { method, body: method === "PUT" ? "[]" : undefined });
      expect([path, res.status, await res.text()]).toEqual([path, 400, `Invalid datacenter name "dc1.evil/x": only letters, digits, '-' and '_' are allowed\n`]);
    }
    const long = await app.request(`/v1/catalog/nodes?dc=${"d".repeat(64)}`);
    expect(long.status).toBe(400);
    expect([state.reads, state.writes]).toEqual([[], []]);
  });

  test("a valid ?dc= (or an empty one) is passed on as given", async () => {
    const { app, state } = setup();
    expect((await app.request("/v1/catalog/nodes?dc=DC2")).status).toBe(200);
    expect((await app.request("/v1/catalog/nodes?dc=")).status).toBe(200);
    expect(state.reads.map((r) => r.options.datacenter)).toEqual(["DC2", undefined]);
  });

  test("a registration's Datacenter must be a datacenter name; ?compile-dc too", async () => {
    const { app, state } = setup();
    const put = (path: string, body: unknown) => app.request(path, { method: "PUT", body: JSON.stringify(body) });
    const reg = await put("/v1/catalog/register", { Datacenter: "dc 2", Node: "a", Address: "10.0.0.1" });
    expect([reg.status, await reg.text()]).toEqual([400, `Invalid datacenter name "dc 2": only letters, digits, '-' and '_' are allowed\n`]);
    const dereg = await put("/v1/catalog/deregister", { Datacenter: "x".repeat(100), Node: "a" });
    expect(dereg.status).toBe(400);
    const proxy = { Service: "web-proxy", Kind: "connect-proxy", Port: 21000, Proxy: { DestinationServiceName: "web", Upstreams: [{ DestinationName: "db", Datacenter: "dc2.evil", LocalBindPort: 9191 }] } };
    const upstream = await put("/v1/catalog/register", { Node: "a", Address: "10.0.0.1", Service: proxy });
    expect([upstream.status, await upstream.text()]).toEqual([400, `1 error occurred:\n\t* Invalid upstream datacenter name "dc2.evil": only letters, digits, '-' and '_' are allowed\n\n`]);
    const chain = await app.request("/v1/discovery-chain/web?compile-dc=a%2Fb");
    expect(chain.status).toBe(400);
    expect([state.reads, state.writes]).toEqual([[], []]);
    expect((await put("/v1/catalog/register", { Datacenter: "dc2", Node: "a", Address: "10.0.0.1" })).status).toBe(200);
    expect(state.writes.map((w) => w.datacenter)).toEqual(["dc2"]);
  });
});
