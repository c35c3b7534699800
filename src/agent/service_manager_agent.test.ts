/**
 * The service manager inside the agent: central config merged into the local state (what the agent
 * shows, syncs and reroutes checks by), the registration as given persisted, the waiting registration
 * of the HTTP API, and watches ending with the service.
 */
import { describe, expect, test } from "bun:test";
import type { AgentPersistence } from "./agent.ts";
import { flush, kit, run, type Kit } from "./agent_test_kit.test.ts";
import { parseServiceRegistration } from "./registration.ts";
import { fakeConfigCache, proxyDefaults, serviceDefaults, type FakeConfigCache } from "./service_manager_kit.test.ts";
import type { ServiceRegistration } from "./types.ts";

interface CentralKit extends Kit {
  readonly config: FakeConfigCache;
  readonly httpUrls: string[];
  readonly saved: Map<string, ServiceRegistration>;
}

function centralKit(): CentralKit {
  const config = fakeConfigCache();
  const httpUrls: string[] = [];
  const saved = new Map<string, ServiceRegistration>();
  const persistence: AgentPersistence = {
    saveService: (id, reg) => void saved.set(id, reg),
    removeService: (id) => void saved.delete(id),
    saveCheck: () => {}, removeCheck: () => {}, saveCheckState: () => {}, saveMaintenance: () => {},
  };
  const k = kit({
    centralConfig: config.source,
    persistence,
    probes: {
      http: async (req) => {
        httpUrls.push(req.url);
        return { status: 200, statusText: "OK", body: "" };
      },
      tcp: async () => {},
    },
  });
  return Object.assign(k, { config, httpUrls, saved });
}

/** `web` with an HTTP check and a sidecar at 10.0.0.9 that does not expose checks itself. */
const web = (sidecarProxy: Record<string, unknown> = {}) => parseServiceRegistration({
  Name: "web", Port: 8080,
  Check: { CheckID: "web-http", HTTP: "http://127.0.0.1:8080/health", Interval: "10s" },
  Connect: { SidecarService: { Address: "10.0.0.9", Proxy: { Upstreams: [{ DestinationName: "db", LocalBindPort: 9191 }], ...sidecarProxy } } },
});

/** The URLs the HTTP check probed during the next 10.5 s. */
async function probed(k: CentralKit): Promise<string[]> {
  k.httpUrls.length = 0;
  await run(k.clock, 10_500);
  return [...new Set(k.httpUrls)];
}

describe("central config in the agent", () => {
  test("Expose.Checks from proxy-defaults reroutes the destination's checks through the sidecar, and deleting it stops that", async () => {
    const k = centralKit();
    k.agent.registerService(web());
    expect(await probed(k)).toEqual(["http://127.0.0.1:8080/health"]);

    k.config.set("proxy-defaults", "global", proxyDefaults({ expose: { Checks: true } }));
    expect(k.agent.service("web-sidecar-proxy")!.Proxy.Expose).toEqual({ Checks: true });
    expect(await probed(k)).toEqual(["http://10.0.0.9:21500/health"]);
    expect(k.agent.exposedCheckPaths("web-sidecar-proxy")).toEqual([
      { ListenerPort: 21500, Path: "/health", LocalPathPort: 8080, Protocol: "http", ParsedFromCheck: true },
    ]);
    // The check's definition keeps its own URL.
    expect(k.agent.check("web-http")!.Definition.HTTP).toBe("http://127.0.0.1:8080/health");

    k.config.set("proxy-defaults", "global", null);
    expect(await probed(k)).toEqual(["http://127.0.0.1:8080/health"]);
    expect(k.agent.exposedCheckPaths("web-sidecar-proxy")).toEqual([]);
    k.agent.stop();
  });

  test("so does Expose.Checks in the destination's service-defaults", async () => {
    const k = centralKit();
    k.agent.registerService(web());
    await flush();
    k.config.set("service-defaults", "web", serviceDefaults("web", { expose: { Checks: true } }));
    expect(await probed(k)).toEqual(["http://10.0.0.9:21500/health"]);
    k.agent.stop();
  });

  test("the agent shows and syncs the merged proxy, and persists the registration as given", async () => {
    const k = centralKit();
    let changes = 0;
    k.agent.onChange(() => changes++);
    k.agent.start();
    k.agent.registerService(web({ Config: { envoy_stats_bind_addr: "0.0.0.0:9000" } }));
    await flush();
    const before = changes;
    k.config.set("proxy-defaults", "global", proxyDefaults({ config: { envoy_prometheus_bind_addr: "0.0.0.0:9102", protocol: "http" } }));
    expect(changes).toBeGreaterThan(before);

    const config = { envoy_stats_bind_addr: "0.0.0.0:9000", envoy_prometheus_bind_addr: "0.0.0.0:9102", protocol: "http" };
    expect(k.agent.agentService("web-sidecar-proxy")!.Proxy!.Config).toEqual(config);
    expect(k.agent.agentServices()["web-sidecar-proxy"]!.Proxy!.Upstreams![0]!.Config).toEqual({ protocol: "http" });
    await k.agent.syncChanges();
    expect(k.catalog.servicesOf("node-1").get("web-sidecar-proxy")!.Proxy.Config).toEqual(config);
    expect(k.saved.get("web")!.Connect!.SidecarService!.Proxy!.Config).toEqual({ envoy_stats_bind_addr: "0.0.0.0:9000" });
    k.agent.stop();
  });

  test("deregistering a proxy (or its parent) ends its watches; other services keep theirs", async () => {
    const k = centralKit();
    k.agent.registerService(web());
    k.agent.registerService(parseServiceRegistration({ Kind: "mesh-gateway", Name: "gateway", Port: 8443 }));
    expect(k.config.watching()).toEqual(["proxy-defaults/global", "service-defaults/db", "service-defaults/gateway", "service-defaults/web"]);
    k.agent.deregisterService("web");
    expect(k.config.watching()).toEqual(["proxy-defaults/global", "service-defaults/gateway"]);
    k.agent.deregisterService("gateway");
    expect(k.config.watching()).toEqual([]);
    k.agent.stop();
  });
});

