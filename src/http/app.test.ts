import { describe, expect, test } from "bun:test";
import { createHttpApi } from "./app.ts";
import type { AgentInfo, HttpApiDeps } from "./deps.ts";

const agent: AgentInfo = {
  datacenter: "dc2",
  primaryDatacenter: "",
  nodeName: "node-a",
  nodeId: "0b5e9a1c-8d6f-4f51-9d3a-2c4e6f7a8b9c",
  server: true,
  version: "0.1.0",
  revision: "",
  advertiseAddr: "10.0.0.5",
  serfLanPort: 8301,
  serverPort: 8300,
  nodeMeta: { rack: "r1" },
  debugConfig: { Datacenter: "dc2" },
  stats: () => ({ runtime: { name: "bun" } }),
};

function api(leader = "", peers: string[] = []) {
  const deps: HttpApiDeps = { agent, raft: { leader: () => leader, peers: () => peers } };
  return createHttpApi(deps);
}

describe("HTTP API", () => {
  test("/v1/agent/self reports the agent in Consul's shape", async () => {
    const res = await api().request("/v1/agent/self");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/json");
    const body = (await res.json()) as any;
    expect(body.Config).toEqual({
      Datacenter: "dc2",
      PrimaryDatacenter: "dc2",
      NodeName: "node-a",
      NodeID: agent.nodeId,
      Revision: "",
      Server: true,
      Version: "0.1.0",
    });
    expect(body.Member).toMatchObject({ Name: "node-a", Addr: "10.0.0.5", Port: 8301, Status: 1 });
    expect(body.Member.Tags).toMatchObject({ role: "consul", dc: "dc2", port: "8300", id: agent.nodeId });
    expect(body.Meta).toEqual({ rack: "r1" });
    expect(body.Stats.runtime.name).toBe("bun");
  });

  test("/v1/status/leader is an empty JSON string without a leader, the address with one", async () => {
    expect(await (await api().request("/v1/status/leader")).text()).toBe('""');
    expect(await (await api("10.0.0.1:8300").request("/v1/status/leader")).json()).toBe("10.0.0.1:8300");
    expect(await (await api("", ["10.0.0.1:8300"]).request("/v1/status/peers")).json()).toEqual(["10.0.0.1:8300"]);
  });

  test("?dc= asks that datacenter's servers for its leader and peers; an unknown one or a bad name is a 400", async () => {
    const asked: (string | undefined)[] = [];
    const raft = {
      leader: (dc?: string) => {
        asked.push(dc);
        if (dc === "dc9") throw new Error("No path to datacenter");
        return dc === "dc2" ? "10.2.0.1:8300" : "10.0.0.1:8300";
      },
      peers: (dc?: string) => (dc === "dc2" ? ["10.2.0.1:8300", "10.2.0.2:8300"] : ["10.0.0.1:8300"]),
    };
    const app = createHttpApi({ agent, raft });
    expect(await (await app.request("/v1/status/leader?dc=dc2")).json()).toBe("10.2.0.1:8300");
    expect(await (await app.request("/v1/status/peers?dc=dc2")).json()).toEqual(["10.2.0.1:8300", "10.2.0.2:8300"]);
    expect(await (await app.request("/v1/status/leader")).json()).toBe("10.0.0.1:8300");
    const unknown = await app.request("/v1/status/leader?dc=dc9");
    expect(unknown.status).toBe(400);
    expect(await unknown.text()).toContain("No path to datacenter");
    const bad = await app.request("/v1/status/peers?dc=a%20b");
    expect(bad.status).toBe(400);
    expect(await bad.text()).toContain("Invalid datacenter name");
    expect(asked).toEqual(["dc2", undefined, "dc9"]);
  });

  test("?pretty indents", async () => {
    const text = await (await api().request("/v1/agent/self?pretty")).text();
    expect(text).toContain('\n    "Config": {');
  });

  test("unknown paths 404 and wrong methods 405", async () => {
    const missing = await api().request("/v1/nope");
    expect(missing.status).toBe(404);
    expect(await missing.text()).toBe("404 page not found\n");
    const wrong = await api().request("/v1/status/leader", { method: "DELETE" });
    expect(wrong.status).toBe(405);
    expect(await wrong.text()).toBe("method DELETE not allowed\n");
  });
});

describe("/v1/catalog/datacenters", () => {
  test("lists the catalog's datacenters; without one, or when it cannot tell, answers 500 with the reason", async () => {
    const base = { agent, raft: { leader: () => "", peers: () => [] } };
    expect(await (await createHttpApi({ ...base, catalog: { datacenters: () => ["dc1", "dc2"] } }).request("/v1/catalog/datacenters")).json()).toEqual(["dc1", "dc2"]);
    const failing = await createHttpApi({ ...base, catalog: { datacenters: () => { throw new Error("not a server"); } } }).request("/v1/catalog/datacenters");
    expect(failing.status).toBe(500);
    expect(await failing.text()).toBe("not a server\n");
    expect((await createHttpApi(base).request("/v1/catalog/datacenters")).status).toBe(500);
  });
});
