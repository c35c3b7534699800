/**
 * Prepared-query failover between two datacenters with real agent processes: dc1 and dc2 servers meet
 * in the WAN pool; `web` has only a critical instance in dc1 and a passing one in dc2; a query created in
 * dc1 fails over to dc2 (explicit Datacenters, then NearestN) and says so (Failovers 1, Datacenter
 * "dc2"). A template query rendered in dc1 is shipped to dc2 as rendered (Consul's ExecuteRemote). The
 * servers' WAN coordinates of both datacenters are served by /v1/coordinate/datacenters. dc1's DNS
 * (asked with dig) answers the same queries as `<query>.query.consul`, and `<service>.service.dc2.consul`
 * through the forwarding to dc2.
 * Servers talk across datacenters only over TLS, so both run with certificates of one test CA.
 */
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { ensureDebianCommands } from "../harness/debian.ts";
import { freePort, poll, startAgentProcess, type AgentProcess } from "../harness/agent_process.ts";
import { writeServerTlsConfig } from "../harness/tls_fixtures.ts";

const cli = join(import.meta.dir, "..", "..", "src", "main", "cli.ts");
const work = mkdtempSync(join(tmpdir(), "causeway-pq-"));
const running: AgentProcess[] = [];
afterAll(async () => {
  for (const a of running) await a.stop("SIGKILL").catch(() => {});
  rmSync(work, { recursive: true, force: true });
});

interface ExecuteBody {
  Service: string;
  Datacenter: string;
  Failovers: number;
  Nodes: { Node: { Node: string; Datacenter: string }; Service: { Service: string } }[];
}

