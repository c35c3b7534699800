/**
 * Test kit for the mesh gateway resources: the gateway registration (LAN 10.10.0.1:8443, WAN
 * 198.18.0.1:443 as in Consul's TestConfigSnapshotMeshGateway), local services foo and bar with two
 * instances each, dc2's gateways (./sidecar_kit.test.ts `gateways`), and the named scenarios the goldens
 * cover (named after Consul's agent/xds/testdata mesh-gateway*.golden where one matches).
 */
import type { CheckServiceNode, ServiceResolverConfigEntry } from "../../model/index.ts";
import type { MeshGatewaySnapshot, MeshGatewaySnapshotState } from "../../proxycfg/index.ts";
import { gateways, instance, TRUST_DOMAIN } from "./sidecar_kit.test.ts";

/** Two sidecars of `service` in dc1: versions 1 and 2, at `10.10.<net>.1` and `.2`. */
function services(service: string, net: number, statuses: readonly ("passing" | "warning" | "critical")[] = ["passing", "passing"]): CheckServiceNode[] {
  return [1, 2].map((i) =>
    instance({ node: `node-${service}-${i}`, address: `10.10.${net}.${i}`, service, status: statuses[i - 1] ?? "passing", meta: { version: String(i) } }),
  );
}

/** The servers of `dc` as the "consul" service lists them: `<dc>-srv<i>` at 10.<n>0.0.<10+i>, port 8300 (the node's address). */
export function consulServers(dc: string, count = 2): CheckServiceNode[] {
  const n = { dc1: 1, dc2: 2, dc3: 3 }[dc] ?? 9;
  return Array.from({ length: count }, (_, j) => {
    const node = `${dc}-srv${j + 1}`;
    return {
      Node: { ID: "", Node: node, Address: `10.${n}0.0.${11 + j}`, Datacenter: dc, TaggedAddresses: { wan: `198.18.${n}.${11 + j}` }, Meta: {}, CreateIndex: 1, ModifyIndex: 1 },
      Service: {
        ID: "consul", Service: "consul", Tags: [], Address: "", Meta: { raft_version: "3" }, Port: 8300, Weights: { Passing: 1, Warning: 1 },
        EnableTagOverride: false, Proxy: { MeshGateway: {}, Expose: {} }, Connect: {}, CreateIndex: 1, ModifyIndex: 1,
      },
      Checks: [{
        Node: node, CheckID: "serfHealth", Name: "Serf Health Status", Status: j === 0 ? "passing" : "critical", Notes: "", Output: "",
        ServiceID: "", ServiceName: "", ServiceTags: [], Type: "", Definition: {}, CreateIndex: 1, ModifyIndex: 1,
      }],
    } as CheckServiceNode;
  });
}

/** The gateway with `-expose-servers`: Meta consul-wan-federation = "1". */
export const WAN_FEDERATION_META = { "consul-wan-federation": "1" };

export function meshGatewaySnapshot(
  mg: Partial<MeshGatewaySnapshotState> = {},
  config: Record<string, unknown> = {},
  top: Partial<Pick<MeshGatewaySnapshot, "ServiceMeta" | "Domain">> = {},
): MeshGatewaySnapshot {
  return {
    Kind: "mesh-gateway",
    ProxyID: "mesh-gateway",
    Service: "mesh-gateway",
    Address: "10.10.0.1",
    Port: 8443,
    ServiceMeta: {},
    Domain: "consul",
    ...top,
    TaggedAddresses: { lan: { Address: "10.10.0.1", Port: 8443 }, wan: { Address: "198.18.0.1", Port: 443 } },
    Proxy: { Config: config, MeshGateway: {}, Expose: {} },
    Datacenter: "dc1",
    Roots: { ActiveRootID: "", TrustDomain: TRUST_DOMAIN, Roots: [] },
    MeshGateway: {
      WatchedServices: ["bar", "foo"],
      ServiceGroups: { foo: services("foo", 1), bar: services("bar", 2) },
      ServiceResolvers: {},
      GatewayGroups: { dc2: gateways("dc2") },
      FedStateGateways: {},
      ConsulServers: [],
      ...mg,
    },
  };
}

/** A service-resolver entry for `name`. */
export function resolver(name: string, extra: Partial<ServiceResolverConfigEntry>): ServiceResolverConfigEntry {
  return { Kind: "service-resolver", Name: name, CreateIndex: 1, ModifyIndex: 1, ...extra };
}

const VERSION_SUBSETS = {
  v1: { Filter: "Service.Meta.version == 1" },
  v2: { Filter: "Service.Meta.version == 2", OnlyPassing: true },
};

