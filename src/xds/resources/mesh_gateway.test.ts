/**
 * Mesh gateway resources: goldens per scenario (testdata/mesh_gateway/, `UPDATE_GOLDEN=1` rewrites them),
 * strict decoding against Envoy's protos with their validate rules, determinism, and the properties the
 * gateway depends on spelled out.
 */
import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import type { DescMessage, Message } from "@bufbuild/protobuf";
import { anyPack, anyUnpack } from "@bufbuild/protobuf/wkt";
import { Cluster_DiscoveryType, ClusterSchema } from "../../gen/envoy/config/cluster/v3/cluster_pb.ts";
import { HealthStatus } from "../../gen/envoy/config/core/v3/health_check_pb.ts";
import { ClusterLoadAssignmentSchema, type ClusterLoadAssignment } from "../../gen/envoy/config/endpoint/v3/endpoint_pb.ts";
import { ListenerSchema } from "../../gen/envoy/config/listener/v3/listener_pb.ts";
import { TcpProxySchema } from "../../gen/envoy/extensions/filters/network/tcp_proxy/v3/tcp_proxy_pb.ts";
import { meshGatewayResources, ResourceGenerationError } from "./index.ts";
import { consulServers, MESH_GATEWAY_SCENARIOS, meshGatewaySnapshot, resolver, WAN_FEDERATION_META } from "./mesh_gateway_kit.test.ts";
import { TRUST_DOMAIN } from "./sidecar_kit.test.ts";
import { expectGolden, noStaleGoldens } from "./golden_kit.test.ts";

const dir = join(import.meta.dirname ?? ".", "testdata", "mesh_gateway");

function render(name: string) {
  const res = meshGatewayResources(MESH_GATEWAY_SCENARIOS[name]!());
  expect(res.routes).toEqual([]);
  const wrap = (schema: DescMessage, items: readonly Message[]) => items.map((m) => anyPack(schema, m as never));
  return { listeners: wrap(ListenerSchema, res.listeners), clusters: wrap(ClusterSchema, res.clusters), endpoints: wrap(ClusterLoadAssignmentSchema, res.endpoints) };
}

describe("mesh gateway resource goldens", () => {
  for (const name of Object.keys(MESH_GATEWAY_SCENARIOS).sort()) {
    test(name, () => void expectGolden(dir, name, () => render(name)));
  }

  noStaleGoldens(dir, Object.keys(MESH_GATEWAY_SCENARIOS));
});

const addresses = (cla: ClusterLoadAssignment) =>
  cla.endpoints.flatMap((b) => b.lbEndpoints.map((e) => {
    const a = e.hostIdentifier.case === "endpoint" ? e.hostIdentifier.value.address?.address : undefined;
    return [a?.case === "socketAddress" ? `${a.value.address}:${a.value.portSpecifier.value}` : "", e.healthStatus];
  }));

