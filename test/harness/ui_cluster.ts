/**
 * The web UI's seeded multi-datacenter cluster: three real `causeway agent -dev` servers on loopback,
 * dc1 (the primary), dc2 and dc3, joined over WAN gossip with mutual TLS between servers (one test CA),
 * started from source on Bun, the compiled binary or Deno (CAUSEWAY_UI_RUNTIME, see ui_agent.ts).
 *
 * Seeded:
 * - in every datacenter a mesh gateway `gw-<dc>` (agent service of kind mesh-gateway, name
 *   "mesh-gateway") whose health is a real TCP check, every second, of a listener this harness holds:
 *   stopGateway(dc) closes it (as a stopped gateway stops answering), startGateway(dc) opens it again;
 * - `web` with instances in every datacenter (two in dc1, one in dc2 and dc3) and `api` in dc1, each a
 *   catalog registration with a check the test flips with setInstances(dc, service, status);
 * - in dc1: proxy-defaults (protocol http, mesh gateway mode local) and a service-resolver for `web`
 *   failing over to dc2, then dc3.
 *
 * stop() kills every agent (SIGKILL) and closes every listener; call it in afterAll.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { agentCall, freePort, poll, startAgentProcess, type AgentProcess } from "./agent_process.ts";
import { writeServerTlsConfig } from "./tls_fixtures.ts";
import { causewayCommand } from "./ui_agent.ts";

export const UI_DATACENTERS = ["dc1", "dc2", "dc3"] as const;
export type UiDatacenter = (typeof UI_DATACENTERS)[number];

export interface UiCluster {
  readonly agents: Readonly<Record<UiDatacenter, AgentProcess>>;
  /** The HTTP API of `dc`'s server (every UI page of any datacenter is reachable from each). */
  url(dc: UiDatacenter): string;
  /** A call of `dc`'s API that must answer 200; its JSON. */
  api(dc: UiDatacenter, method: string, path: string, body?: unknown): Promise<unknown>;
  /** Re-registers every seeded instance of `service` in `dc` with its check at `status`. */
  setInstances(dc: UiDatacenter, service: string, status: "passing" | "warning" | "critical"): Promise<void>;
  /** Closes `dc`'s gateway listener: its TCP check turns critical within about a second. */
  stopGateway(dc: UiDatacenter): Promise<void>;
  /** Opens `dc`'s gateway listener again on the same port. */
  startGateway(dc: UiDatacenter): Promise<void>;
  stop(): Promise<void>;
}

/** The seeded instances: datacenter, service, node, address. */
const INSTANCES: readonly (readonly [UiDatacenter, string, string, string])[] = [
  ["dc1", "web", "web-dc1-a", "10.1.0.1"], ["dc1", "web", "web-dc1-b", "10.1.0.2"], ["dc1", "api", "api-dc1-a", "10.1.0.3"],
  ["dc2", "web", "web-dc2-a", "10.2.0.1"], ["dc3", "web", "web-dc3-a", "10.3.0.1"],
];

