/**
 * Mesh gateways across two real datacenters (one `agent -dev` server each, joined over WAN gossip):
 * a mesh gateway registered in each through `connect envoy -gateway=mesh -register -bootstrap`; dc1's gateway's xDS stream holds dc2's gateway cluster with dc2's
 * WAN address. A dc1 sidecar whose upstream `db` fails over to dc2 through the local gateway (mode
 * "local" from proxy-defaults) sees its db cluster's SNI and endpoints switch to dc2 through dc1's
 * gateway when every dc1 db instance turns critical, and switch back when they recover; with mode
 * "remote" the same failure sends it to dc2's gateway at its WAN address.
 *
 * Servers talk across datacenters only over TLS, so both run with certificates of one test CA; the
 * agents' gRPC ports then serve TLS too (as Consul 1.8's do).
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ClusterSchema } from "../../src/gen/envoy/config/cluster/v3/cluster_pb.ts";
import { HealthStatus } from "../../src/gen/envoy/config/core/v3/health_check_pb.ts";
import { ClusterLoadAssignmentSchema } from "../../src/gen/envoy/config/endpoint/v3/endpoint_pb.ts";
import type { DiscoveryResponse } from "../../src/gen/envoy/service/discovery/v3/discovery_pb.ts";
import { adsClient, CDS, decodeAll, EDS, followUntil } from "../harness/ads_client.ts";
import { freePort, poll, startAgentProcess, type AgentProcess } from "../harness/agent_process.ts";
import { testPki, writeServerTlsConfig } from "../harness/tls_fixtures.ts";
import { endpointsOf, sniOf } from "./federation/xds_view.ts";

const cli = join(import.meta.dir, "..", "..", "src", "main", "cli.ts");
const work = mkdtempSync(join(tmpdir(), "causeway-mgw-"));
const running: AgentProcess[] = [];
const agents: Record<string, { http: string; grpc: string }> = {};
const pki = testPki();
const grpcTls = { caPem: pki.ca.cert, serverName: "localhost" };

beforeAll(async () => {
  const wan1 = await freePort();
  const start = async (dc: string, wanPort: number, wanJoin: string[]) => {
    const dir = join(work, dc);
    writeFileSync(join(dir, "tls.json"), JSON.stringify(writeServerTlsConfig(dir, dc as "dc1" | "dc2")));
    const a = await startAgentProcess(process.execPath, [
      cli, "agent", "-dev", "-config-file", join(dir, "tls.json"), "-datacenter", dc, "-node", `srv-${dc}`, "-bind", "127.0.0.1", "-http-port", "0", "-dns-port", "-1", "-grpc-port", "0",
      "-server-port", "0", "-serf-lan-port", "0", "-serf-wan-port", String(wanPort),
      ...wanJoin.flatMap((j) => ["-retry-join-wan", j]), "-retry-interval-wan", "1s",
    ]);
    running.push(a);
    agents[dc] = { http: a.httpUrl, grpc: /gRPC: ([\d.]+:\d+)/.exec(a.output())?.[1] ?? "" };
  };
  await start("dc1", wan1, []);
  await start("dc2", 0, [`127.0.0.1:${wan1}`]);
  await poll(() => fetch(`${agents.dc1!.http}/v1/catalog/datacenters`).then((r) => r.json()), (v) => JSON.stringify(v) === '["dc1","dc2"]', 30_000, "dc1 seeing dc2 over the WAN");
  for (const dc of ["dc1", "dc2"]) {
    await poll(() => fetch(`${agents[dc]!.http}/v1/connect/ca/roots`).then((r) => r.json()), (r) => typeof r?.ActiveRootID === "string" && r.ActiveRootID !== "", 20_000, `${dc}'s CA root`);
  }
}, 60_000);

afterAll(async () => {
  if (process.env.E2E_AGENT_OUTPUT) for (const a of running) console.log(a.output());
  for (const a of running) await a.stop("SIGKILL").catch(() => {});
  rmSync(work, { recursive: true, force: true });
});

const put = async (dc: string, path: string, body?: unknown) => {
  const res = await fetch(`${agents[dc]!.http}${path}`, { method: "PUT", ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
  if (res.status !== 200) throw new Error(`${dc} ${path}: ${res.status} ${await res.text()}`);
};

/**
 * Registers a mesh gateway on 127.0.0.1:<lan> with WAN address `wan`:443 the way an operator does
 * (`connect envoy -gateway=mesh -register -bootstrap`) and returns the printed Envoy bootstrap.
 */
async function registerGateway(dc: string, lan: number, wan: string): Promise<{ node: { id: string; cluster: string } }> {
  const proc = Bun.spawn([
    process.execPath, cli, "connect", "envoy", "-gateway=mesh", "-register", "-bootstrap", "-address", `127.0.0.1:${lan}`, "-wan-address", `${wan}:443`,
    "-http-addr", agents[dc]!.http, "-grpc-addr", `https://${agents[dc]!.grpc}`, "-ca-file", join(work, dc, "ca.pem"),
  ], { stdout: "pipe", stderr: "pipe" });
  const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  if (code !== 0) throw new Error(`connect envoy in ${dc} exited ${code}: ${err}`);
  return JSON.parse(out);
}

