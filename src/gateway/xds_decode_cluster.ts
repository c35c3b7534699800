/**
 * Cluster -> ClusterConfig for the built-in gateway: types EDS (over ADS), LOGICAL_DNS and STRICT_DNS
 * (with an inline load_assignment); connect_timeout (Envoy's default 5 s); outlier_detection
 * (./xds_decode_outlier.ts); circuit_breakers' default-priority max_connections; DNS refresh rate and
 * lookup family. Round robin is the only balancing: LEAST_REQUEST is accepted and served as weighted
 * round robin (it is a load-spreading refinement, and the gateway's connections are long-lived tunnels
 * of similar cost; refusing it would take the whole cluster set down over a heuristic). Hash and random
 * policies are refused, as are transport sockets: the gateway never originates TLS, it passes the
 * client's TLS through. Any other field that is set is refused by name (./xds_strict.ts).
 */
import type { Any } from "@bufbuild/protobuf/wkt";
import { CircuitBreakers_ThresholdsSchema, CircuitBreakersSchema, type CircuitBreakers } from "../gen/envoy/config/cluster/v3/circuit_breaker_pb.ts";
import { Cluster_DiscoveryType, Cluster_DnsLookupFamily, Cluster_EdsClusterConfigSchema, Cluster_LbPolicy, ClusterSchema, type Cluster } from "../gen/envoy/config/cluster/v3/cluster_pb.ts";
import { RoutingPriority } from "../gen/envoy/config/core/v3/base_pb.ts";
import { ApiVersion, ConfigSourceSchema } from "../gen/envoy/config/core/v3/config_source_pb.ts";
import type { ClusterConfig, DnsFamily } from "./config_types.ts";
import { decodeAssignment } from "./xds_decode_endpoints.ts";
import { decodeOutlier } from "./xds_decode_outlier.ts";
import { at, durationMs, Nack, onlyFields, unpack } from "./xds_strict.ts";

const DEFAULT_CONNECT_TIMEOUT_MS = 5_000;
const DEFAULT_DNS_REFRESH_MS = 5_000;

const SUPPORTED = [
  "name",
  "type",
  "eds_cluster_config",
  "connect_timeout",
  "lb_policy",
  "least_request_lb_config",
  "load_assignment",
  "circuit_breakers",
  "outlier_detection",
  "dns_refresh_rate",
  "dns_lookup_family",
  "metadata",
];

const FAMILIES: Readonly<Record<number, DnsFamily>> = {
  [Cluster_DnsLookupFamily.AUTO]: "auto",
  [Cluster_DnsLookupFamily.V4_ONLY]: "v4_only",
  [Cluster_DnsLookupFamily.V6_ONLY]: "v6_only",
  [Cluster_DnsLookupFamily.V4_PREFERRED]: "v4_preferred",
  [Cluster_DnsLookupFamily.ALL]: "all",
};

/**
 * Decodes a Cluster resource named `name`; throws Nack. An EDS cluster's `endpoints` is empty here:
 * the store fills them from the ClusterLoadAssignment of the same name.
 */
