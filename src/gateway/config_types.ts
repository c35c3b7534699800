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
  /** consecutive_gateway_failure / consecutive connect failures before ejection; Envoy's default 5. */
  readonly consecutiveFailures: number;
  /** base_ejection_time in ms; Envoy's default 30 s (multiplied by the number of ejections). */
  readonly baseEjectionMs: number;
  /** max_ejection_percent; Envoy's default 10 (at least one host may always be ejected). */
  readonly maxEjectionPercent: number;
}

export interface ClusterConfig {
  readonly name: string;
  readonly type: "EDS" | "LOGICAL_DNS" | "STRICT_DNS";
  readonly connectTimeoutMs: number;
  /** undefined when the Cluster has no outlier_detection. */
  readonly outlier?: OutlierConfig;
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