describe("mesh gateway resources", () => {
  test("remote datacenter chains first, matching *.<dc>.internal.<td> to the datacenter cluster; sni_cluster catch-all last", () => {
    const [l] = meshGatewayResources(MESH_GATEWAY_SCENARIOS["mesh-gateway-hostname-gateways"]!()).listeners;
    expect(l!.name).toBe("default:10.10.0.1:8443");
    expect(l!.listenerFilters.map((f) => f.name)).toEqual(["envoy.filters.listener.tls_inspector"]);
    expect(l!.filterChains.map((c) => c.filterChainMatch?.serverNames ?? [])).toEqual([[`*.dc2.internal.${TRUST_DOMAIN}`], [`*.dc3.internal.${TRUST_DOMAIN}`], []]);
    const proxies = l!.filterChains.map((c) => {
      const t = c.filters.at(-1)!.configType;
      const p = anyUnpack(t.case === "typedConfig" ? t.value : (undefined as never), TcpProxySchema)!;
      return [p.statPrefix, p.clusterSpecifier.value];
    });
    expect(proxies).toEqual([
      ["mesh_gateway_remote_default_dc2_tcp", `dc2.internal.${TRUST_DOMAIN}`],
      ["mesh_gateway_remote_default_dc3_tcp", `dc3.internal.${TRUST_DOMAIN}`],
      ["mesh_gateway_local_default_tcp", ""],
    ]);
    expect(l!.filterChains.at(-1)!.filters.map((f) => f.name)).toEqual(["envoy.filters.network.sni_cluster", "envoy.filters.network.tcp_proxy"]);
    expect(l!.filterChains.every((c) => c.transportSocket === undefined)).toBe(true);
  });

  test("listeners: default, tagged addresses when asked (the LAN one deduplicated), custom binds without default", () => {
    const names = (s: string) => meshGatewayResources(MESH_GATEWAY_SCENARIOS[s]!()).listeners.map((l) => l.name);
    expect(names("mesh-gateway")).toEqual(["default:10.10.0.1:8443"]);
    expect(names("mesh-gateway-tagged-addresses")).toEqual(["default:10.10.0.1:8443", "wan:198.18.0.1:443"]);
    expect(names("mesh-gateway-custom-addresses")).toEqual(["lan:10.10.0.9:8443", "wan:198.17.2.3:8080"]);
    const anyAddr = meshGatewayResources({ ...meshGatewaySnapshot(), Address: "" }).listeners.map((l) => l.name);
    expect(anyAddr).toEqual(["default:0.0.0.0:8443"]);
  });

  test("clusters: per remote dc and per local service and subset, no TLS, outlier detection, timeouts", () => {
    const res = meshGatewayResources(MESH_GATEWAY_SCENARIOS["mesh-gateway-service-timeouts"]!());
    const td = TRUST_DOMAIN;
    expect(res.clusters.map((c) => [c.name, Number(c.connectTimeout!.seconds) * 1000 + c.connectTimeout!.nanos / 1e6])).toEqual([
      [`bar.default.dc1.internal.${td}`, 10000],
      [`dc2.internal.${td}`, 2500],
      [`foo.default.dc1.internal.${td}`, 2500],
      [`v1.bar.default.dc1.internal.${td}`, 10000],
      [`v2.bar.default.dc1.internal.${td}`, 10000],
    ]);
    for (const c of res.clusters) {
      expect(c.transportSocket).toBeUndefined();
      expect(c.outlierDetection).toBeDefined();
      expect(c.clusterDiscoveryType).toEqual({ case: "type", value: Cluster_DiscoveryType.EDS });
      expect(c.lbPolicy).toBe(0); // ROUND_ROBIN: never hash-based on gateways
    }
    // Resolvers of services without instances add nothing.
    const extra = meshGatewayResources(MESH_GATEWAY_SCENARIOS["mesh-gateway-ignore-extra-resolvers"]!());
    expect(extra.clusters.some((c) => c.name.includes("baz"))).toBe(false);
    expect(extra.endpoints.some((e) => e.clusterName.includes("baz"))).toBe(false);
  });

  test("host name gateways: a DNS cluster with the first healthy host inline, and no EDS assignment", () => {
    const res = meshGatewayResources(MESH_GATEWAY_SCENARIOS["mesh-gateway-hostname-gateways"]!());
    const dc3 = res.clusters.find((c) => c.name === `dc3.internal.${TRUST_DOMAIN}`)!;
    expect(dc3.clusterDiscoveryType).toEqual({ case: "type", value: Cluster_DiscoveryType.LOGICAL_DNS });
    expect(addresses(dc3.loadAssignment!)).toEqual([["gw2.dc3.example.com:443", HealthStatus.HEALTHY]]);
    expect(res.endpoints.map((e) => e.clusterName)).not.toContain(`dc3.internal.${TRUST_DOMAIN}`);
    const strict = meshGatewayResources(MESH_GATEWAY_SCENARIOS["mesh-gateway-hostname-gateways-strict-dns"]!()).clusters.find((c) => c.name.startsWith("dc3."))!;
    expect(strict.clusterDiscoveryType).toEqual({ case: "type", value: Cluster_DiscoveryType.STRICT_DNS });
    // None healthy: the last unhealthy one.
    const down = meshGatewaySnapshot({ GatewayGroups: { dc3: MESH_GATEWAY_SCENARIOS["mesh-gateway-hostname-gateways"]!().MeshGateway.GatewayGroups["dc3"]!.slice(0, 1) } });
    const c = meshGatewayResources(down).clusters.find((x) => x.name.startsWith("dc3."))!;
    expect(addresses(c.loadAssignment!)).toEqual([["gw1.dc3.example.com:443", HealthStatus.UNHEALTHY]]);
  });

  test("endpoints: remote gateways at WAN addresses, subsets filtered with OnlyPassing, DefaultSubset for the unnamed cluster", () => {
    const td = TRUST_DOMAIN;
    const plain = meshGatewayResources(MESH_GATEWAY_SCENARIOS["mesh-gateway"]!()).endpoints;
    const dc2 = plain.find((e) => e.clusterName === `dc2.internal.${td}`)!;
    expect(addresses(dc2)).toEqual([["198.18.2.1:443", HealthStatus.HEALTHY], ["198.18.2.2:443", HealthStatus.HEALTHY]]);
    expect(addresses(plain.find((e) => e.clusterName === `foo.default.dc1.internal.${td}`)!)).toEqual([["10.10.1.1:8080", HealthStatus.HEALTHY], ["10.10.1.2:8080", HealthStatus.HEALTHY]]);

    const subsets = meshGatewayResources(MESH_GATEWAY_SCENARIOS["mesh-gateway-service-subsets"]!()).endpoints;
    const by = (n: string) => addresses(subsets.find((e) => e.clusterName === `${n}.dc1.internal.${td}`)!);
    expect(by("v1.bar.default")).toEqual([["10.10.2.1:8080", HealthStatus.HEALTHY]]);
    expect(by("v2.bar.default")).toEqual([["10.10.2.2:8080", HealthStatus.UNHEALTHY]]); // warning + OnlyPassing
    expect(by("bar.default")).toEqual([["10.10.2.1:8080", HealthStatus.HEALTHY], ["10.10.2.2:8080", HealthStatus.HEALTHY]]);

    const def = meshGatewayResources(MESH_GATEWAY_SCENARIOS["mesh-gateway-default-service-subset"]!()).endpoints;
    expect(addresses(def.find((e) => e.clusterName === `bar.default.dc1.internal.${td}`)!)).toEqual([["10.10.2.2:8080", HealthStatus.HEALTHY]]);
  });

  test("a gateway known from catalog and federation states uses the catalog's (no fresher state); the local dc is never a remote one", () => {
    const res = meshGatewayResources(MESH_GATEWAY_SCENARIOS["mesh-gateway-using-federation-states"]!());
    expect(res.clusters.map((c) => c.name).filter((n) => /^dc\d\./.test(n))).toEqual([`dc2.internal.${TRUST_DOMAIN}`, `dc4.internal.${TRUST_DOMAIN}`]);
    expect(addresses(res.endpoints.find((e) => e.clusterName.startsWith("dc2."))!).map((a) => a[0])).toEqual(["198.18.2.1:443", "198.18.2.2:443"]);
  });

  test("the fresher listing wins: a federation state newer than a stale remote catalog gives the new address (#10132, PR #11522)", () => {
    const base = MESH_GATEWAY_SCENARIOS["mesh-gateway-using-federation-states"]!();
    const mg = base.MeshGateway;
    const catalog = mg.GatewayGroups["dc2"]!;
    const maxCatalog = Math.max(...catalog.map((g) => g.Service.ModifyIndex));
    const moved = catalog.map((g, i) => ({
      ...g,
      Service: { ...g.Service, ModifyIndex: maxCatalog + 1 + i, TaggedAddresses: { ...g.Service.TaggedAddresses, wan: { Address: `198.18.20.${i + 1}`, Port: 443 } } },
    }));
    const snap = { ...base, MeshGateway: { ...mg, FedStateGateways: { ...mg.FedStateGateways, dc2: moved } } };
    const wan = (r: ReturnType<typeof meshGatewayResources>) => addresses(r.endpoints.find((e) => e.clusterName.startsWith("dc2."))!).map((a) => a[0]);
    expect(wan(meshGatewayResources(snap))).toEqual(["198.18.20.1:443", "198.18.20.2:443"]);
    // Equally fresh (a tie): the catalog's listing.
    const tie = moved.map((g, i) => ({ ...g, Service: { ...g.Service, ModifyIndex: catalog[i]!.Service.ModifyIndex } }));
    const tied = { ...base, MeshGateway: { ...mg, FedStateGateways: { ...mg.FedStateGateways, dc2: tie } } };
    expect(wan(meshGatewayResources(tied))).toEqual(["198.18.2.1:443", "198.18.2.2:443"]);
  });

  test("a subset filter that does not compile fails generation", () => {
    const snap = meshGatewaySnapshot({ ServiceResolvers: { foo: resolver("foo", { Subsets: { bad: { Filter: "Service.Nope == 1" } } }) } });
    expect(() => meshGatewayResources(snap)).toThrow(ResourceGenerationError);
  });

  test("without -expose-servers nothing routes to servers, even with servers and federation states in the snapshot", () => {
    const snap = MESH_GATEWAY_SCENARIOS["mesh-gateway-using-federation-control-plane"]!();
    const plain = meshGatewayResources({ ...snap, ServiceMeta: { "consul-wan-federation": "0" } });
    const names = [...plain.clusters.map((c) => c.name), ...plain.endpoints.map((e) => e.clusterName)];
    expect(names.filter((n) => n.includes(".server.") || n.startsWith("server."))).toEqual([]);
    expect(plain).toEqual(meshGatewayResources(MESH_GATEWAY_SCENARIOS["mesh-gateway-using-federation-states"]!()));
  });
});

