/**
 * The mesh gateway state machine as a pure function of typed events: its watches follow the service list
 * and the datacenter list, its snapshot is valid once the roots, the service list and the central config
 * are in, and it carries only services with instances and other datacenters with gateways.
 */
import { describe, expect, test } from "bun:test";
import { MeshGatewayState } from "./mesh_gateway_state.ts";
import { meshGatewayWatchIds as ids, type MeshGatewayEvent, type MeshGatewayRegistration, type MeshGatewayWatchRequest } from "./mesh_gateway_watches.ts";
import { entry, node, ROOTS, watchTracker } from "./sidecar_state_kit.test.ts";

const REG: MeshGatewayRegistration = {
  ProxyID: "mesh-gateway", Service: "mesh-gateway", Address: "10.0.0.5", Port: 8443, Meta: {},
  TaggedAddresses: { lan: { Address: "10.0.0.5", Port: 8443 }, wan: { Address: "198.18.0.5", Port: 443 } },
  Proxy: { Config: { connect_timeout_ms: 2000 }, MeshGateway: {}, Expose: {} },
};

function driver(reg = REG, domain?: string) {
  const m = new MeshGatewayState({ datacenter: "dc1", ...(domain !== undefined ? { domain } : {}) }, reg);
  const { held, apply, ids: heldIds } = watchTracker<MeshGatewayWatchRequest>();
  const send = (ev: MeshGatewayEvent) => apply(m.handle(ev));
  /** Roots, no central config, the service list and the datacenters. */
  const basics = (services: readonly string[], dcs: readonly string[]) => {
    send({ kind: "roots", watchId: ids.roots, value: ROOTS });
    send({ kind: "config-entry", watchId: ids.configEntry("proxy-defaults", "global"), value: null });
    send({ kind: "config-entry", watchId: ids.configEntry("service-defaults", "mesh-gateway"), value: null });
    send({ kind: "datacenters", watchId: ids.datacenters, value: dcs });
    return send({ kind: "service-list", watchId: ids.serviceList, value: services });
  };
  return { machine: m, held, start: () => apply(m.start()), send, basics, ids: heldIds };
}