/** dc3's gateways addressed by host name: the first critical, the second healthy. */
function hostnameGateways(): CheckServiceNode[] {
  return [1, 2].map((i) =>
    instance({
      node: `dc3-gw${i}`, address: `10.30.2.${i}`, datacenter: "dc3", kind: "mesh-gateway", port: 8443,
      wan: { Address: `gw${i}.dc3.example.com`, Port: 443 }, status: i === 1 ? "critical" : "passing",
    }),
  );
}

/** Scenario name -> snapshot. */
export const MESH_GATEWAY_SCENARIOS: Readonly<Record<string, () => MeshGatewaySnapshot>> = {
  "mesh-gateway": () => meshGatewaySnapshot(),
  "mesh-gateway-no-services": () => meshGatewaySnapshot({ WatchedServices: [], ServiceGroups: {} }),
  "mesh-gateway-service-subsets": () =>
    meshGatewaySnapshot({
      ServiceGroups: { foo: services("foo", 1), bar: services("bar", 2, ["passing", "warning"]) },
      ServiceResolvers: { foo: resolver("foo", { Subsets: VERSION_SUBSETS }), bar: resolver("bar", { Subsets: VERSION_SUBSETS }) },
    }),
  // A resolver for a service without instances yields nothing (Consul PR #7294).
  "mesh-gateway-ignore-extra-resolvers": () =>
    meshGatewaySnapshot({
      ServiceResolvers: { bar: resolver("bar", { Subsets: VERSION_SUBSETS }), baz: resolver("baz", { Subsets: VERSION_SUBSETS }) },
    }),
  "mesh-gateway-default-service-subset": () =>
    meshGatewaySnapshot({ ServiceResolvers: { bar: resolver("bar", { DefaultSubset: "v2", Subsets: VERSION_SUBSETS }) } }),
  "mesh-gateway-service-timeouts": () =>
    meshGatewaySnapshot(
      { ServiceResolvers: { bar: resolver("bar", { ConnectTimeout: "10s", Subsets: VERSION_SUBSETS }) } },
      { connect_timeout_ms: "2500" },
    ),
  "mesh-gateway-tagged-addresses": () => meshGatewaySnapshot({}, { envoy_mesh_gateway_bind_tagged_addresses: true }),
  "mesh-gateway-custom-addresses": () =>
    meshGatewaySnapshot({}, {
      envoy_mesh_gateway_no_default_bind: true,
      envoy_mesh_gateway_bind_addresses: {
        wan: { address: "198.17.2.3", port: 8080 },
        lan: { address: "10.10.0.9", port: "8443" },
        "wan-copy": { address: "198.17.2.3", port: 8080 }, // same address as "wan": one listener only
      },
    }),
  "mesh-gateway-hostname-gateways": () => meshGatewaySnapshot({ GatewayGroups: { dc2: gateways("dc2"), dc3: hostnameGateways() } }),
  "mesh-gateway-hostname-gateways-strict-dns": () =>
    meshGatewaySnapshot({ GatewayGroups: { dc3: hostnameGateways() } }, { envoy_dns_discovery_type: "STRICT_DNS" }),
  // dc4 known only from federation states; the local datacenter's own entry is ignored.
  "mesh-gateway-using-federation-states": () =>
    meshGatewaySnapshot({ FedStateGateways: { dc1: gateways("dc1"), dc2: gateways("dc3"), dc4: gateways("dc4") } }),
  // `-expose-servers` (Consul's golden of this name): as above, plus server chains and clusters for dc2 and
  // dc4, and dc1's two servers (the second one's serfHealth critical: still routed, health UNKNOWN).
  "mesh-gateway-using-federation-control-plane": () =>
    meshGatewaySnapshot(
      { FedStateGateways: { dc1: gateways("dc1"), dc2: gateways("dc3"), dc4: gateways("dc4") }, ConsulServers: consulServers("dc1") },
      {},
      { ServiceMeta: WAN_FEDERATION_META },
    ),
  // `-expose-servers` with dc3's gateways addressed by host name (DNS clusters for dc3 and server.dc3),
  // tagged-address listeners, and a domain with a trailing dot ("example." names end in ".example").
  "mesh-gateway-wan-federation-hostname-gateways": () =>
    meshGatewaySnapshot(
      { GatewayGroups: { dc2: gateways("dc2"), dc3: hostnameGateways() }, ConsulServers: consulServers("dc1", 1) },
      { envoy_mesh_gateway_bind_tagged_addresses: true },
      { ServiceMeta: WAN_FEDERATION_META, Domain: "example." },
    ),
};
