import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { runCommand as run } from "../../../../test/harness/cli_agent.ts";
import { startRecordingAgent, type RecordingAgent } from "../../../../test/harness/cli_http_fake.ts";
import { createCatalogCommand } from "../catalog.ts";

const NODES = [
  { ID: "0e9ea1a8-4d7f-1c9d-2d1e-dd9f5f6b8a10", Node: "server-1", Address: "10.0.0.1", Datacenter: "dc1", TaggedAddresses: { wan: "198.51.100.1", lan: "10.0.0.1" }, Meta: { "consul-network-segment": "", rack: "r1" }, CreateIndex: 5, ModifyIndex: 6 },
  { ID: "", Node: "web|1", Address: "10.0.0.22", Datacenter: "dc1", TaggedAddresses: null, Meta: null, CreateIndex: 7, ModifyIndex: 7 },
];

let agent: RecordingAgent;
let catalog: ReturnType<typeof createCatalogCommand>;
beforeAll(async () => {
  agent = await startRecordingAgent();
  catalog = createCatalogCommand({ env: () => ({ CAUSEWAY_HTTP_ADDR: agent.url }), readStdin: async () => new Uint8Array() });
});
afterAll(() => agent.close());

describe("causeway catalog datacenters", () => {
  test("prints one datacenter per line; -datacenter is sent as ?dc=", async () => {
    agent.reset({ "GET /v1/catalog/datacenters": { body: ["dc1", "dc2"] } });
    expect(await run(catalog, ["datacenters"])).toEqual({ code: 0, out: "dc1\ndc2\n", err: "" });
    await run(catalog, ["datacenters", "-datacenter=dc2"]);
    expect(agent.lines()).toEqual(["GET /v1/catalog/datacenters", "GET /v1/catalog/datacenters?dc=dc2"]);
  });

  test("errors: an argument, a failed request (exit 1)", async () => {
    agent.reset({ "GET /v1/catalog/datacenters": { status: 500, body: "rpc error" } });
    expect(await run(catalog, ["datacenters", "x"])).toEqual({ code: 1, out: "", err: "Too many arguments (expected 0, got 1)\n" });
    expect(await run(catalog, ["datacenters"])).toEqual({ code: 1, out: "", err: "Error listing datacenters: Unexpected response code: 500 (rpc error)\n" });
  });
});

describe("causeway catalog nodes", () => {
  test("prints Consul's table with the short ID; a | in a name stays in its cell", async () => {
    agent.reset({ "GET /v1/catalog/nodes": { body: NODES } });
    const { code, out, err } = await run(catalog, ["nodes"]);
    expect(err).toBe("");
    expect(code).toBe(0);
    expect(out).toBe(["Node      ID        Address    DC", "server-1  0e9ea1a8  10.0.0.1   dc1", "web|1               10.0.0.22  dc1", ""].join("\n"));
    expect(agent.lines()).toEqual(["GET /v1/catalog/nodes"]);
  });

  test("-detailed adds sorted TaggedAddresses and Meta", async () => {
    agent.reset({ "GET /v1/catalog/nodes": { body: NODES } });
    const { out } = await run(catalog, ["nodes", "-detailed"]);
    expect(out).toBe(
      [
        "Node      ID                                    Address    DC   TaggedAddresses                 Meta",
        "server-1  0e9ea1a8-4d7f-1c9d-2d1e-dd9f5f6b8a10  10.0.0.1   dc1  lan=10.0.0.1, wan=198.51.100.1  consul-network-segment=, rack=r1",
        "web|1                                           10.0.0.22  dc1                                  ",
        "",
      ].join("\n"),
    );
  });

  test("-service, -near, -node-meta (repeated, sorted), -filter and -stale become the request", async () => {
    agent.reset({ "GET /v1/catalog/service/web": { body: [{ ID: "abc-def", Node: "n1", Address: "10.0.0.5", Datacenter: "dc1", NodeMeta: { a: "1" }, ServiceName: "web" }] } });
    const { code, out } = await run(catalog, ["nodes", "-service=web", "-near=_agent", "-node-meta", "z=9", "-node-meta=a=1", "-filter", "Meta.a == 1", "-stale"]);
    expect(code).toBe(0);
    expect(out).toBe("Node  ID   Address   DC\nn1    abc  10.0.0.5  dc1\n");
    expect(agent.lines()).toEqual(["GET /v1/catalog/service/web?filter=Meta.a+%3D%3D+1&near=_agent&node-meta=a%3A1&node-meta=z%3A9&stale="]);
  });

  test("no match is a note on stderr and exit 0", async () => {
    agent.reset({ "GET /v1/catalog/nodes": { body: [] } });
    expect(await run(catalog, ["nodes", "-node-meta=k=v"])).toEqual({ code: 0, out: "", err: "No nodes match the given query - try expanding your search.\n" });
  });

  test("errors: bad -node-meta names the flag, agent errors name the query", async () => {
    agent.reset({ "GET /v1/catalog/service/x": { status: 500, body: "boom" } });
    const bad = await run(catalog, ["nodes", "-node-meta=novalue"]);
    expect(bad.code).toBe(1);
    expect(bad.err).toStartWith('invalid value "novalue" for flag -node-meta: Missing "=" value in argument: novalue\nUsage: causeway catalog nodes');
    expect(await run(catalog, ["nodes", "-service=x"])).toEqual({ code: 1, out: "", err: "Error listing nodes for service: Unexpected response code: 500 (boom)\n" });
  });
});