describe("mesh gateway resources for WAN federation (-expose-servers)", () => {
  const td = TRUST_DOMAIN;
  const tcpProxies = (l: { filterChains: { filterChainMatch?: { serverNames: string[] }; filters: { configType: { case: string | undefined; value?: unknown } }[] }[] }) =>
    l.filterChains.map((c) => {
      const t = c.filters.at(-1)!.configType;
      const p = anyUnpack(t.value as never, TcpProxySchema)!;
      return [c.filterChainMatch?.serverNames ?? [], p.clusterSpecifier.value, p.statPrefix];
    });

  test("filter chains in Consul's order: datacenters, then remote servers by wildcard, then each local server by name, catch-all last", () => {
    const [l] = meshGatewayResources(MESH_GATEWAY_SCENARIOS["mesh-gateway-using-federation-control-plane"]!()).listeners;
    expect(tcpProxies(l!)).toEqual([
      [[`*.dc2.internal.${td}`], `dc2.internal.${td}`, "mesh_gateway_remote_default_dc2_tcp"],
      [[`*.dc4.internal.${td}`], `dc4.internal.${td}`, "mesh_gateway_remote_default_dc4_tcp"],
      [["*.server.dc2.consul"], "server.dc2.consul", "mesh_gateway_remote_default_dc2_tcp"],
      [["*.server.dc4.consul"], "server.dc4.consul", "mesh_gateway_remote_default_dc4_tcp"],
      [["dc1-srv1.server.dc1.consul"], "dc1-srv1.server.dc1.consul", "mesh_gateway_local_server_default_dc1_tcp"],
      [["dc1-srv2.server.dc1.consul"], "dc1-srv2.server.dc1.consul", "mesh_gateway_local_server_default_dc1_tcp"],
      [[], "", "mesh_gateway_local_default_tcp"],
    ]);
  });

  test("clusters: server.<dc> for each remote datacenter and the local one, one per local server; all EDS", () => {
    const res = meshGatewayResources(MESH_GATEWAY_SCENARIOS["mesh-gateway-using-federation-control-plane"]!());
    const servers = res.clusters.filter((c) => c.name.includes("server."));
    expect(servers.map((c) => c.name)).toEqual(["dc1-srv1.server.dc1.consul", "dc1-srv2.server.dc1.consul", "server.dc1.consul", "server.dc2.consul", "server.dc4.consul"]);
    for (const c of servers) {
      expect(c.clusterDiscoveryType).toEqual({ case: "type", value: Cluster_DiscoveryType.EDS });
      expect(Number(c.connectTimeout!.seconds)).toBe(5);
    }
    // The local catch-all exists even before the local datacenter's own federation state lists gateways.
    const early = meshGatewayResources(meshGatewaySnapshot({ ConsulServers: consulServers("dc1", 1) }, {}, { ServiceMeta: WAN_FEDERATION_META }));
    expect(early.clusters.map((c) => c.name).filter((n) => n.startsWith("server."))).toEqual(["server.dc1.consul", "server.dc2.consul"]);
  });

  test("endpoints: remote servers through that datacenter's gateways (catalog first), local servers at LAN address and server port, UNKNOWN health", () => {
    const res = meshGatewayResources(MESH_GATEWAY_SCENARIOS["mesh-gateway-using-federation-control-plane"]!()).endpoints;
    const by = (n: string) => addresses(res.find((e) => e.clusterName === n)!);
    expect(by("server.dc2.consul")).toEqual(by(`dc2.internal.${td}`));
    expect(by("server.dc2.consul").map((a) => a[0])).toEqual(["198.18.2.1:443", "198.18.2.2:443"]); // GatewayGroups wins over federation states
    expect(by("server.dc4.consul")).toEqual([["198.18.9.1:443", HealthStatus.HEALTHY], ["198.18.9.2:443", HealthStatus.HEALTHY]]);
    expect(by("dc1-srv1.server.dc1.consul")).toEqual([["10.10.0.11:8300", HealthStatus.UNKNOWN]]);
    expect(by("dc1-srv2.server.dc1.consul")).toEqual([["10.10.0.12:8300", HealthStatus.UNKNOWN]]); // its critical check does not matter
    expect(by("server.dc1.consul")).toEqual([["10.10.0.11:8300", HealthStatus.UNKNOWN], ["10.10.0.12:8300", HealthStatus.UNKNOWN]]);
    expect(res.find((e) => e.clusterName === "server.dc1.consul")!.endpoints[0]!.lbEndpoints[0]!.loadBalancingWeight).toBeUndefined();
    // A server's own service address and port win over the node's.
    const [srv] = consulServers("dc1", 1);
    const custom = { ...srv!, Service: { ...srv!.Service, Address: "10.99.0.1", Port: 18300 } };
    const snap = meshGatewaySnapshot({ ConsulServers: [custom] }, {}, { ServiceMeta: WAN_FEDERATION_META });
    expect(addresses(meshGatewayResources(snap).endpoints.find((e) => e.clusterName === "server.dc1.consul")!)).toEqual([["10.99.0.1:18300", HealthStatus.UNKNOWN]]);
  });

  test("gateways addressed by host name: server.<dc> is a DNS cluster too, with no EDS assignment; the domain's trailing dot is dropped", () => {
    const res = meshGatewayResources(MESH_GATEWAY_SCENARIOS["mesh-gateway-wan-federation-hostname-gateways"]!());
    const dc3 = res.clusters.find((c) => c.name === "server.dc3.example")!;
    expect(dc3.clusterDiscoveryType).toEqual({ case: "type", value: Cluster_DiscoveryType.LOGICAL_DNS });
    expect(addresses(dc3.loadAssignment!)).toEqual([["gw2.dc3.example.com:443", HealthStatus.HEALTHY]]);
    expect(res.endpoints.map((e) => e.clusterName)).not.toContain("server.dc3.example");
    expect(res.endpoints.map((e) => e.clusterName)).toContain("server.dc2.example");
    expect(res.listeners.map((l) => l.name)).toEqual(["default:10.10.0.1:8443", "wan:198.18.0.1:443"]);
    for (const l of res.listeners) expect(l.filterChains.some((c) => c.filterChainMatch?.serverNames[0] === "dc1-srv1.server.dc1.example")).toBe(true);
  });
});