describe("mesh gateway state machine", () => {
  test("starts with roots, central config, the service list, resolvers and datacenters; not valid yet", () => {
    const d = driver();
    expect(d.start()).toEqual([
      "watch config-entry:proxy-defaults:global",
      "watch config-entry:service-defaults:mesh-gateway",
      "watch datacenters",
      "watch roots",
      "watch service-list",
      "watch service-resolvers",
    ]);
    expect(d.machine.snapshot()).toBeUndefined();
  });

  test("watches each listed service's Connect instances and each other datacenter's gateways", () => {
    const d = driver();
    d.start();
    expect(d.send({ kind: "datacenters", watchId: ids.datacenters, value: ["dc1", "dc2", "dc3"] })).toEqual(["watch mesh-gateway:dc2", "watch mesh-gateway:dc3"]);
    expect(d.send({ kind: "service-list", watchId: ids.serviceList, value: ["consul", "db", "web"] })).toEqual([
      "watch connect-service:consul", "watch connect-service:db", "watch connect-service:web",
    ]);
    expect(d.held.get(ids.connectService("db"))).toEqual({ kind: "connect-service", service: "db" });
    expect(d.held.get(ids.meshGateway("dc2"))).toEqual({ kind: "mesh-gateways", datacenter: "dc2" });
  });

  test("valid once roots, the service list and central config are in; groups only what has instances", () => {
    const d = driver();
    d.start();
    d.basics(["db", "web"], ["dc1", "dc2", "dc3"]);
    const empty = d.machine.snapshot()!;
    expect(empty.Kind).toBe("mesh-gateway");
    expect(empty.MeshGateway).toEqual({ WatchedServices: ["db", "web"], ServiceGroups: {}, ServiceResolvers: {}, GatewayGroups: {}, FedStateGateways: {}, ConsulServers: [] });
    expect(empty.Domain).toBe("consul");
    d.send({ kind: "connect-service", watchId: ids.connectService("db"), value: [node("n1", "db")] });
    d.send({ kind: "connect-service", watchId: ids.connectService("web"), value: [] });
    d.send({ kind: "mesh-gateways", watchId: ids.meshGateway("dc2"), value: [node("gw2", "mesh-gateway", "dc2")] });
    d.send({ kind: "mesh-gateways", watchId: ids.meshGateway("dc3"), value: [] });
    d.send({
      kind: "service-resolvers", watchId: ids.serviceResolvers,
      value: [entry({ Kind: "service-resolver", Name: "db", ConnectTimeout: "3s" })],
    });
    const snap = d.machine.snapshot()!;
    expect(Object.keys(snap.MeshGateway.ServiceGroups)).toEqual(["db"]);
    expect(Object.keys(snap.MeshGateway.GatewayGroups)).toEqual(["dc2"]);
    expect(Object.keys(snap.MeshGateway.ServiceResolvers)).toEqual(["db"]);
    expect(snap.Roots).toBe(ROOTS);
    expect(snap.Proxy.Config).toEqual({ connect_timeout_ms: 2000 });
    expect(d.machine.snapshot()).toBe(snap);
  });

  test("a service or datacenter that leaves its list loses its watch and its group", () => {
    const d = driver();
    d.start();
    d.basics(["db", "web"], ["dc1", "dc2"]);
    d.send({ kind: "connect-service", watchId: ids.connectService("db"), value: [node("n1", "db")] });
    d.send({ kind: "mesh-gateways", watchId: ids.meshGateway("dc2"), value: [node("gw2", "mesh-gateway", "dc2")] });
    expect(d.send({ kind: "service-list", watchId: ids.serviceList, value: ["web"] })).toEqual(["cancel connect-service:db"]);
    expect(d.send({ kind: "datacenters", watchId: ids.datacenters, value: ["dc1"] })).toEqual(["cancel mesh-gateway:dc2"]);
    const snap = d.machine.snapshot()!;
    expect(snap.MeshGateway.ServiceGroups).toEqual({});
    expect(snap.MeshGateway.GatewayGroups).toEqual({});
    // A late value of a cancelled watch changes nothing.
    expect(d.send({ kind: "connect-service", watchId: ids.connectService("db"), value: [node("n1", "db")] })).toEqual([]);
    expect(d.machine.snapshot()).toBe(snap);
  });

  test("proxy-defaults fill the gateway's Proxy.Config where the registration left it unset", () => {
    const d = driver();
    d.start();
    d.basics([], ["dc1"]);
    d.send({
      kind: "config-entry", watchId: ids.configEntry("proxy-defaults", "global"),
      value: entry({ Kind: "proxy-defaults", Name: "global", Config: { connect_timeout_ms: 9000, envoy_dns_discovery_type: "STRICT_DNS" } }),
    });
    expect(d.machine.snapshot()!.Proxy.Config).toEqual({ connect_timeout_ms: 2000, envoy_dns_discovery_type: "STRICT_DNS" });
  });

  test("a changed registration is taken; the same one changes nothing; close cancels everything", () => {
    const d = driver();
    d.start();
    d.basics(["db"], ["dc1"]);
    const before = d.machine.snapshot()!;
    expect(d.send({ kind: "registration", registration: REG })).toEqual([]);
    expect(d.machine.snapshot()).toBe(before);
    d.send({ kind: "registration", registration: { ...REG, Port: 9443 } });
    expect(d.machine.snapshot()!.Port).toBe(9443);
    const cancels = d.machine.close();
    expect(cancels.every((c) => c.op === "cancel")).toBe(true);
    expect(cancels).toHaveLength(7);
    expect(d.machine.snapshot()).toBeUndefined();
  });
});

