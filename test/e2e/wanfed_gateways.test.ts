/**
 * WAN federation through mesh gateways, two datacenters on loopback: each server advertises an
 * unroutable WAN address (198.18.0.0/15, TEST-NET benchmarking range, no route here), so the only
 * path between the datacenters is their built-in mesh gateways (`causeway gateway mesh -register
 * -expose-servers`). dc2's server learns dc1's gateway from `primary_gateways`, joins dc1's WAN pool
 * through it, replicates the federation states, and RPC with `?dc=` crosses the gateways both ways.
 * (The issue's full three-datacenter run in network namespaces is a separate, later e2e.)
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort, poll, startAgentProcess, type AgentProcess } from "../harness/agent_process.ts";
import { writeServerTlsConfig } from "../harness/tls_fixtures.ts";

const cli = join(import.meta.dir, "..", "..", "src", "main", "cli.ts");
const work = mkdtempSync(join(tmpdir(), "causeway-wanfed-"));
const agents: Record<string, AgentProcess> = {};
const gateways: ChildProcess[] = [];
const gatewayOut: string[] = [];
const ports: Record<string, { http: number; grpc: number; gateway: number; admin: number }> = {};

async function startDc(dc: string, wanAddr: string, extra: Record<string, unknown>): Promise<void> {
  const dir = join(work, dc);
  writeFileSync(join(dir, "config.json"), JSON.stringify({
    ...writeServerTlsConfig(dir, dc as "dc1" | "dc2"),
    primary_datacenter: "dc1", advertise_addr_wan: wanAddr,
    connect: { enabled: true, enable_mesh_gateway_wan_federation: true },
    ...extra,
  }));
  ports[dc] = { http: await freePort(), grpc: await freePort(), gateway: await freePort(), admin: await freePort() };
  agents[dc] = await startAgentProcess(process.execPath, [
    cli, "agent", "-dev", "-config-file", join(dir, "config.json"), "-datacenter", dc, "-node", `srv-${dc}`, "-bind", "127.0.0.1",
    "-http-port", String(ports[dc]!.http), "-dns-port", "-1", "-grpc-port", String(ports[dc]!.grpc), "-server-port", "0", "-serf-lan-port", "0", "-serf-wan-port", "0",
  ]);
}

function startGateway(dc: string): void {
  const p = ports[dc]!;
  const g = spawn(process.execPath, [
    cli, "gateway", "mesh", "-register", "-expose-servers", "-address", `127.0.0.1:${p.gateway}`, "-wan-address", `127.0.0.1:${p.gateway}`,
    "-http-addr", `127.0.0.1:${p.http}`, "-grpc-addr", `https://127.0.0.1:${p.grpc}`, "-ca-file", join(work, dc, "ca.pem"), "-admin-bind", `127.0.0.1:${p.admin}`,
  ], { stdio: ["ignore", "pipe", "pipe"] });
  const i = gatewayOut.push("") - 1;
  g.stdout!.on("data", (d) => (gatewayOut[i] += String(d)));
  g.stderr!.on("data", (d) => (gatewayOut[i] += String(d)));
  gateways.push(g);
}

const http = (dc: string, path: string, init?: RequestInit) => fetch(`http://127.0.0.1:${ports[dc]!.http}${path}`, init);

beforeAll(async () => {
  await startDc("dc1", "198.18.0.1", {});
  await poll(() => http("dc1", "/v1/connect/ca/roots").then((r) => r.json()), (r) => typeof r?.TrustDomain === "string" && r.TrustDomain !== "", 30_000, "dc1's CA");
  startGateway("dc1");
  await startDc("dc2", "198.18.0.2", { primary_gateways: [`127.0.0.1:${ports.dc1!.gateway}`], primary_gateways_interval: "1s", retry_interval_wan: "1s" });
  startGateway("dc2");
}, 90_000);

afterAll(async () => {
  if (process.env.E2E_AGENT_OUTPUT) {
    for (const dc of Object.keys(ports)) {
      for (const path of ["/clusters", "/stats"]) console.log(`==== ${dc} gateway ${path}\n${await fetch(`http://127.0.0.1:${ports[dc]!.admin}${path}`).then((r) => r.text()).catch((e) => String(e))}`);
    }
    for (const dc of Object.keys(ports)) console.log(`==== ${dc} fed mesh gateways\n${await http(dc, "/v1/internal/federation-states/mesh-gateways").then((r) => r.text()).catch((e) => String(e))}`);
    for (const [dc, a] of Object.entries(agents)) console.log(`==== ${dc}\n${a.output()}`);
    for (const o of gatewayOut) console.log(`==== gateway\n${o}`);
  }
  for (const g of gateways) g.kill("SIGKILL");
  for (const a of Object.values(agents)) await a.stop("SIGKILL").catch(() => {});
  rmSync(work, { recursive: true, force: true });
});

test("dc2 federates with dc1 through mesh gateways only: WAN members, federation states, ?dc RPC both ways", async () => {
  const wanAlive = async (dc: string) =>
    ((await (await http(dc, "/v1/agent/members?wan=1")).json()) as { Name: string; Status: number }[]).filter((m) => m.Status === 1).map((m) => m.Name).sort();
  await poll(() => wanAlive("dc1"), (v) => v.length === 2, 60_000, "both servers alive in dc1's WAN pool");
  expect(await wanAlive("dc2")).toEqual(["srv-dc1.dc1", "srv-dc2.dc2"]);
  // Federation states of both datacenters, in both.
  const states = async (dc: string) => ((await (await http(dc, "/v1/internal/federation-states")).json()) as { Datacenter: string }[]).map((s) => s.Datacenter).sort();
  await poll(() => states("dc1"), (v) => v.join() === "dc1,dc2", 60_000, "dc1 holding both federation states");
  await poll(() => states("dc2"), (v) => v.join() === "dc1,dc2", 60_000, "dc2 holding both federation states (replicated)");
  // RPC across the gateways, both ways (each direction once its gateways are known to the locator).
  const putVia = (from: string, to: string, key: string, body: string) =>
    poll(() => http(from, `/v1/kv/${key}?dc=${to}`, { method: "PUT", body }).then((r) => r.text()), (t) => t === "true", 30_000, `a PUT from ${from} to ${to}`);
  await putVia("dc2", "dc1", "crossed", "from-dc2");
  expect(await (await http("dc1", "/v1/kv/crossed?raw")).text()).toBe("from-dc2");
  await putVia("dc1", "dc2", "back", "from-dc1");
  expect(await (await http("dc2", "/v1/kv/back?raw")).text()).toBe("from-dc1");
  const miss = await http("dc1", "/v1/kv/crossed?dc=dc2");
  expect({ status: miss.status, body: await miss.text() }).toEqual({ status: 404, body: "" });
  // The datacenter list crosses too; the servers never dialled each other's unroutable WAN address.
  expect(await (await http("dc1", "/v1/catalog/datacenters")).json()).toEqual(["dc1", "dc2"]);
}, 180_000);
