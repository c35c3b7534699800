/**
 * xDS for a sidecar against a real `causeway agent -dev` (needs the xDS wiring of src/main/xds.ts in
 * src/main/agent.ts): a backend `db` and a `web` service with a sidecar upstream to it are registered
 * over HTTP; a @grpc/grpc-js client opens an ADS stream as `web-sidecar-proxy` and receives its clusters,
 * endpoints and listeners; then failing db's TTL check turns its endpoint UNHEALTHY, and an intention
 * for `web` changes the public listener, both observed over the same stream.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { fromBinary, toJsonString } from "@bufbuild/protobuf";
import { ClusterSchema } from "../../src/gen/envoy/config/cluster/v3/cluster_pb.ts";
import { HealthStatus } from "../../src/gen/envoy/config/core/v3/health_check_pb.ts";
import { ClusterLoadAssignmentSchema } from "../../src/gen/envoy/config/endpoint/v3/endpoint_pb.ts";
import { ListenerSchema } from "../../src/gen/envoy/config/listener/v3/listener_pb.ts";
import type { DiscoveryResponse } from "../../src/gen/envoy/service/discovery/v3/discovery_pb.ts";
import { envoyRegistry } from "../../src/xds/index.ts";
import { adsClient, CDS, EDS, LDS } from "../harness/ads_client.ts";
import { poll, startAgentProcess, type AgentProcess } from "../harness/agent_process.ts";


let agent: AgentProcess;
let grpcAddr = "";
beforeAll(async () => {
  agent = await startAgentProcess(process.execPath, [
    "src/main/cli.ts", "agent", "-dev", "-bind", "127.0.0.1", "-http-port", "0", "-dns-port", "-1", "-grpc-port", "0", "-server-port", "0", "-serf-lan-port", "0", "-serf-wan-port", "0",
  ]);
  grpcAddr = /gRPC: ([\d.]+:\d+)/.exec(agent.output())?.[1] ?? "";
});
afterAll(async () => {
  await agent?.stop("SIGKILL").catch(() => {});
});

const put = async (path: string, body?: unknown) => {
  const res = await fetch(`${agent.httpUrl}${path}`, { method: path.startsWith("/v1/connect/intentions") ? "POST" : "PUT", ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
  if (res.status !== 200) throw new Error(`${path}: ${res.status} ${await res.text()}`);
  return res;
};

test("a sidecar gets clusters, endpoints and listeners; a health change and an intention reach it over the stream", async () => {
  expect(grpcAddr).not.toBe("");
  await poll(() => fetch(`${agent.httpUrl}/v1/connect/ca/roots`).then((r) => r.json()), (r) => typeof r?.ActiveRootID === "string" && r.ActiveRootID !== "", 20_000, "an active CA root");
  await put("/v1/agent/service/register", {
    Name: "db", Port: 5432,
    Check: { CheckID: "db-ttl", Name: "db ttl", TTL: "10m", Status: "passing" },
    Connect: { SidecarService: { Port: 21001, Checks: [{ Name: "db alias", AliasService: "db" }] } },
  });
  await put("/v1/agent/service/register", {
    Name: "web", Port: 8080,
    Connect: { SidecarService: { Port: 21000, Proxy: { Upstreams: [{ DestinationName: "db", LocalBindPort: 9191 }] }, Checks: [{ Name: "web alias", AliasService: "web" }] } },
  });

  const ads = adsClient(grpcAddr, "web-sidecar-proxy", "web");
  try {
    ads.request(CDS);
    const cds = await ads.next(CDS);
    const clusters = cds.resources.map((a) => fromBinary(ClusterSchema, a.value));
    const names = clusters.map((c) => c.name).sort();
    expect(names).toContain("local_app");
    const dbCluster = names.find((n) => n.startsWith("db.default.dc1.internal."));
    expect(dbCluster).toBeDefined();
    ads.request(CDS, [], cds);

    // Endpoints: the db sidecar, healthy; wait until the alias check has caught up with db's TTL check.
    ads.request(EDS, [dbCluster!]);
    let eds = await ads.next(EDS);
    const statusOf = (r: DiscoveryResponse) => fromBinary(ClusterLoadAssignmentSchema, r.resources[0]!.value).endpoints.flatMap((l) => l.lbEndpoints.map((e) => e.healthStatus));
    while (statusOf(eds).join() !== String(HealthStatus.HEALTHY)) {
      ads.request(EDS, [dbCluster!], eds);
      eds = await ads.next(EDS);
    }
    const cla = fromBinary(ClusterLoadAssignmentSchema, eds.resources[0]!.value);
    const ep = cla.endpoints[0]!.lbEndpoints[0]!;
    expect(ep.hostIdentifier.case).toBe("endpoint");
    expect(JSON.stringify(toJsonString(ClusterLoadAssignmentSchema, cla))).toContain("21001");
    ads.request(EDS, [dbCluster!], eds);

    ads.request(LDS);
    const lds = await ads.next(LDS);
    const listeners = lds.resources.map((a) => fromBinary(ListenerSchema, a.value));
    expect(listeners.map((l) => l.name).sort()).toEqual(["db:127.0.0.1:9191", "public_listener:0.0.0.0:21000"]);
    ads.request(LDS, [], lds);

    // Health: db's TTL check fails, the alias follows, the endpoint turns UNHEALTHY (sent, not removed).
    await put("/v1/agent/check/fail/db-ttl");
    let next = await ads.next(EDS);
    while (statusOf(next).join() !== String(HealthStatus.UNHEALTHY)) {
      ads.request(EDS, [dbCluster!], next);
      next = await ads.next(EDS);
    }
    expect(next.versionInfo).not.toBe(eds.versionInfo);
    ads.request(EDS, [dbCluster!], next);

    // An intention for web: the public listener's RBAC now names the source.
    const publicOf = (r: DiscoveryResponse) =>
      toJsonString(ListenerSchema, r.resources.map((a) => fromBinary(ListenerSchema, a.value)).find((l) => l.name.startsWith("public_listener"))!, { registry: envoyRegistry });
    expect(publicOf(lds)).not.toContain("/svc/api");
    await put("/v1/connect/intentions", { SourceName: "api", DestinationName: "web", Action: "deny" });
    const lds2 = await ads.next(LDS);
    expect(lds2.versionInfo).not.toBe(lds.versionInfo);
    expect(publicOf(lds2)).toContain("/svc/api");
  } finally {
    ads.close();
  }
}, 60_000);
