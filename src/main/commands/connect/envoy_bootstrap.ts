/**
 * The Envoy v3 bootstrap `causeway connect envoy` prints or hands to Envoy: a pure function of the
 * resolved command settings and the proxy's `Proxy.Config` (Consul 1.8's bootstrap_tpl.go +
 * BootstrapConfig.GenerateJSON, emitted as v3 because Causeway's xDS server speaks only v3: v3
 * `transport_socket` and `load_assignment`, `resource_api_version`/`transport_api_version` V3, and the
 * `layered_runtime` of Consul's v3 template).
 */
import {
  adminProxyListener,
  decodeBootstrapOptions,
  parseJsonList,
  parseJsonObject,
  selfAdminCluster,
  SELF_ADMIN_CLUSTER,
  statsConfig,
  statsSink,
  type AdminProxyListener,
  type JsonObject,
} from "./envoy_bootstrap_config.ts";

export type { JsonObject } from "./envoy_bootstrap_config.ts";

/** The name of the static cluster for the local agent's gRPC port (Consul's xds.LocalAgentClusterName). */
export const LOCAL_AGENT_CLUSTER = "local_agent";

/**
 * Where Envoy reaches the agent's gRPC (xDS) port: an IP literal (STATIC), a host name that Envoy
 * resolves itself (LOGICAL_DNS), or a unix socket (`unix:///path` in `-grpc-addr`, a `pipe` address).
 */
export type AgentGrpcTarget =
  | { readonly kind: "ip"; readonly address: string; readonly port: number }
  | { readonly kind: "dns"; readonly host: string; readonly port: number }
  | { readonly kind: "unix"; readonly path: string };

/** Everything the bootstrap needs besides Proxy.Config, already resolved by the command. */
export interface EnvoyBootstrapSettings {
  /** `node.id`: the proxy's service ID on the local agent; the xDS server finds the proxy by it. */
  readonly proxyId: string;
  /** `node.cluster`: the destination service name of a sidecar (else the proxy ID or gateway service). */
  readonly proxyCluster: string;
  /** `node.metadata.namespace`; "default" when empty. */
  readonly namespace: string;
  /** `node.metadata.envoy_version` (the `-envoy-version` flag). */
  readonly envoyVersion: string;
  readonly adminAccessLogPath: string;
  /** The admin server's bind address: an IP (Envoy binds STATIC addresses only). */
  readonly adminAddress: string;
  readonly adminPort: number;
  readonly agent: AgentGrpcTarget;
  /** Set when the gRPC port speaks TLS; `caPem` (the agent CA, PEM) verifies it when given. */
  readonly agentTls?: { readonly caPem?: string };
  /** The ACL token, sent as `x-consul-token` gRPC metadata ("" when none, as Consul's template does). */
  readonly token: string;
  /** An `<ip>:<port>` for a `/ready` listener (ingress gateways; not from Proxy.Config). */
  readonly readyBindAddr?: string;
  /** The environment, for `$VAR` statsd/dogstatsd URLs. */
  readonly env: Readonly<Record<string, string | undefined>>;
}

/** The agent's gRPC endpoint address in v3 form. */
function agentAddress(target: AgentGrpcTarget): JsonObject {
  if (target.kind === "unix") return { pipe: { path: target.path } };
  return { socket_address: { address: target.kind === "ip" ? target.address : target.host, port_value: target.port } };
}

/** The `local_agent` static cluster: HTTP/2 to the agent's gRPC port, over TLS when configured. */
function localAgentCluster(s: EnvoyBootstrapSettings): JsonObject {
  const cluster: JsonObject = {
    name: LOCAL_AGENT_CLUSTER,
    // Consul's v3 template sets this (to its default) so Envoy 1.14-1.16 detect the bootstrap as v3.
    ignore_health_on_host_removal: false,
    connect_timeout: "1s",
    type: s.agent.kind === "dns" ? "LOGICAL_DNS" : "STATIC",
  };
  if (s.agentTls) {
    const pem = s.agentTls.caPem;
    cluster.transport_socket = {
      name: "tls",
      typed_config: {
        "@type": "type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext",
        common_tls_context: pem ? { validation_context: { trusted_ca: { inline_string: pem } } } : {},
      },
    };
  }
  cluster.http2_protocol_options = {};
  cluster.load_assignment = {
    cluster_name: LOCAL_AGENT_CLUSTER,
    endpoints: [{ lb_endpoints: [{ endpoint: { address: agentAddress(s.agent) } }] }],
  };
  return cluster;
}

