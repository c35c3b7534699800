import { describe, expect, test } from "bun:test";
import { memoryLogger } from "../platform/index.ts";
import { flush } from "./agent_test_kit.test.ts";
import { toNodeService } from "./convert.ts";
import type { LocalService } from "./local_state.ts";
import { parseServiceRegistration } from "./registration.ts";
import { RegistrationOrder, ServiceManager, serviceConfigRequest } from "./service_manager.ts";
import { fakeConfigCache, proxyDefaults, serviceDefaults, type FakeConfigCache } from "./service_manager_kit.test.ts";

const service = (body: Record<string, unknown>): LocalService => toNodeService(parseServiceRegistration(body));

const webProxy = (proxy: Record<string, unknown> = {}, id = "web-proxy") => service({
  Kind: "connect-proxy", ID: id, Name: "web-proxy", Port: 21000,
  Proxy: {
    DestinationServiceName: "web", DestinationServiceID: "web",
    Upstreams: [
      { DestinationName: "db", LocalBindPort: 9191 },
      { DestinationType: "prepared_query", DestinationName: "q", LocalBindPort: 9192 },
    ],
    ...proxy,
  },
});

function managerKit(): { cache: FakeConfigCache; manager: ServiceManager; updates: [string, LocalService][]; logs: string[] } {
  const cache = fakeConfigCache();
  const updates: [string, LocalService][] = [];
  const logger = memoryLogger("debug");
  const manager = new ServiceManager({ ...cache.source, logger, onUpdate: (id, merged) => void updates.push([id, merged]) });
  return { cache, manager, updates, logs: logger.lines };
}

describe("serviceConfigRequest (makeConfigRequest)", () => {
  test("a sidecar asks for its destination and its service upstreams (once each); a gateway for its own name; others for nothing", () => {
    const proxy = webProxy({ Upstreams: [{ DestinationName: "db", LocalBindPort: 1 }, { DestinationName: "db", Datacenter: "dc2", LocalBindPort: 2 }, { DestinationType: "prepared_query", DestinationName: "q", LocalBindPort: 3 }] });
    expect(serviceConfigRequest(proxy)).toEqual({ name: "web", upstreams: ["db"] });
    expect(serviceConfigRequest(service({ Kind: "mesh-gateway", Name: "gateway", Port: 8443 }))).toEqual({ name: "gateway", upstreams: [] });
    expect(serviceConfigRequest(service({ Name: "web", Port: 80 }))).toBeUndefined();
  });
});