describe("mesh gateway state machine with -expose-servers (Meta consul-wan-federation = 1)", () => {
  const WANFED: MeshGatewayRegistration = { ...REG, Meta: { "consul-wan-federation": "1" } };
  const server = (name: string, dc = "dc1", service = "consul") => {
    const n = node(name, service, dc);
    return { ...n, Service: { ...n.Service, Kind: undefined, ID: service, Service: service, Port: 8300, Proxy: { MeshGateway: {}, Expose: {} } } };
  };

  test("also watches the federation states' gateways and the local servers", () => {
    const d = driver(WANFED);
    expect(d.start()).toEqual([
      "watch config-entry:proxy-defaults:global",
      "watch config-entry:service-defaults:mesh-gateway",
      "watch consul-server-list",
      "watch datacenters",
      "watch federation-state-list-mesh-gateways",
      "watch roots",
      "watch service-list",
      "watch service-resolvers",
    ]);
    expect(d.held.get(ids.consulServers)).toEqual({ kind: "consul-servers" });
    expect(d.held.get(ids.federationGateways)).toEqual({ kind: "federation-gateways" });
  });

  test("valid only once at least one local server is known; carries the servers, the federation states' gateways and the domain", () => {
    const d = driver(WANFED, "example.");
    d.start();
    d.basics(["db"], ["dc1", "dc2"]);
    expect(d.machine.snapshot()).toBeUndefined();
    d.send({ kind: "consul-servers", watchId: ids.consulServers, value: [] });
    expect(d.machine.snapshot()).toBeUndefined();
    const fed = { dc1: [node("gw1", "mesh-gateway", "dc1")], dc4: [node("gw4", "mesh-gateway", "dc4")] };
    d.send({ kind: "federation-gateways", watchId: ids.federationGateways, value: fed });
    d.send({ kind: "consul-servers", watchId: ids.consulServers, value: [server("s1"), server("s2")] });
    const snap = d.machine.snapshot()!;
    expect(snap.MeshGateway.ConsulServers.map((s) => s.Node.Node)).toEqual(["s1", "s2"]);
    expect(snap.MeshGateway.FedStateGateways).toBe(fed);
    expect(snap.ServiceMeta).toEqual({ "consul-wan-federation": "1" });
    expect(snap.Domain).toBe("example"); // trailing dot trimmed, as tlsutil ServerSNI does
    // The federation states are not needed for validity.
    const e = driver(WANFED);
    e.start();
    e.basics([], ["dc1"]);
    e.send({ kind: "consul-servers", watchId: ids.consulServers, value: [server("s1")] });
    expect(e.machine.snapshot()!.MeshGateway.FedStateGateways).toEqual({});
  });

  test("a server list with another service or another datacenter's node is refused whole, as Consul does", () => {
    const d = driver(WANFED);
    d.start();
    d.basics([], ["dc1"]);
    d.send({ kind: "consul-servers", watchId: ids.consulServers, value: [server("s1")] });
    const before = d.machine.snapshot()!;
    expect(d.send({ kind: "consul-servers", watchId: ids.consulServers, value: [server("s1"), server("x", "dc2")] })).toEqual([]);
    expect(d.send({ kind: "consul-servers", watchId: ids.consulServers, value: [server("s1"), server("web", "dc1", "web")] })).toEqual([]);
    expect(d.machine.snapshot()).toBe(before);
  });

  test("without the meta the two watches are never started; dropping the meta cancels them and empties the fields", () => {
    const plain = driver();
    plain.start();
    plain.basics([], ["dc1"]);
    expect(plain.ids()).not.toContain(ids.consulServers);
    // An update for a watch it does not hold changes nothing.
    expect(plain.send({ kind: "consul-servers", watchId: ids.consulServers, value: [server("s1")] })).toEqual([]);
    expect(plain.machine.snapshot()!.MeshGateway.ConsulServers).toEqual([]);

    const d = driver(WANFED);
    d.start();
    d.basics([], ["dc1"]);
    d.send({ kind: "consul-servers", watchId: ids.consulServers, value: [server("s1")] });
    d.send({ kind: "federation-gateways", watchId: ids.federationGateways, value: { dc4: [node("gw4", "mesh-gateway", "dc4")] } });
    expect(d.send({ kind: "registration", registration: REG })).toEqual(["cancel consul-server-list", "cancel federation-state-list-mesh-gateways"]);
    const snap = d.machine.snapshot()!;
    expect(snap.MeshGateway.ConsulServers).toEqual([]);
    expect(snap.MeshGateway.FedStateGateways).toEqual({});
    // Turning it back on starts them again, and the snapshot waits for the servers.
    expect(d.send({ kind: "registration", registration: WANFED })).toEqual(["watch consul-server-list", "watch federation-state-list-mesh-gateways"]);
    expect(d.machine.snapshot()).toBeUndefined();
  });
});