/** The admin-proxy listeners Proxy.Config and the settings ask for, in Consul's order. */
function adminListeners(s: EnvoyBootstrapSettings, prometheus?: string, stats?: string): AdminProxyListener[] {
  const out: AdminProxyListener[] = [];
  if (prometheus) out.push({ name: "envoy_prometheus_metrics", bindAddr: prometheus, match: "path", value: "/metrics", rewrite: "/stats/prometheus" });
  if (stats) out.push({ name: "envoy_metrics", bindAddr: stats, match: "prefix", value: "/stats", rewrite: "/stats" });
  if (s.readyBindAddr) out.push({ name: "envoy_ready", bindAddr: s.readyBindAddr, match: "path", value: "/ready", rewrite: "/ready" });
  return out;
}

/**
 * Builds the bootstrap. `proxyConfig` is the proxy registration's `Proxy.Config` (undefined with
 * `-no-central-config`); its `envoy_*` keys add static clusters and listeners, stats sinks (statsd,
 * dogstatsd, extra), `stats_config` (generated tags unless `envoy_stats_config_json` replaces it),
 * `stats_flush_interval` and `tracing`, and the Prometheus and stats listeners with their `self_admin`
 * cluster (added once, unless an extra cluster already has that name). Key order follows Consul's
 * template. Throws an Error with a message for the user on a bad option (unconvertible value, JSON that
 * does not parse, unsupported sink URL, bind address without a port).
 */
export function buildEnvoyBootstrap(s: EnvoyBootstrapSettings, proxyConfig: Readonly<Record<string, unknown>> | undefined): JsonObject {
  const opts = decodeBootstrapOptions(proxyConfig);

  const clusters: unknown[] = [localAgentCluster(s)];
  if (opts.staticClustersJson) clusters.push(...parseJsonList("envoy_extra_static_clusters_json", opts.staticClustersJson));
  const listeners: unknown[] = opts.staticListenersJson ? parseJsonList("envoy_extra_static_listeners_json", opts.staticListenersJson) : [];
  const proxied = adminListeners(s, opts.prometheusBindAddr, opts.statsBindAddr);
  if (proxied.length > 0) {
    const hasSelfAdmin = clusters.some((c) => typeof c === "object" && c !== null && (c as JsonObject).name === SELF_ADMIN_CLUSTER);
    if (!hasSelfAdmin) clusters.push(selfAdminCluster(s.adminPort));
    listeners.push(...proxied.map(adminProxyListener));
  }

  const sinks: unknown[] = [];
  if (opts.statsdUrl) sinks.push(statsSink("statsd", opts.statsdUrl, s.env));
  if (opts.dogstatsdUrl) sinks.push(statsSink("dogstatsd", opts.dogstatsdUrl, s.env));
  if (opts.statsSinksJson) sinks.push(...parseJsonList("envoy_extra_stats_sinks_json", opts.statsSinksJson));

  const staticResources: JsonObject = { clusters };
  if (listeners.length > 0) staticResources.listeners = listeners;

  const bootstrap: JsonObject = {
    admin: {
      access_log_path: s.adminAccessLogPath,
      address: { socket_address: { address: s.adminAddress, port_value: s.adminPort } },
    },
    node: {
      cluster: s.proxyCluster,
      id: s.proxyId,
      metadata: { namespace: s.namespace || "default", envoy_version: s.envoyVersion },
    },
    layered_runtime: { layers: [{ name: "base", static_layer: { "re2.max_program_size.error_level": 1048576 } }] },
    static_resources: staticResources,
  };
  if (sinks.length > 0) bootstrap.stats_sinks = sinks;
  bootstrap.stats_config = opts.statsConfigJson ? parseJsonObject("envoy_stats_config_json", opts.statsConfigJson) : statsConfig(opts.statsTags, s.proxyCluster);
  if (opts.statsFlushInterval) bootstrap.stats_flush_interval = opts.statsFlushInterval;
  if (opts.tracingJson) bootstrap.tracing = parseJsonObject("envoy_tracing_json", opts.tracingJson);

  bootstrap.dynamic_resources = {
    lds_config: { ads: {}, resource_api_version: "V3" },
    cds_config: { ads: {}, resource_api_version: "V3" },
    ads_config: {
      api_type: "GRPC",
      transport_api_version: "V3",
      grpc_services: [{ initial_metadata: [{ key: "x-consul-token", value: s.token }], envoy_grpc: { cluster_name: LOCAL_AGENT_CLUSTER } }],
    },
  };
  return bootstrap;
}
