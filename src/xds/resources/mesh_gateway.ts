/**
 * Mesh gateway xDS resources as pure functions of a MeshGatewaySnapshot (Consul 1.8 agent/xds
 * listenersFromSnapshotGateway / makeMeshGatewayListener, v3 shapes; clusters and endpoints in
 * ./mesh_gateway_clusters.ts and ./mesh_gateway_endpoints.ts). The gateway never terminates TLS: it reads
 * the SNI with tls_inspector and routes on it. A gateway registered with `-expose-servers` (Meta
 * `consul-wan-federation` = "1") also routes server traffic for WAN federation by server name. Every
 * list is sorted by name (a listener's filter chains keep Consul's order); equal snapshots give equal
 * messages.
 */
import { create } from "@bufbuild/protobuf";
import { ListenerSchema, type Listener } from "../../gen/envoy/config/listener/v3/listener_pb.ts";
import { FilterChainSchema, FilterSchema, type Filter } from "../../gen/envoy/config/listener/v3/listener_components_pb.ts";
import { TlsInspectorSchema } from "../../gen/envoy/extensions/filters/listener/tls_inspector/v3/tls_inspector_pb.ts";
import { SniClusterSchema } from "../../gen/envoy/extensions/filters/network/sni_cluster/v3/sni_cluster_pb.ts";
import type { ServiceAddress } from "../../model/index.ts";
import type { MeshGatewaySnapshot } from "../../proxycfg/index.ts";
import { byName, pack, socketAddress } from "./common.ts";
import { tcpProxyFilter } from "./http_filter.ts";
import { meshGatewayClusters } from "./mesh_gateway_clusters.ts";
import { parseGatewayConfig } from "./mesh_gateway_config.ts";
import { meshGatewayEndpoints } from "./mesh_gateway_endpoints.ts";
import { datacenterSni, remoteDatacenters, routesToServers, serverName } from "./mesh_gateway_names.ts";
import type { Cluster } from "../../gen/envoy/config/cluster/v3/cluster_pb.ts";
import type { ClusterLoadAssignment } from "../../gen/envoy/config/endpoint/v3/endpoint_pb.ts";
import type { RouteConfiguration } from "../../gen/envoy/config/route/v3/route_pb.ts";

export { meshGatewayClusters, meshGatewayEndpoints };

/** The resource lists of a mesh gateway; `routes` is always empty (it is TCP only), kept for `toResourceMap`. */
export interface MeshGatewayResources {
  readonly listeners: readonly Listener[];
  readonly clusters: readonly Cluster[];
  readonly endpoints: readonly ClusterLoadAssignment[];
  readonly routes: readonly RouteConfiguration[];
}

/** Every resource of a mesh gateway. Throws ResourceGenerationError on a resolver subset filter that does not compile. */
export function meshGatewayResources(snap: MeshGatewaySnapshot): MeshGatewayResources {
  return { listeners: meshGatewayListeners(snap), clusters: meshGatewayClusters(snap), endpoints: meshGatewayEndpoints(snap), routes: [] };
}

/** A bind address with the name its listener carries. */
export interface NamedAddress extends ServiceAddress {
  readonly name: string;
}

/**
 * The bind addresses, first one per address:port winning: `default` (the registration's address, 0.0.0.0
 * when empty, and port) unless `envoy_gateway_no_default_bind`; the tagged addresses (`lan`, `wan`) with
 * `envoy_gateway_bind_tagged_addresses`; then `envoy_gateway_bind_addresses`. Map entries are taken in
 * sorted order (Go's map order is random; the outcome only differs for duplicate addresses).
 */
export function gatewayBindAddresses(snap: MeshGatewaySnapshot): NamedAddress[] {
  const cfg = parseGatewayConfig(snap.Proxy.Config).config;
  const out: NamedAddress[] = [];
  const add = (name: string, a: ServiceAddress) => {
    if (!out.some((o) => o.Address === a.Address && o.Port === a.Port)) out.push({ name, Address: a.Address, Port: a.Port });
  };
  if (!cfg.noDefaultBind) add("default", { Address: snap.Address || "0.0.0.0", Port: snap.Port });
  if (cfg.bindTaggedAddresses) for (const name of Object.keys(snap.TaggedAddresses).sort()) add(name, snap.TaggedAddresses[name]!);
  for (const name of Object.keys(cfg.bindAddresses).sort()) add(name, cfg.bindAddresses[name]!);
  return out;
}

/** One listener per bind address, sorted by name. */
export function meshGatewayListeners(snap: MeshGatewaySnapshot): Listener[] {
  return byName(gatewayBindAddresses(snap).map((a) => meshGatewayListener(snap, a.name, a.Address, a.Port)), (l) => l.name);
}

/**
 * `<name>:<addr>:<port>` with tls_inspector, then (Consul 1.8 makeMeshGatewayListener, in this order):
 * one filter chain per remote datacenter matching `*.<dc>.internal.<td>` straight to that datacenter's
 * cluster; for a WAN federation gateway, one per remote datacenter matching `*.server.<dc>.<domain>`
 * (any server there, reached through its gateways) and one per local server matching its exact name
 * `<node>.server.<localdc>.<domain>` (in the server list's order); last the catch-all chain (no match)
 * whose sni_cluster filter names the cluster after the SNI (local services and their subsets, and
 * `server.<localdc>.<domain>`, any local server).
 */
function meshGatewayListener(snap: MeshGatewaySnapshot, name: string, address: string, port: number): Listener {
  const td = snap.Roots.TrustDomain;
  const remote = remoteDatacenters(snap);
  const chain = (match: string, filterName: string, cluster: string, prefix: string) =>
    create(FilterChainSchema, { filterChainMatch: { serverNames: [match] }, filters: [tcpProxyFilter(filterName, cluster, prefix)] });
  const chains = remote.map((dc) => chain(`*.${datacenterSni(dc, td)}`, `${name}_${dc}`, datacenterSni(dc, td), "mesh_gateway_remote_"));
  if (routesToServers(snap)) {
    for (const dc of remote) chains.push(chain(`*.${serverName(snap, dc)}`, `${name}_${dc}`, serverName(snap, dc), "mesh_gateway_remote_"));
    for (const srv of snap.MeshGateway.ConsulServers) {
      const cluster = serverName(snap, snap.Datacenter, srv.Node.Node);
      chains.push(chain(cluster, `${name}_${snap.Datacenter}`, cluster, "mesh_gateway_local_server_"));
    }
  }
  // The cluster name is left empty: the sni_cluster filter fills it in from the SNI.
  chains.push(create(FilterChainSchema, { filters: [sniClusterFilter(), tcpProxyFilter(name, "", "mesh_gateway_local_")] }));
  return create(ListenerSchema, {
    name: `${name}:${address}:${port}`,
    address: socketAddress(address, port),
    listenerFilters: [{ name: "envoy.filters.listener.tls_inspector", configType: { case: "typedConfig", value: pack(TlsInspectorSchema, {}) } }],
    filterChains: chains,
  });
}

function sniClusterFilter(): Filter {
  return create(FilterSchema, { name: "envoy.filters.network.sni_cluster", configType: { case: "typedConfig", value: pack(SniClusterSchema, {}) } });
}
