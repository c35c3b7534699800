/**
 * Envoy v3 resource type URLs and the order in which an ADS stream sends changes.
 *
 * Order follows the make-before-break rules of Envoy's xDS protocol document ("Eventual consistency
 * considerations"): CDS first, EDS after the clusters it belongs to, LDS after CDS/EDS, RDS after the
 * listeners that reference it; stale clusters and their endpoints are removed last.
 */

/** `type.googleapis.com/envoy.config.listener.v3.Listener` (LDS). */
export const LISTENER_TYPE = "type.googleapis.com/envoy.config.listener.v3.Listener";
/** `type.googleapis.com/envoy.config.route.v3.RouteConfiguration` (RDS). */
export const ROUTE_TYPE = "type.googleapis.com/envoy.config.route.v3.RouteConfiguration";
/** `type.googleapis.com/envoy.config.cluster.v3.Cluster` (CDS). */
export const CLUSTER_TYPE = "type.googleapis.com/envoy.config.cluster.v3.Cluster";
/** `type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment` (EDS). */
export const ENDPOINT_TYPE = "type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment";

/** The prefix of every type URL: a type URL is this followed by the message's full name. */
export const TYPE_URL_PREFIX = "type.googleapis.com/";

/** The four core types in send order; any other type URL comes after them, sorted. */
const CORE_ORDER: readonly string[] = [CLUSTER_TYPE, ENDPOINT_TYPE, LISTENER_TYPE, ROUTE_TYPE];

/**
 * Sorts type URLs into send order: CDS, EDS, LDS, RDS, then the others by name. Pure; returns a new array.
 */
export function sendOrder(typeUrls: Iterable<string>): string[] {
  const rank = (t: string) => {
    const i = CORE_ORDER.indexOf(t);
    return i < 0 ? CORE_ORDER.length : i;
  };
  return [...typeUrls].sort((a, b) => rank(a) - rank(b) || (a < b ? -1 : a > b ? 1 : 0));
}

/**
 * Types for which an empty subscription on the first request means "everything" (the legacy
 * wildcard of the xDS protocol document, "How the client specifies what resources to return"):
 * Listener and Cluster, the only types with a wildcard subscription. Explicit `"*"` works for any type.
 */
export function legacyWildcardType(typeUrl: string): boolean {
  return typeUrl === LISTENER_TYPE || typeUrl === CLUSTER_TYPE;
}