export async function startUiCluster(): Promise<UiCluster> {
  const work = mkdtempSync(join(tmpdir(), "causeway-ui-cluster-"));
  const agents = {} as Record<UiDatacenter, AgentProcess>;
  const listeners = new Map<UiDatacenter, { port: number; server: Server | undefined }>();
  const { cmd, args } = causewayCommand();
  const stop = async () => {
    for (const a of Object.values(agents)) await a.stop("SIGKILL").catch(() => {});
    for (const l of listeners.values()) l.server?.close();
    rmSync(work, { recursive: true, force: true });
  };
  try {
    const wan1 = await freePort();
    for (const dc of UI_DATACENTERS) {
      const config = join(work, `${dc}.json`);
      writeFileSync(config, JSON.stringify({ primary_datacenter: "dc1", ...writeServerTlsConfig(join(work, dc), dc) }));
      agents[dc] = await startAgentProcess(cmd, [
        ...args, "agent", "-dev", "-config-file", config, "-datacenter", dc, "-node", `srv-${dc}`, "-bind", "127.0.0.1", "-http-port", "0", "-dns-port", "-1",
        "-grpc-port", "-1", "-server-port", "0", "-serf-lan-port", "0", "-serf-wan-port", dc === "dc1" ? String(wan1) : "0",
        ...(dc === "dc1" ? [] : ["-retry-join-wan", `127.0.0.1:${wan1}`, "-retry-interval-wan", "1s"]),
      ], { timeoutMs: 60_000 });
    }
    for (const dc of UI_DATACENTERS) {
      await poll(() => agentCall(agents[dc].httpUrl, "GET", "/v1/catalog/datacenters"), (r) => JSON.stringify(r.json) === '["dc1","dc2","dc3"]' || (Array.isArray(r.json) && r.json.length === 3), 60_000, `${dc} seeing all three datacenters`);
      await poll(() => agentCall(agents[dc].httpUrl, "GET", "/v1/status/leader"), (r) => r.status === 200 && r.json !== "", 30_000, `${dc}'s leader`);
    }
    // Ready means the WAN round-trip estimates exist too: every datacenter's server has a coordinate.
    await poll(() => agentCall(agents.dc1.httpUrl, "GET", "/v1/coordinate/datacenters"),
      (r) => Array.isArray(r.json) && UI_DATACENTERS.every((dc) => r.json.some((d: { Datacenter: string; Coordinates: unknown[] }) => d.Datacenter === dc && d.Coordinates.length > 0)),
      60_000, "WAN coordinates of all three datacenters");
    const api = async (dc: UiDatacenter, method: string, path: string, body?: unknown) => {
      const r = await agentCall(agents[dc].httpUrl, method, path, undefined, body);
      if (r.status !== 200) throw new Error(`${dc} ${method} ${path}: ${r.status} ${r.text}`);
      return r.json as unknown;
    };
    const listen = async (dc: UiDatacenter, port = 0) => {
      const server = createServer((s) => s.end());
      await new Promise<void>((resolve, reject) => server.once("error", reject).listen(port, "127.0.0.1", () => resolve()));
      listeners.set(dc, { port: (server.address() as { port: number }).port, server });
    };
    for (const dc of UI_DATACENTERS) {
      await listen(dc);
      const port = listeners.get(dc)!.port;
      await api(dc, "PUT", "/v1/agent/service/register", {
        Kind: "mesh-gateway", ID: `gw-${dc}`, Name: "mesh-gateway", Port: port, Address: "127.0.0.1",
        TaggedAddresses: { lan: { Address: "127.0.0.1", Port: port }, wan: { Address: "127.0.0.1", Port: port } },
        Check: { Name: "gateway listener", TCP: `127.0.0.1:${port}`, Interval: "1s", Timeout: "500ms" },
      });
    }
    const setInstances = async (dc: UiDatacenter, service: string, status: string) => {
      for (const [d, svc, node, address] of INSTANCES) {
        if (d !== dc || svc !== service) continue;
        await api(dc, "PUT", "/v1/catalog/register", {
          Node: node, Address: address, Service: { ID: `${svc}-${node}`, Service: svc, Port: 8080, Tags: [dc], Meta: { version: "v1" } },
          Check: { CheckID: `${svc}-${node}`, Name: `${svc} alive`, Status: status, ServiceID: `${svc}-${node}` },
        });
      }
    };
    for (const key of new Set(INSTANCES.map(([d, s]) => `${d}/${s}`))) {
      const [dc, svc] = key.split("/") as [UiDatacenter, string];
      await setInstances(dc, svc, "passing");
    }
    await api("dc1", "PUT", "/v1/config", { Kind: "proxy-defaults", Name: "global", Config: { protocol: "http" }, MeshGateway: { Mode: "local" } });
    await api("dc1", "PUT", "/v1/config", { Kind: "service-resolver", Name: "web", Failover: { "*": { Datacenters: ["dc2", "dc3"] } } });
    return {
      agents,
      url: (dc) => agents[dc].httpUrl,
      api,
      setInstances,
      async stopGateway(dc) {
        const l = listeners.get(dc)!;
        await new Promise<void>((resolve) => (l.server ? l.server.close(() => resolve()) : resolve()));
        listeners.set(dc, { port: l.port, server: undefined });
      },
      startGateway: (dc) => listen(dc, listeners.get(dc)!.port),
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}
