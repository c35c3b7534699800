/**
 * The DNS interface of a real `causeway agent -dev` asked with dig (dnsutils) over UDP and TCP: nodes,
 * PTR, NS, services with tags and RFC 2782 names, Connect sidecars, health filtering, NXDOMAIN with the SOA, a recursor (a DNS
 * server of ours in this process, authoritative for "example"), and, on an agent with ACLs (default
 * deny), filtering by the agent's default token. Every process is removed in afterAll.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { createDnsResolver, DNS_DEFAULTS, startDnsServer, type DnsServer } from "../../src/dns/index.ts";
import { seededRng, silentLogger, systemClock } from "../../src/platform/index.ts";
import { ensureDebianCommands } from "../harness/debian.ts";
import { agentCall, poll, startAgentProcess, type AgentProcess } from "../harness/agent_process.ts";

const ROOT = "5a6b7c8d-9e0f-4a1b-8c2d-3e4f5a6b7c8d";
const PORTS = ["-bind", "127.0.0.1", "-http-port", "0", "-dns-port", "0", "-grpc-port", "-1", "-server-port", "0", "-serf-lan-port", "0", "-serf-wan-port", "0"];
let work = "";
let upstream: DnsServer;
const agents: AgentProcess[] = [];

const dnsPort = (a: AgentProcess) => Number(/DNS: [\d.]+:(\d+)/.exec(a.output())?.[1]);
const dig = async (a: AgentProcess, ...args: string[]) =>
  (await promisify(execFile)("dig", ["@127.0.0.1", "-p", String(dnsPort(a)), "+time=3", "+tries=1", ...args], { encoding: "utf8" })).stdout;
const short = async (a: AgentProcess, ...args: string[]) => (await dig(a, "+short", ...args)).trim().split("\n").filter((l) => l !== "").sort();

beforeAll(async () => {
  ensureDebianCommands({ dig: "dnsutils" }, "the DNS end-to-end tests");
  work = mkdtempSync(join(tmpdir(), "cw-dns-e2e-"));
  const cfg = { ...DNS_DEFAULTS, domain: "example.", datacenter: "dc1" };
  upstream = await startDnsServer({
    host: "127.0.0.1", port: 0, config: cfg, logger: silentLogger(), clock: systemClock(),
    resolver: createDnsResolver({ config: cfg, rng: seededRng(1), nowSeconds: () => 0, catalog: {
      nodeServices: async (node) => (node === "up" ? { Node: { ID: "", Node: "up", Address: "192.0.2.53", Datacenter: "dc1", TaggedAddresses: {}, Meta: {}, CreateIndex: 1, ModifyIndex: 1 }, Services: {} } : null),
      serviceNodes: async () => [],
      preparedQuery: async () => null,
      nodes: async () => [],
      servicesAt: async () => [],
    } }),
  });
}, 180_000);

afterAll(async () => {
  for (const a of agents) await a.stop("SIGKILL").catch(() => {});
  await upstream?.close();
  if (work) rmSync(work, { recursive: true, force: true });
});

const register = (a: AgentProcess, node: string, address: string, service: string, port: number, tags: string[], status: string, token?: string) =>
  agentCall(a.httpUrl, "PUT", "/v1/catalog/register", token, {
    Node: node, Address: address, NodeMeta: { rack: "r1" },
    Service: { ID: `${service}-${node}`, Service: service, Tags: tags, Port: port },
    Check: { CheckID: `${service}-${node}`, Name: service, Status: status, ServiceID: `${service}-${node}` },
  });

describe("dig against an agent", () => {
  let agent: AgentProcess;
  beforeAll(async () => {
    agent = await startAgentProcess(process.execPath, ["src/main/cli.ts", "agent", "-dev", "-node", "dns-agent", ...PORTS, "-recursor", `127.0.0.1:${upstream.udpPort}`]);
    agents.push(agent);
    await poll(() => agentCall(agent.httpUrl, "GET", "/v1/status/leader"), (r) => r.status === 200 && r.json !== "", 20_000, "a leader");
    expect((await register(agent, "db1", "10.1.0.1", "db", 5432, ["primary"], "passing")).json).toBe(true);
    expect((await register(agent, "db2", "10.1.0.2", "db", 5433, ["replica"], "warning")).json).toBe(true);
    expect((await register(agent, "db3", "10.1.0.3", "db", 5434, ["replica"], "critical")).json).toBe(true);
  }, 60_000);

  test("nodes: the agent's own, a registered one with its meta; case does not matter", async () => {
    expect(await short(agent, "dns-agent.node.consul", "A")).toEqual(["127.0.0.1"]);
    expect(await short(agent, "DB1.node.dc1.consul", "A")).toEqual(["10.1.0.1"]);
    expect(await short(agent, "db1.node.consul", "TXT")).toEqual(['"rack=r1"']);
    expect(await short(agent, "-x", "10.1.0.2")).toEqual(["db2.node.dc1.consul."]);
    expect(await short(agent, "consul", "NS")).toEqual(["dns-agent.node.dc1.consul."]);
  });

  test("services: critical instances left out, tags, SRV with RFC 2782 names, over UDP and TCP", async () => {
    expect(await short(agent, "db.service.consul", "A")).toEqual(["10.1.0.1", "10.1.0.2"]);
    expect(await short(agent, "replica.db.service.consul", "A")).toEqual(["10.1.0.2"]);
    expect(await short(agent, "+tcp", "_db._primary.service.dc1.consul", "SRV")).toEqual(["1 1 5432 db1.node.dc1.consul."]);
    const full = await dig(agent, "+tcp", "db.service.consul", "SRV");
    expect(full).toContain("status: NOERROR");
    expect(full).toMatch(/flags: qr aa rd ra;/);
    expect(full).toMatch(/db2\.node\.dc1\.consul\.\s+0\s+IN\s+A\s+10\.1\.0\.2/);
  });

  test("SRV weights follow the instance's health: Weights.Passing, or Weights.Warning when a check warns", async () => {
    for (const [node, address, status] of [["api1", "10.4.0.1", "passing"], ["api2", "10.4.0.2", "warning"]] as const) {
      const r = await agentCall(agent.httpUrl, "PUT", "/v1/catalog/register", undefined, {
        Node: node, Address: address, Service: { ID: "api", Service: "api", Port: 8080, Weights: { Passing: 10, Warning: 2 } },
        Check: { CheckID: "api", Name: "api", Status: status, ServiceID: "api" },
      });
      expect(r.json).toBe(true);
    }
    expect(await short(agent, "api.service.consul", "SRV")).toEqual(["1 10 8080 api1.node.dc1.consul.", "1 2 8080 api2.node.dc1.consul."]);
  });

  test("<service>.connect: the Connect-capable instances, i.e. the sidecar proxies' addresses and ports", async () => {
    const proxy = await agentCall(agent.httpUrl, "PUT", "/v1/catalog/register", undefined, {
      Node: "db1", Address: "10.1.0.1",
      Service: { ID: "db-sidecar-proxy", Service: "db-sidecar-proxy", Kind: "connect-proxy", Address: "10.1.0.100", Port: 21000, Proxy: { DestinationServiceName: "db" } },
    });
    expect(proxy.json).toBe(true);
    expect(await short(agent, "db.connect.consul", "SRV")).toEqual(["1 1 21000 0a010064.addr.dc1.consul."]);
    expect(await short(agent, "db.connect.consul", "A")).toEqual(["10.1.0.100"]);
    // The proxy's own address has no node: its PTR names the service.
    expect(await short(agent, "-x", "10.1.0.100")).toEqual(["db-sidecar-proxy.service.dc1.consul."]);
  });

  test("NXDOMAIN with the SOA for unknown names and datacenters; names outside the domain go to the recursor", async () => {
    for (const name of ["nope.service.consul", "nope.node.consul", "db.service.dc9.consul"]) {
      const out = await dig(agent, name, "A");
      expect(out, name).toContain("status: NXDOMAIN");
      expect(out, name).toMatch(/consul\.\s+0\s+IN\s+SOA\s+ns\.consul\. hostmaster\.consul\. \d+ 3600 600 86400 0/);
    }
    expect(await short(agent, "up.node.example", "A")).toEqual(["192.0.2.53"]);
  });

  test("query timings under Consul's metric names", async () => {
    type Metrics = { Samples: { Name: string; Count: number; Labels: Record<string, string> }[] };
    // /v1/agent/metrics shows the current 10 s interval: ask, then read, again if the interval turned in between.
    const m = await poll(async () => {
      await short(agent, "db.service.consul", "A");
      await short(agent, "-x", "10.1.0.1");
      return (await agentCall(agent.httpUrl, "GET", "/v1/agent/metrics")).json as Metrics;
    }, (x) => ["consul.dns.domain_query", "consul.dns.ptr_query"].every((n) => x.Samples.some((s) => s.Name === n)), 15_000, "DNS samples in the current interval");
    const domain = m.Samples.find((x) => x.Name === "consul.dns.domain_query");
    expect(domain?.Count).toBeGreaterThan(0);
    expect(domain?.Labels).toEqual({ node: "dns-agent" });
    expect(m.Samples.find((x) => x.Name === "consul.dns.ptr_query")?.Count).toBeGreaterThan(0);
  });
});

describe("udp_answer_limit and enable_truncate: TC set, dig retries over TCP and gets every instance", () => {
  let plain: AgentProcess, truncating: AgentProcess;
  beforeAll(async () => {
    writeFileSync(join(work, "truncate.json"), JSON.stringify({ dns_config: { enable_truncate: true, service_ttl: { "we*": "7s" } } }));
    plain = await startAgentProcess(process.execPath, ["src/main/cli.ts", "agent", "-dev", "-node", "plain", ...PORTS]);
    agents.push(plain);
    truncating = await startAgentProcess(process.execPath, ["src/main/cli.ts", "agent", "-dev", "-node", "trunc", "-config-file", join(work, "truncate.json"), ...PORTS]);
    agents.push(truncating);
    for (const a of [plain, truncating]) {
      await poll(() => agentCall(a.httpUrl, "GET", "/v1/status/leader"), (r) => r.status === 200 && r.json !== "", 20_000, "a leader");
      for (let i = 1; i <= 10; i++) expect((await register(a, `web${i}`, `10.3.0.${i}`, "web", 80, [], "passing")).json).toBe(true);
    }
  }, 60_000);

  test("without EDNS: 3 answers by default; with enable_truncate TC, then all 10 over TCP; EDNS lifts the limit", async () => {
    expect(await short(plain, "+noedns", "web.service.consul", "A")).toHaveLength(3);
    const retried = await dig(truncating, "+noedns", "web.service.consul", "A");
    expect(retried).toContain("Truncated, retrying in TCP mode");
    expect(retried).toContain("ANSWER: 10,");
    expect(retried).toMatch(/web\.service\.consul\.\s+7\s+IN\s+A\s+10\.3\.0\.\d+/);
    expect(await short(plain, "+edns=0", "+bufsize=4096", "web.service.consul", "A")).toHaveLength(10);
  });
});

describe("ACLs: the agent's default token decides what DNS sees", () => {
  let agent: AgentProcess;
  beforeAll(async () => {
    writeFileSync(join(work, "acl.json"), JSON.stringify({ acl: { enabled: true, default_policy: "deny", token_ttl: "1s", tokens: { master: ROOT, agent: ROOT } } }));
    agent = await startAgentProcess(process.execPath, ["src/main/cli.ts", "agent", "-dev", "-node", "acl-agent", "-config-file", join(work, "acl.json"), ...PORTS]);
    agents.push(agent);
    await poll(() => agentCall(agent.httpUrl, "GET", "/v1/acl/token/self", ROOT), (r) => r.status === 200, 30_000, "the master token");
    expect((await register(agent, "web1", "10.2.0.1", "web", 80, [], "passing", ROOT)).json).toBe(true);
  }, 60_000);

  test("anonymous sees nothing (NXDOMAIN); a default token with read access sees the service", async () => {
    expect(await dig(agent, "web.service.consul", "A")).toContain("status: NXDOMAIN");
    const policy = (await agentCall(agent.httpUrl, "PUT", "/v1/acl/policy", ROOT, { Name: "dns-read", Rules: 'service_prefix "" { policy = "read" } node_prefix "" { policy = "read" }' })).json;
    const token = (await agentCall(agent.httpUrl, "PUT", "/v1/acl/token", ROOT, { Policies: [{ ID: policy.ID }] })).json;
    expect((await agentCall(agent.httpUrl, "PUT", "/v1/agent/token/default", ROOT, { Token: token.SecretID })).status).toBe(200);
    await poll(() => short(agent, "web.service.consul", "A"), (v) => v.join() === "10.2.0.1", 15_000, "web through the default token");
  }, 60_000);
});
