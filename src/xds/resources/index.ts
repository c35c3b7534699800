/**
 * Sidecar xDS resources as pure functions of a proxycfg snapshot: Envoy v3 Listeners, Clusters,
 * ClusterLoadAssignments and RouteConfigurations, each list sorted by name and built in a deterministic
 * order (equal snapshots give byte-equal messages, so versions can be content hashes).
 */
import type { Cluster } from "../../gen/envoy/config/cluster/v3/cluster_pb.ts";
import type { ClusterLoadAssignment } from "../../gen/envoy/config/endpoint/v3/endpoint_pb.ts";
import type { Listener } from "../../gen/envoy/config/listener/v3/listener_pb.ts";
import type { RouteConfiguration } from "../../gen/envoy/config/route/v3/route_pb.ts";
import type { Message } from "@bufbuild/protobuf";
import type { SidecarSnapshot } from "../../proxycfg/index.ts";
import { CLUSTER_TYPE, ENDPOINT_TYPE, LISTENER_TYPE, ROUTE_TYPE } from "../types.ts";
import { sidecarClusters } from "./clusters.ts";
import { sidecarEndpoints } from "./endpoints.ts";
import { sidecarListeners } from "./listeners.ts";
import { sidecarRoutes } from "./routes.ts";

export { LOCAL_APP_CLUSTER, PUBLIC_LISTENER, ResourceGenerationError, customizeClusterName } from "./common.ts";
export { envoyRegistry } from "./registry.ts";
export { sidecarClusters, sidecarEndpoints, sidecarListeners, sidecarRoutes };
export { parseProxyConfig, parseUpstreamConfig, type ProxyConfig, type UpstreamConfig } from "./config.ts";
export { meshGatewayClusters, meshGatewayEndpoints, meshGatewayListeners, meshGatewayResources, type MeshGatewayResources } from "./mesh_gateway.ts";
export { proxylessClusters, proxylessEndpoints, proxylessListeners, proxylessResources, proxylessRoutes, type ProxylessResources } from "./proxyless.ts";

/** The four resource lists of one sidecar (or of one proxyless gRPC client: ./proxyless.ts). */
export interface SidecarResources {
  readonly listeners: readonly Listener[];
  readonly clusters: readonly Cluster[];
  readonly endpoints: readonly ClusterLoadAssignment[];
  readonly routes: readonly RouteConfiguration[];
}

/**
 * Every resource of a connect-proxy sidecar. Throws ResourceGenerationError when the snapshot cannot be
 * rendered (an escape hatch that is not a valid v3 Listener/Cluster, a malformed chain); the caller keeps
 * serving the previous resources, as Consul fails the xDS response and Envoy keeps its last config.
 */
export function sidecarResources(snap: SidecarSnapshot): SidecarResources {
  return { listeners: sidecarListeners(snap), clusters: sidecarClusters(snap), endpoints: sidecarEndpoints(snap), routes: sidecarRoutes(snap) };
}

/**
 * The resources keyed by type URL, then by resource name (cluster name for load assignments): the shape
 * the xDS cache's `set(node, resources)` takes. Every type is present, possibly empty, so a type that
 * loses all its resources is seen as emptied.
 */
export function toResourceMap(res: SidecarResources): ReadonlyMap<string, ReadonlyMap<string, Message>> {
  return new Map<string, ReadonlyMap<string, Message>>([
    [CLUSTER_TYPE, new Map(res.clusters.map((c) => [c.name, c]))],
    [ENDPOINT_TYPE, new Map(res.endpoints.map((e) => [e.clusterName, e]))],
    [LISTENER_TYPE, new Map(res.listeners.map((l) => [l.name, l]))],
    [ROUTE_TYPE, new Map(res.routes.map((r) => [r.name, r]))],
  ]);
}
