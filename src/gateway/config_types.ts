/**
 * The built-in mesh gateway's data-plane configuration: what the proxy runs on, decoded and validated
 * from the xDS resources the agent serves (Listener, Cluster, ClusterLoadAssignment; see ./xds_config.ts).
 * Plain readonly values: a new configuration replaces the old one as a whole (connections already
 * established keep the objects they started with).
 */

/** How a filter chain picks the upstream cluster. */
export type ChainRoute =
  /** tcp_proxy to a fixed cluster. */
  | { readonly kind: "cluster"; readonly cluster: string }
  /** sni_cluster then tcp_proxy: the cluster named exactly like the connection's SNI. */
  | { readonly kind: "sni-cluster" };

export interface FilterChainConfig {
  /**
   * `filter_chain_match.server_names`: exact names or `*.suffix` wildcards (matching any name that ends
   * in `.suffix`, at least one label before it); empty = matches every connection (the catch-all).
   */
  readonly serverNames: readonly string[];
  readonly route: ChainRoute;
  /** tcp_proxy's stat_prefix (stats are reported under it). */
  readonly statPrefix: string;
  /** tcp_proxy's idle_timeout in ms; undefined = Envoy's default 1 h; 0 = none. */
  readonly idleTimeoutMs?: number;
}

export interface ListenerConfig {
  /** The Listener's name (`default:10.0.0.1:8443`). */
  readonly name: string;
  readonly address: string;
  readonly port: number;
  /** Chains in the order given; Envoy's matching picks the most specific server name (see the matcher). */
  readonly chains: readonly FilterChainConfig[];
  /**
   * The listener has the tls_inspector listener filter: read the ClientHello (for SNI) before choosing a
   * chain. Without it, chains are matched at once with no SNI (only a catch-all chain can match).
   * Undefined counts as false.
   */
  readonly tlsInspector?: boolean;
}

export interface EndpointConfig {
  /** An IP literal (EDS) or a host name (LOGICAL_DNS / STRICT_DNS clusters). */
  readonly address: string;
  readonly port: number;
  /** HEALTHY or UNKNOWN (Envoy routes to both); UNHEALTHY, DRAINING, TIMEOUT and DEGRADED are false. */
  readonly healthy: boolean;
  /** load_balancing_weight, >= 1 (default 1). */
  readonly weight: number;
}

/** Outlier detection as the gateway applies it (Envoy's OutlierDetection subset). */
export interface OutlierConfig {
  /**
   * Consecutive connect failures before ejection, >= 1: the lowest threshold among the enforced
   * consecutive detectors (consecutive_5xx by default, Envoy's default 5; see ./xds_decode_outlier.ts).
   */
  readonly consecutiveFailures: number;
  /** base_ejection_time in ms; Envoy's default 30 s (multiplied by the number of ejections). */
  readonly baseEjectionMs: number;
  /** max_ejection_percent; Envoy's default 10 (at least one host may always be ejected). */
  readonly maxEjectionPercent: number;
  /**
   * interval in ms; Envoy's default 10 s. The ejection multiplier shrinks by one per interval spent
   * un-ejected (./balancer.ts). Undefined = the default.
   */
  readonly intervalMs?: number;
  /** max_ejection_time in ms, the cap on one ejection; Envoy's default 300 s (at least baseEjectionMs). */
  readonly maxEjectionMs?: number;
}

/** Cluster.DnsLookupFamily, lower-cased. */
export type DnsFamily = "auto" | "v4_only" | "v6_only" | "v4_preferred" | "all";

export interface ClusterConfig {
  readonly name: string;
  readonly type: "EDS" | "LOGICAL_DNS" | "STRICT_DNS";
  readonly connectTimeoutMs: number;
  /** undefined when the Cluster has no outlier_detection (or none of its consecutive detectors is enforced). */
  readonly outlier?: OutlierConfig;
  /**
   * How a LOGICAL_DNS / STRICT_DNS cluster resolves its endpoints' host names (undefined for EDS):
   * dns_refresh_rate in ms (Envoy's default 5 s) and dns_lookup_family (Envoy's default AUTO: IPv6
   * first, else IPv4). LOGICAL_DNS connects to the first address a lookup returns; STRICT_DNS makes
   * every address returned an endpoint.
   */
  readonly dns?: { readonly refreshMs: number; readonly family: DnsFamily };
  /** circuit_breakers max_connections (default threshold); undefined = Envoy's default 1024. */
  readonly maxConnections?: number;
  /**
   * The endpoints: for EDS from the ClusterLoadAssignment of the same name (empty until it arrives);
   * for DNS clusters from the inline load_assignment.
   */
  readonly endpoints: readonly EndpointConfig[];
}

/** Everything the proxy runs on. */
export interface GatewayConfig {
  readonly listeners: ReadonlyMap<string, ListenerConfig>;
  readonly clusters: ReadonlyMap<string, ClusterConfig>;
}
