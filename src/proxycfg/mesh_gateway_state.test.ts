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

function driver(reg = REG) {
  const m = new MeshGatewayState({ datacenter: "dc1" }, reg);
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
    expect(empty.MeshGateway).toEqual({ WatchedServices: ["db", "web"], ServiceGroups: {}, ServiceResolvers: {}, GatewayGroups: {}, FedStateGateways: {} });
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