/** db with a TTL check the test flips, and a sidecar on `port` that follows db's health. */
const db = (port: number) => ({
  Name: "db", Port: 5432,
  Check: { CheckID: "db-ttl", Name: "db ttl", TTL: "10m", Status: "passing" },
  Connect: { SidecarService: { Port: port, Checks: [{ Name: "db alias", AliasService: "db" }] } },
});

test("a gateway sees the other datacenter's gateways; a sidecar fails over to dc2 through dc1's gateway and back, then through dc2's", async () => {
  const bootstrap = await registerGateway("dc1", 18443, "127.0.0.2");
  expect(bootstrap.node).toMatchObject({ id: "mesh-gateway", cluster: "mesh-gateway" });
  await registerGateway("dc2", 28443, "127.0.0.3");
  await put("dc1", "/v1/agent/service/register", db(21001));
  await put("dc2", "/v1/agent/service/register", db(22001));
  await put("dc1", "/v1/config", { Kind: "proxy-defaults", Name: "global", MeshGateway: { Mode: "local" } });
  await put("dc1", "/v1/config", { Kind: "service-resolver", Name: "db", Failover: { "*": { Datacenters: ["dc2"] } } });
  await put("dc1", "/v1/agent/service/register", {
    Name: "web", Port: 8080, Connect: { SidecarService: { Port: 21000, Proxy: { Upstreams: [{ DestinationName: "db", LocalBindPort: 9191 }] } } },
  });
  const td = ((await (await fetch(`${agents.dc1!.http}/v1/connect/ca/roots`)).json()) as { TrustDomain: string }).TrustDomain;

  // dc1's gateway: a cluster for dc2 whose endpoint is dc2's gateway at its WAN address.
  const gw = adsClient(agents.dc1!.grpc, "mesh-gateway", "mesh-gateway", grpcTls);
  try {
    const dc2Cluster = `dc2.internal.${td}`;
    const names = (r: DiscoveryResponse | undefined) => (r ? decodeAll(ClusterSchema, r).map((c) => c.name).sort() : []);
    gw.request(CDS);
    gw.request(EDS, [dc2Cluster]);
    const latest = await followUntil(gw, { [CDS]: [], [EDS]: [dc2Cluster] }, (l) => names(l.get(CDS)).length === 3 && !!l.get(EDS) && endpointsOf(l.get(EDS)!).length > 0, [], 30_000);
    // dc2 through its gateways; db and web (both have sidecars here) by sni_cluster.
    expect(names(latest.get(CDS))).toEqual([`db.default.dc1.internal.${td}`, dc2Cluster, `web.default.dc1.internal.${td}`].sort());
    expect(endpointsOf(latest.get(EDS)!)).toEqual(["127.0.0.3:443"]);
  } finally {
    gw.close();
  }

  // dc1's web sidecar: db served by dc1's own instance until it fails. The client ACKs every response, as
  // Envoy does (the server sends one response at a time).
  const ads = adsClient(agents.dc1!.grpc, "web-sidecar-proxy", "web", grpcTls);
  try {
    const dbCluster = `db.default.dc1.internal.${td}`;
    const subs = { [CDS]: [], [EDS]: [dbCluster] };
    const state = (want: { sni: string; endpoint: string }) => (latest: ReadonlyMap<string, DiscoveryResponse>) => {
      const cds = latest.get(CDS);
      const eds = latest.get(EDS);
      return !!cds && !!eds && sniOf(cds, dbCluster) === want.sni && endpointsOf(eds).join() === want.endpoint;
    };
    ads.request(CDS);
    ads.request(EDS, [dbCluster]);
    let latest = await followUntil(ads, subs, state({ sni: dbCluster, endpoint: "127.0.0.1:21001" }), [], 30_000);

    // Every dc1 db instance critical: the cluster keeps its name, its SNI names dc2, its endpoint is dc1's
    // gateway (mode "local"), its health dc2's db.
    await put("dc1", "/v1/agent/check/fail/db-ttl");
    latest = await followUntil(ads, subs, state({ sni: `db.default.dc2.internal.${td}`, endpoint: "127.0.0.1:18443" }));
    expect(decodeAll(ClusterLoadAssignmentSchema, latest.get(EDS)!)[0]!.endpoints[0]!.lbEndpoints[0]!.healthStatus).toBe(HealthStatus.HEALTHY);

    // dc1's db recovers: back to its own instance and SNI.
    await put("dc1", "/v1/agent/check/pass/db-ttl");
    await followUntil(ads, subs, state({ sni: dbCluster, endpoint: "127.0.0.1:21001" }));

    // Mode "remote": the failover goes straight to dc2's gateways at their WAN address.
    await put("dc1", "/v1/config", { Kind: "proxy-defaults", Name: "global", MeshGateway: { Mode: "remote" } });
    await put("dc1", "/v1/agent/check/fail/db-ttl");
    await followUntil(ads, subs, state({ sni: `db.default.dc2.internal.${td}`, endpoint: "127.0.0.3:443" }));
  } finally {
    ads.close();
  }
}, 90_000);