describe("registerServiceWithCentralConfig (the HTTP API's registration)", () => {
  test("waits for the entries and registers the proxy merged, its destination's checks rerouted from the start", async () => {
    const k = centralKit();
    k.config.set("proxy-defaults", "global", proxyDefaults({ expose: { Checks: true }, config: { envoy_prometheus_bind_addr: "0.0.0.0:9102" } }));
    k.config.holdGets = true;
    const done = k.agent.registerServiceWithCentralConfig(web());
    await flush();
    expect(k.agent.service("web")).toBeUndefined();
    k.config.release();
    expect(await done).toEqual([]);
    expect(k.agent.service("web-sidecar-proxy")!.Proxy.Config).toEqual({ envoy_prometheus_bind_addr: "0.0.0.0:9102" });
    expect(k.agent.exposedCheckPaths("web-sidecar-proxy").map((p) => p.ListenerPort)).toEqual([21500]);
    expect(await probed(k)).toEqual(["http://10.0.0.9:21500/health"]);
    k.agent.stop();
  });

  test("an entry that cannot be read fails the registration, which writes nothing", async () => {
    const k = centralKit();
    k.config.failGets = "No known Consul servers in dc1";
    await expect(k.agent.registerServiceWithCentralConfig(web())).rejects.toThrow(
      'could not retrieve initial service_defaults config for service "web-sidecar-proxy": No known Consul servers in dc1',
    );
    expect(k.agent.services()).toEqual([]);
    expect(k.agent.checks()).toEqual([]);
    expect(k.saved.size).toBe(0);
    expect(k.config.watching()).toEqual([]);
    k.agent.stop();
  });

  test("a registration overtaken while it waits (the service deregistered meanwhile) is dropped", async () => {
    const k = centralKit();
    k.agent.registerService(web());
    k.config.holdGets = true;
    const done = k.agent.registerServiceWithCentralConfig(web({ Config: { k: "v" } }));
    await flush();
    k.agent.deregisterService("web");
    k.config.release();
    expect(await done).toEqual([]);
    expect(k.agent.services()).toEqual([]);
    k.agent.stop();
  });

  test("a service that is not a proxy registers without reading anything", async () => {
    const k = centralKit();
    k.config.failGets = "unreachable";
    await k.agent.registerServiceWithCentralConfig(parseServiceRegistration({ Name: "api", Port: 80 }));
    expect(k.agent.service("api")).toBeDefined();
    expect(k.config.gets).toEqual([]);
    k.agent.stop();
  });
});
