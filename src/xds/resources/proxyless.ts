/**
 * xDS resources for a proxyless gRPC client (gRFC A27 "xDS-Based Global Load Balancing", A28 "xDS
 * Traffic Splitting and Routing", A31 "xDS Timeout Support"), pure functions of a ProxylessSnapshot. Per
 * upstream name N (what the client resolves as `xds:///N`):
 * - Listener N with an `api_listener`: an HttpConnectionManager whose routes come from RDS over ADS
 *   (RouteConfiguration N) and whose only HTTP filter is the router (gRPC requires it last);
 * - RouteConfiguration N: one virtual host whose domains are N and `N:*` (gRPC matches the target's
 *   authority against them), routes from the discovery chain (./proxyless_routes.ts);
 * - per resolver of the chain an EDS cluster over ADS with ROUND_ROBIN, and its ClusterLoadAssignment
 *   with a locality per priority band (./proxyless_clusters.ts).
 * Each list is sorted by name; equal snapshots give byte-equal messages. Throws ResourceGenerationError on
 * a malformed chain, like the sidecar builders.
 */
import { create } from "@bufbuild/protobuf";
import { ApiVersion } from "../../gen/envoy/config/core/v3/config_source_pb.ts";
import type { Cluster } from "../../gen/envoy/config/cluster/v3/cluster_pb.ts";
import type { ClusterLoadAssignment } from "../../gen/envoy/config/endpoint/v3/endpoint_pb.ts";
import { ListenerSchema, type Listener } from "../../gen/envoy/config/listener/v3/listener_pb.ts";
import type { RouteConfiguration } from "../../gen/envoy/config/route/v3/route_pb.ts";
import { RouterSchema } from "../../gen/envoy/extensions/filters/http/router/v3/router_pb.ts";
import { HttpConnectionManagerSchema } from "../../gen/envoy/extensions/filters/network/http_connection_manager/v3/http_connection_manager_pb.ts";
import type { ProxylessSnapshot, ProxylessUpstream } from "../../proxycfg/index.ts";
import { byName, pack, statPrefix } from "./common.ts";
import { proxylessClusters, proxylessEndpoints } from "./proxyless_clusters.ts";
import { proxylessRoutes } from "./proxyless_routes.ts";

export { proxylessClusters, proxylessEndpoints, proxylessRoutes };

/** The upstreams of a snapshot in name order. */
export function proxylessUpstreams(snap: ProxylessSnapshot): ProxylessUpstream[] {
  return byName(Object.values(snap.Upstreams), (u) => u.Name);
}

/** One api_listener per upstream, sorted by name. */
export function proxylessListeners(snap: ProxylessSnapshot): Listener[] {
  return proxylessUpstreams(snap).map((u) =>
    create(ListenerSchema, {
      name: u.Name,
      apiListener: {
        apiListener: pack(HttpConnectionManagerSchema, {
          statPrefix: statPrefix("grpc", "proxyless_", u.Name),
          routeSpecifier: {
            case: "rds",
            value: { routeConfigName: u.Name, configSource: { resourceApiVersion: ApiVersion.V3, configSourceSpecifier: { case: "ads", value: {} } } },
          },
          // gRPC requires the router as the last (here: only) HTTP filter.
          httpFilters: [{ name: "envoy.filters.http.router", configType: { case: "typedConfig", value: pack(RouterSchema, {}) } }],
        }),
      },
    }),
  );
}

/** The four resource lists of a proxyless client (the shape of SidecarResources, for `toResourceMap`). */
export interface ProxylessResources {
  readonly listeners: readonly Listener[];
  readonly routes: readonly RouteConfiguration[];
  readonly clusters: readonly Cluster[];
  readonly endpoints: readonly ClusterLoadAssignment[];
}

/** Every resource of a proxyless client. */
export function proxylessResources(snap: ProxylessSnapshot): ProxylessResources {
  return { listeners: proxylessListeners(snap), routes: proxylessRoutes(snap), clusters: proxylessClusters(snap), endpoints: proxylessEndpoints(snap) };
}