describe("ServiceManager", () => {
  test("registered as given until the entries are in; a later change of an entry is merged in and announced once", async () => {
    const { cache, manager, updates } = managerKit();
    const reg = webProxy({ Config: { envoy_stats_bind_addr: "0.0.0.0:9000" } });
    expect(manager.track(reg)).toEqual(reg);
    expect(cache.watching()).toEqual(["proxy-defaults/global", "service-defaults/db", "service-defaults/web"]);
    await flush();
    // Every entry read as missing: nothing to fold in, nothing announced.
    expect(updates).toEqual([]);

    cache.set("proxy-defaults", "global", proxyDefaults({
      config: { envoy_prometheus_bind_addr: "0.0.0.0:9102", envoy_stats_bind_addr: "0.0.0.0:1" }, expose: { Checks: true }, mode: "local",
    }));
    expect(updates.map(([id]) => id)).toEqual(["web-proxy"]);
    const proxy = updates[0]![1].Proxy;
    // Keys the registration sets win; the others and Expose.Checks come from proxy-defaults.
    expect(proxy.Config).toEqual({ envoy_stats_bind_addr: "0.0.0.0:9000", envoy_prometheus_bind_addr: "0.0.0.0:9102" });
    expect(proxy.Expose).toEqual({ Checks: true });
    expect(proxy.MeshGateway).toEqual({ Mode: "local" });
    // A prepared-query upstream keeps its own (empty) mode.
    expect(proxy.Upstreams!.map((u) => u.MeshGateway)).toEqual([{ Mode: "local" }, {}]);
    expect(manager.registered("web-proxy")).toEqual(reg);

    // The same entry again changes nothing, so nothing is announced.
    cache.set("proxy-defaults", "global", proxyDefaults({ config: { envoy_prometheus_bind_addr: "0.0.0.0:9102", envoy_stats_bind_addr: "0.0.0.0:1" }, expose: { Checks: true }, mode: "local" }));
    expect(updates.length).toBe(1);

    // Deleting the entry goes back to the registration as given.
    cache.set("proxy-defaults", "global", null);
    expect(updates.length).toBe(2);
    expect(updates[1]![1]).toEqual(reg);
  });

  test("service-defaults: the destination's protocol, expose and mode; each service upstream's protocol, else the global one", async () => {
    const { cache, manager, updates } = managerKit();
    cache.set("proxy-defaults", "global", proxyDefaults({ config: { protocol: "http" } }));
    cache.set("service-defaults", "web", serviceDefaults("web", { protocol: "grpc", expose: { Paths: [{ Path: "/m", LocalPathPort: 8080, ListenerPort: 21500 }] }, mode: "remote" }));
    manager.track(webProxy());
    await flush();
    const proxy = updates.at(-1)![1].Proxy;
    expect(proxy.Config).toEqual({ protocol: "grpc" });
    expect(proxy.Expose).toEqual({ Paths: [{ Path: "/m", LocalPathPort: 8080, ListenerPort: 21500 }] });
    expect(proxy.MeshGateway).toEqual({ Mode: "remote" });
    expect(proxy.Upstreams![0]!.Config).toEqual({ protocol: "http" });
    // A prepared-query upstream gets nothing.
    expect(proxy.Upstreams![1]).toEqual(webProxy().Proxy.Upstreams![1]!);
    cache.set("service-defaults", "db", serviceDefaults("db", { protocol: "tcp" }));
    expect(updates.at(-1)![1].Proxy.Upstreams![0]!.Config).toEqual({ protocol: "tcp" });
  });

  test("a re-registration with the entries already known is merged at once; upstreams not in yet wait without holding up the rest", async () => {
    const { cache, manager } = managerKit();
    cache.set("proxy-defaults", "global", proxyDefaults({ config: { protocol: "http", k: "v" } }));
    manager.track(webProxy());
    await flush();
    const again = manager.track(webProxy({ Upstreams: [{ DestinationName: "cache", LocalBindPort: 9193 }] }));
    expect(again.Proxy.Config).toEqual({ protocol: "http", k: "v" });
    expect(again.Proxy.Upstreams![0]!.Config).toBeUndefined();
    // The db watch went with the upstream; the shared ones were kept, not restarted.
    expect(cache.watching()).toEqual(["proxy-defaults/global", "service-defaults/cache", "service-defaults/web"]);
  });

  test("entries are watched once for every service that needs them, and unwatched with the last one", async () => {
    const { cache, manager } = managerKit();
    manager.track(webProxy({}, "a"));
    manager.track(webProxy({}, "b"));
    manager.track(service({ Kind: "mesh-gateway", Name: "gateway", Port: 8443 }));
    expect(cache.watching()).toEqual(["proxy-defaults/global", "service-defaults/db", "service-defaults/gateway", "service-defaults/web"]);
    manager.untrack("a");
    expect(cache.watching()).toEqual(["proxy-defaults/global", "service-defaults/db", "service-defaults/gateway", "service-defaults/web"]);
    manager.untrack("b");
    expect(cache.watching()).toEqual(["proxy-defaults/global", "service-defaults/gateway"]);
    // The same ID registered again as a plain service stops being followed.
    manager.track(service({ ID: "gateway", Name: "gateway", Port: 8443 }));
    expect(cache.watching()).toEqual([]);
    expect(manager.registered("gateway")).toBeUndefined();
  });

  test("a mesh gateway takes proxy-defaults and its own service-defaults", async () => {
    const { cache, manager, updates } = managerKit();
    manager.track(service({ Kind: "mesh-gateway", Name: "gateway", Port: 8443 }));
    await flush();
    cache.set("proxy-defaults", "global", proxyDefaults({ config: { envoy_dogstatsd_url: "udp://127.0.0.1:9125" } }));
    expect(updates.at(-1)![1].Proxy.Config).toEqual({ envoy_dogstatsd_url: "udp://127.0.0.1:9125" });
    cache.set("service-defaults", "gateway", serviceDefaults("gateway", { protocol: "tcp" }));
    expect(updates.at(-1)![1].Proxy.Config).toEqual({ envoy_dogstatsd_url: "udp://127.0.0.1:9125", protocol: "tcp" });
  });

  test("fetch reads every entry through the cache and seeds track; a failed read names the service", async () => {
    const { cache, manager } = managerKit();
    cache.set("proxy-defaults", "global", proxyDefaults({ expose: { Checks: true } }));
    const seed = await manager.fetch([service({ Name: "web", Port: 80 }), webProxy()]);
    expect(cache.gets.sort()).toEqual(["proxy-defaults/global", "service-defaults/db", "service-defaults/web"]);
    expect(manager.track(webProxy(), seed).Proxy.Expose).toEqual({ Checks: true });

    cache.failGets = "No known Consul servers in dc1";
    await expect(manager.fetch([webProxy()])).rejects.toThrow('could not retrieve initial service_defaults config for service "web-proxy": No known Consul servers in dc1');
  });

  test("a watch error is logged and the service keeps its config; close stops everything", async () => {
    const { cache, manager, updates } = managerKit();
    manager.track(webProxy());
    await flush();
    manager.close();
    expect(cache.watching()).toEqual([]);
    cache.set("proxy-defaults", "global", proxyDefaults({ expose: { Checks: true } }));
    expect(updates).toEqual([]);
    expect(manager.track(webProxy())).toEqual(webProxy());
    expect(cache.watching()).toEqual([]);
  });
});

describe("RegistrationOrder", () => {
  test("a waiting registration goes ahead unless the service changed after it was asked for", () => {
    const order = new RegistrationOrder();
    const a = order.begin(["web", "web-sidecar-proxy"]);
    expect(order.end(a)).toBe(true);

    const b = order.begin(["web"]);
    order.touch("web");
    expect(order.end(b)).toBe(false);

    // Two waiting registrations of one service: only the later one goes ahead, whichever ends first.
    const c = order.begin(["web"]);
    const d = order.begin(["web"]);
    expect(order.end(d)).toBe(true);
    expect(order.end(c)).toBe(false);
    // Nothing waits any more: a touch is forgotten.
    order.touch("web");
    expect(order.end(order.begin(["web"]))).toBe(true);
  });
});