describe("causeway catalog services", () => {
  const SERVICES = { web: ["v2", "v1"], consul: [], redis: null };

  test("prints the sorted names", async () => {
    agent.reset({ "GET /v1/catalog/services": { body: SERVICES } });
    expect(await run(catalog, ["services"])).toEqual({ code: 0, out: "consul\nredis\nweb\n", err: "" });
  });

  test("-tags prints Consul's tabwriter block (sorted tags, trimmed at the ends)", async () => {
    agent.reset({ "GET /v1/catalog/services": { body: SERVICES } });
    expect((await run(catalog, ["services", "-tags"])).out).toBe("consul      \nredis       \nweb         v1,v2\n");
  });

  test("-node lists the node's services with merged tags; -node-meta and -datacenter are sent", async () => {
    agent.reset({
      "GET /v1/catalog/node/n%201": {
        body: {
          Node: { Node: "n 1" },
          Services: { "web-1": { ID: "web-1", Service: "web", Tags: ["b"] }, "web-2": { ID: "web-2", Service: "web", Tags: ["a"] }, db: { ID: "db", Service: "db", Tags: null } },
        },
      },
    });
    expect((await run(catalog, ["services", "-node=n 1", "-tags", "-node-meta=r=1", "-datacenter=dc2"])).out).toBe("db       \nweb      a,b\n");
    expect(agent.lines()).toEqual(["GET /v1/catalog/node/n%201?dc=dc2&node-meta=r%3A1"]);
  });

  test("an unknown node (null or 404) is no match, exit 0", async () => {
    agent.reset({ "GET /v1/catalog/node/gone": { body: null } });
    expect(await run(catalog, ["services", "-node=gone"])).toEqual({ code: 0, out: "", err: "No services match the given query - try expanding your search.\n" });
    expect((await run(catalog, ["services", "-node=other"])).code).toBe(0);
  });

  test("an agent error is exit 1", async () => {
    agent.reset({ "GET /v1/catalog/services": { status: 403, body: "Permission denied" } });
    expect(await run(catalog, ["services"])).toEqual({ code: 1, out: "", err: "Error listing services: Unexpected response code: 403 (Permission denied)\n" });
  });
});

describe("causeway catalog", () => {
  test("help lists the subcommands", async () => {
    const { code, out } = await run(catalog, ["--help"]);
    expect(code).toBe(0);
    expect(out).toContain("    datacenters    Lists all known datacenters\n    nodes          Lists all nodes in the given datacenter\n    services       Lists all registered services in a datacenter\n");
    expect((await run(catalog, ["nodes", "-h"])).out).toContain("-node-meta=<key=value>");
  });
});
