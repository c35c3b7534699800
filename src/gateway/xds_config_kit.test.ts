/**
 * Test kit: Envoy resources for the configuration store, built with the generated schemas and packed
 * into Any the way the xDS client delivers them, plus small shortcuts for applying sets.
 */
import { create, type DescMessage, type MessageInitShape } from "@bufbuild/protobuf";
import { anyPack, type Any } from "@bufbuild/protobuf/wkt";
import { ClusterSchema, Cluster_DiscoveryType } from "../gen/envoy/config/cluster/v3/cluster_pb.ts";
import { ApiVersion } from "../gen/envoy/config/core/v3/config_source_pb.ts";
import { HealthStatus } from "../gen/envoy/config/core/v3/health_check_pb.ts";
import { ClusterLoadAssignmentSchema } from "../gen/envoy/config/endpoint/v3/endpoint_pb.ts";
import { ListenerSchema } from "../gen/envoy/config/listener/v3/listener_pb.ts";
import type { Filter, FilterChain, ListenerFilter } from "../gen/envoy/config/listener/v3/listener_components_pb.ts";
import { TlsInspectorSchema } from "../gen/envoy/extensions/filters/listener/tls_inspector/v3/tls_inspector_pb.ts";
import { SniClusterSchema } from "../gen/envoy/extensions/filters/network/sni_cluster/v3/sni_cluster_pb.ts";
import { TcpProxySchema } from "../gen/envoy/extensions/filters/network/tcp_proxy/v3/tcp_proxy_pb.ts";
import { GATEWAY_TYPE_URLS } from "./xds_sink.ts";
import type { GatewayConfigStore } from "./xds_config.ts";

/** Packs a message built from a loosely typed init (tests build partial and deliberately odd ones). */
export const pack = <D extends DescMessage>(schema: D, init: object): Any => anyPack(schema, create(schema, init as MessageInitShape<D>));
type Init<D extends DescMessage> = MessageInitShape<D>;
/** Fields to add to or replace in a resource's init. */
export type Override = Record<string, unknown>;

export const socketAddress = (address: string, port: number) => ({
  address: { case: "socketAddress" as const, value: { address, portSpecifier: { case: "portValue" as const, value: port } } },
});

export const tlsInspector = (): Init<typeof ListenerSchema>["listenerFilters"] & object => [
  { name: "envoy.filters.listener.tls_inspector", configType: { case: "typedConfig", value: pack(TlsInspectorSchema, {}) } } as ListenerFilter,
];

export const sniClusterFilter = (): Filter =>
  ({ name: "envoy.filters.network.sni_cluster", configType: { case: "typedConfig", value: pack(SniClusterSchema, {}) } }) as Filter;

export const tcpProxyFilter = (cluster: string, extra: Override = {}): Filter =>
  ({
    name: "envoy.filters.network.tcp_proxy",
    configType: { case: "typedConfig", value: pack(TcpProxySchema, { statPrefix: `tcp_${cluster || "sni"}`, clusterSpecifier: { case: "cluster", value: cluster }, ...extra }) },
  }) as Filter;

/** A filter chain: matching `serverNames` (none = catch-all), routing to `cluster` ("" = sni_cluster). */
export const chain = (serverNames: string[], cluster: string): Init<typeof ListenerSchema>["filterChains"] & object =>
  [
    {
      ...(serverNames.length ? { filterChainMatch: { serverNames } } : {}),
      filters: cluster === "" ? [sniClusterFilter(), tcpProxyFilter("")] : [tcpProxyFilter(cluster)],
    } as FilterChain,
  ];

/** A mesh-gateway-shaped listener; `override` replaces fields of the init. */
export function listener(name: string, port: number, override: Override = {}): Any {
  return pack(ListenerSchema, {
    name,
    address: socketAddress("127.0.0.1", port),
    listenerFilters: tlsInspector(),
    filterChains: [...chain(["*.dc2.internal.example.consul"], "dc2.internal.example.consul"), ...chain([], "")],
    ...override,
  });
}

/** An EDS-over-ADS cluster with Consul's `outlier_detection: {}`. */
export function edsCluster(name: string, override: Override = {}): Any {
  return pack(ClusterSchema, {
    name,
    clusterDiscoveryType: { case: "type", value: Cluster_DiscoveryType.EDS },
    edsClusterConfig: { edsConfig: { resourceApiVersion: ApiVersion.V3, configSourceSpecifier: { case: "ads", value: {} } } },
    connectTimeout: { seconds: 5n },
    outlierDetection: {},
    ...override,
  });
}

export interface EndpointSpec {
  readonly address: string;
  readonly port?: number;
  readonly health?: HealthStatus;
  readonly weight?: number;
}

export const lbEndpoints = (eps: readonly EndpointSpec[]) =>
  eps.map((e) => ({
    hostIdentifier: { case: "endpoint" as const, value: { address: socketAddress(e.address, e.port ?? 8443) } },
    healthStatus: e.health ?? HealthStatus.HEALTHY,
    ...(e.weight !== undefined ? { loadBalancingWeight: e.weight } : {}),
  }));

/** A ClusterLoadAssignment with one priority-0 locality. */
export function assignment(clusterName: string, eps: readonly EndpointSpec[], override: Override = {}): Any {
  return pack(ClusterLoadAssignmentSchema, { clusterName, endpoints: [{ lbEndpoints: lbEndpoints(eps) }], ...override });
}

/** name -> Any from a list of Anys named by `names`. */
export const set = (entries: readonly (readonly [string, Any])[]): ReadonlyMap<string, Any> => new Map(entries);

export const applyClusters = (s: GatewayConfigStore, ...entries: (readonly [string, Any])[]) => s.apply(GATEWAY_TYPE_URLS.cluster, set(entries));
export const applyEndpoints = (s: GatewayConfigStore, ...entries: (readonly [string, Any])[]) => s.apply(GATEWAY_TYPE_URLS.endpoint, set(entries));
export const applyListeners = (s: GatewayConfigStore, ...entries: (readonly [string, Any])[]) => s.apply(GATEWAY_TYPE_URLS.listener, set(entries));