test("a query with no healthy instance in dc1 fails over to dc2 and reports Failovers 1, Datacenter dc2", async () => {
  const wan1 = await freePort();
  const start = (dc: string, wanJoin: string[]) => {
    const dir = join(work, dc);
    writeFileSync(join(dir, "tls.json"), JSON.stringify(writeServerTlsConfig(dir, dc as "dc1" | "dc2")));
    return startAgentProcess(process.execPath, [
      cli, "agent", "-server", "-bootstrap-expect", "1", "-datacenter", dc, "-node", `srv-${dc}`, "-data-dir", join(dir, "data"),
      "-config-file", join(dir, "tls.json"),
      "-bind", "127.0.0.1", "-http-port", "0", "-dns-port", dc === "dc1" ? "0" : "-1", "-grpc-port", "-1", "-server-port", "0", "-serf-lan-port", "0",
      "-serf-wan-port", dc === "dc1" ? String(wan1) : "0", ...wanJoin.flatMap((a) => ["-retry-join-wan", a]), "-retry-interval-wan", "1s",
    ]);
  };
  const dc1 = await start("dc1", []);
  running.push(dc1);
  const dc2 = await start("dc2", [`127.0.0.1:${wan1}`]);
  running.push(dc2);
  await poll(async () => (await (await fetch(`${dc1.httpUrl}/v1/catalog/datacenters`)).json()) as string[], (v) => v.length === 2, 30_000, "both datacenters");

  const register = (agent: AgentProcess, node: string, status: string) =>
    poll(async () => (await fetch(`${agent.httpUrl}/v1/catalog/register`, {
      method: "PUT",
      body: JSON.stringify({
        Node: node, Address: "127.0.0.9", Service: { Service: "web", Port: 80 },
        Check: { CheckID: "web-alive", Name: "web alive", Status: status, ServiceID: "web" },
      }),
    })).status, (s) => s === 200, 30_000, `registration of ${node}`);
  await register(dc1, "web-dc1", "critical");
  await register(dc2, "web-dc2", "passing");

  const create = async (body: unknown) => {
    const res = await fetch(`${dc1.httpUrl}/v1/query`, { method: "POST", body: JSON.stringify(body) });
    expect(res.status).toBe(200);
    return ((await res.json()) as { ID: string }).ID;
  };
  const execute = async (idOrName: string) => {
    const res = await fetch(`${dc1.httpUrl}/v1/query/${idOrName}/execute`);
    expect(res.status).toBe(200);
    return (await res.json()) as ExecuteBody;
  };

  const explicit = await create({ Name: "web-explicit", Service: { Service: "web", Failover: { Datacenters: ["dc2"] } } });
  const byList = await execute(explicit);
  expect([byList.Failovers, byList.Datacenter, byList.Service]).toEqual([1, "dc2", "web"]);
  expect(byList.Nodes.map((n) => [n.Node.Node, n.Node.Datacenter])).toEqual([["web-dc2", "dc2"]]);

  await create({ Name: "web-nearest", Service: { Service: "web", Failover: { NearestN: 1 } } });
  expect(await execute("web-nearest")).toMatchObject({ Failovers: 1, Datacenter: "dc2", Nodes: [{ Node: { Node: "web-dc2" } }] });

  await create({ Name: "tmpl-", Template: { Type: "name_prefix_match" }, Service: { Service: "${name.suffix}", Failover: { Datacenters: ["dc2"] } } });
  expect(await execute("tmpl-web")).toMatchObject({ Service: "web", Failovers: 1, Datacenter: "dc2", Nodes: [{ Node: { Node: "web-dc2" } }] });

  // Without a failover the empty local result stands; OnlyPassing never sees the critical instance.
  await create({ Name: "web-local", Service: { Service: "web", OnlyPassing: true } });
  expect(await execute("web-local")).toMatchObject({ Failovers: 0, Datacenter: "dc1", Nodes: [] });
  // In dc2 itself the query is not known (prepared queries live in one datacenter).
  expect((await fetch(`${dc2.httpUrl}/v1/query/web-explicit/execute`)).status).toBe(404);

  // The same through dc1's DNS: queries by name, ID and template, and another datacenter by its label.
  ensureDebianCommands({ dig: "dnsutils" }, "the prepared-query DNS checks");
  const dnsPort = /DNS: [\d.]+:(\d+)/.exec(dc1.output())![1]!;
  const dig = async (...args: string[]) => (await promisify(execFile)("dig", ["@127.0.0.1", "-p", dnsPort, "+time=3", "+tries=1", ...args], { encoding: "utf8" })).stdout;
  const short = async (...args: string[]) => (await dig("+short", ...args)).trim();
  expect(await short("web-explicit.query.consul", "SRV")).toBe("1 1 80 web-dc2.node.dc2.consul.");
  expect(await short(`${explicit}.query.consul`, "A")).toBe("127.0.0.9");
  expect(await short("tmpl-web.query.consul", "A")).toBe("127.0.0.9");
  expect(await short("web.service.dc2.consul", "A")).toBe("127.0.0.9");
  for (const name of ["web.service.consul", "web-local.query.consul", "nope.query.consul"]) expect(await dig(name, "A"), name).toContain("status: NXDOMAIN");

  // The servers' WAN coordinates, learned from gossip acks across the datacenters, are what NearestN
  // and /v1/catalog/datacenters rank by: both datacenters show up with their server's coordinate.
  type DatacenterMap = { Datacenter: string; AreaID: string; Coordinates: { Node: string; Coord: { Vec: number[] } }[] };
  const maps = await poll(
    async () => (await (await fetch(`${dc1.httpUrl}/v1/coordinate/datacenters`)).json()) as DatacenterMap[],
    (v) => v.length === 2 && v.every((m) => m.Coordinates.length === 1),
    30_000,
    "WAN coordinates of both datacenters",
  );
  expect(maps.map((m) => [m.Datacenter, m.AreaID, m.Coordinates[0]!.Coord.Vec.length]).sort()).toEqual([["dc1", "wan", 8], ["dc2", "wan", 8]]);
  expect(await (await fetch(`${dc1.httpUrl}/v1/catalog/datacenters`)).json()).toEqual(["dc1", "dc2"]);
}, 120_000);