export function decodeCluster(any: Any, name: string): ClusterConfig {
  const path = `Cluster ${name}`;
  const c = unpack(any, ClusterSchema, path);
  if (c.name !== name) throw new Nack(`${path}: resource is named ${JSON.stringify(c.name)}`);
  if (c.transportSocket || c.transportSocketMatches.length > 0) {
    throw new Nack(`${path}: transport_socket is not supported: the built-in gateway passes TLS through and never originates it`);
  }
  onlyFields(ClusterSchema, c, SUPPORTED, path);
  if (c.lbPolicy !== Cluster_LbPolicy.ROUND_ROBIN && c.lbPolicy !== Cluster_LbPolicy.LEAST_REQUEST) {
    throw new Nack(`${path}: lb_policy ${Cluster_LbPolicy[c.lbPolicy] ?? c.lbPolicy} is not supported (ROUND_ROBIN or LEAST_REQUEST)`);
  }
  const connectTimeoutMs = c.connectTimeout ? durationMs(c.connectTimeout, at(path, "connect_timeout")) : DEFAULT_CONNECT_TIMEOUT_MS;
  if (connectTimeoutMs <= 0) throw new Nack(`${at(path, "connect_timeout")}: must be greater than 0`);
  const outlier = decodeOutlier(c.outlierDetection, at(path, "outlier_detection"));
  const maxConnections = circuitBreakerMax(c.circuitBreakers, at(path, "circuit_breakers"));
  const common = { name, connectTimeoutMs, ...(outlier ? { outlier } : {}), ...(maxConnections !== undefined ? { maxConnections } : {}) };

  const type = c.clusterDiscoveryType.case === "type" ? c.clusterDiscoveryType.value : Cluster_DiscoveryType.STATIC;
  if (type === Cluster_DiscoveryType.EDS) {
    checkEds(c, name, path);
    return { ...common, type: "EDS", endpoints: [] };
  }
  if (type === Cluster_DiscoveryType.LOGICAL_DNS || type === Cluster_DiscoveryType.STRICT_DNS) {
    if (!c.loadAssignment) throw new Nack(`${path}: a DNS cluster needs a load_assignment`);
    const endpoints = decodeAssignment(c.loadAssignment, at(path, "load_assignment"), { requireIp: false });
    const logical = type === Cluster_DiscoveryType.LOGICAL_DNS;
    const lbCount = c.loadAssignment.endpoints.reduce((n, l) => n + l.lbEndpoints.length, 0);
    if (logical && (c.loadAssignment.endpoints.length !== 1 || lbCount !== 1)) {
      throw new Nack(`${path}: LOGICAL_DNS clusters must have a single locality_lb_endpoint and a single lb_endpoint`);
    }
    const family = FAMILIES[c.dnsLookupFamily];
    if (!family) throw new Nack(`${at(path, "dns_lookup_family")}: unknown value ${c.dnsLookupFamily}`);
    const refreshMs = c.dnsRefreshRate ? durationMs(c.dnsRefreshRate, at(path, "dns_refresh_rate")) : DEFAULT_DNS_REFRESH_MS;
    if (refreshMs < 1) throw new Nack(`${at(path, "dns_refresh_rate")}: must be at least 1ms`);
    return { ...common, type: logical ? "LOGICAL_DNS" : "STRICT_DNS", dns: { refreshMs, family }, endpoints };
  }
  throw new Nack(`${path}: type ${Cluster_DiscoveryType[type] ?? type} is not supported (EDS, LOGICAL_DNS or STRICT_DNS)`);
}

/** EDS must come over ADS under the cluster's own name, with no inline endpoints. */
function checkEds(c: Cluster, name: string, path: string): void {
  const eds = c.edsClusterConfig;
  const ep = at(path, "eds_cluster_config");
  if (!eds?.edsConfig) throw new Nack(`${ep}: eds_config is required`);
  onlyFields(Cluster_EdsClusterConfigSchema, eds, ["eds_config", "service_name"], ep);
  if (eds.serviceName !== "" && eds.serviceName !== name) throw new Nack(`${ep}.service_name: only the cluster's own name is supported`);
  const src = eds.edsConfig;
  onlyFields(ConfigSourceSchema, src, ["ads", "resource_api_version"], at(ep, "eds_config"));
  if (src.configSourceSpecifier.case !== "ads") throw new Nack(`${ep}.eds_config: only ads is supported`);
  if (src.resourceApiVersion !== ApiVersion.V3 && src.resourceApiVersion !== ApiVersion.AUTO) throw new Nack(`${ep}.eds_config.resource_api_version: only V3`);
  if (c.loadAssignment) throw new Nack(`${path}: load_assignment is not supported on an EDS cluster`);
}

/** max_connections of the first DEFAULT-priority threshold (Envoy takes the first per priority). */
function circuitBreakerMax(cb: CircuitBreakers | undefined, path: string): number | undefined {
  if (!cb) return undefined;
  onlyFields(CircuitBreakersSchema, cb, ["thresholds"], path);
  let max: number | undefined;
  let seenDefault = false;
  for (const [i, t] of cb.thresholds.entries()) {
    onlyFields(CircuitBreakers_ThresholdsSchema, t, ["priority", "max_connections", "track_remaining"], `${path}.thresholds[${i}]`);
    if (t.priority === RoutingPriority.DEFAULT && !seenDefault) {
      seenDefault = true;
      max = t.maxConnections;
    }
  }
  return max;
}
