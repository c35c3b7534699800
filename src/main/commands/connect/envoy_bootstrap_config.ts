/**
 * The `envoy_*` keys of a proxy's `Proxy.Config` that shape Envoy's bootstrap (Consul 1.8's
 * BootstrapConfig, command/connect/envoy/bootstrap_config.go), decoded as Consul decodes them with
 * mapstructure.WeakDecode, and the pieces they expand to, in Envoy v3 form: stats sinks, stats tags and
 * the admin-proxy listeners (`envoy_prometheus_bind_addr`, `envoy_stats_bind_addr`, and the ready
 * listener gateways use). Pure: the environment for `$VAR` sink addresses is passed in.
 */
import { splitHostPort } from "../../../platform/index.ts";

/** A JSON object as the bootstrap carries it. */
export type JsonObject = { [key: string]: unknown };

/** The decoded `envoy_*` bootstrap options; strings are as given (JSON snippets unparsed). */
export interface EnvoyBootstrapOptions {
  readonly statsdUrl?: string;
  readonly dogstatsdUrl?: string;
  readonly statsTags: readonly string[];
  readonly prometheusBindAddr?: string;
  readonly statsBindAddr?: string;
  readonly staticClustersJson?: string;
  readonly staticListenersJson?: string;
  readonly statsSinksJson?: string;
  readonly statsConfigJson?: string;
  readonly statsFlushInterval?: string;
  readonly tracingJson?: string;
}

type StringKey = Exclude<keyof EnvoyBootstrapOptions, "statsTags">;

/** Proxy.Config key -> option, as Consul's mapstructure tags name them. */
const STRING_KEYS: ReadonlyArray<readonly [string, StringKey]> = [
  ["envoy_statsd_url", "statsdUrl"],
  ["envoy_dogstatsd_url", "dogstatsdUrl"],
  ["envoy_prometheus_bind_addr", "prometheusBindAddr"],
  ["envoy_stats_bind_addr", "statsBindAddr"],
  ["envoy_extra_static_clusters_json", "staticClustersJson"],
  ["envoy_extra_static_listeners_json", "staticListenersJson"],
  ["envoy_extra_stats_sinks_json", "statsSinksJson"],
  ["envoy_stats_config_json", "statsConfigJson"],
  ["envoy_stats_flush_interval", "statsFlushInterval"],
  ["envoy_tracing_json", "tracingJson"],
];

/** Go's name for a decoded JSON value's type, for mapstructure's error text. */
function goTypeName(v: unknown): string {
  if (Array.isArray(v)) return "[]interface {}";
  if (typeof v === "object") return "map[string]interface {}";
  return typeof v === "number" ? "float64" : typeof v === "boolean" ? "bool" : "string";
}

/** mapstructure's weak string conversion: numbers as Go formats them, booleans as "1"/"0". */
function weakString(key: string, v: unknown, errors: string[]): string | undefined {
  if (typeof v === "string") return v;
  if (typeof v === "number") return String(v);
  if (typeof v === "boolean") return v ? "1" : "0";
  errors.push(`'${key}' expected type 'string', got unconvertible type '${goTypeName(v)}'`);
  return undefined;
}

/**
 * Decodes the bootstrap keys of `config` (Consul's `mapstructure.WeakDecode(svc.Proxy.Config, &bsCfg)`):
 * strings as given, numbers and booleans converted, a single value where a list is expected lifted to a
 * one-item list; other keys are ignored. Throws `failed parsing Proxy.Config: ...` (mapstructure's
 * wording) on a value that cannot convert, and on `envoy_bootstrap_json_tpl`, a Go text/template that
 * Causeway cannot render (refused rather than ignored, so the proxy does not start with a bootstrap its
 * operator did not ask for).
 */
export function decodeBootstrapOptions(config: Readonly<Record<string, unknown>> | undefined): EnvoyBootstrapOptions {
  const out: { -readonly [K in keyof EnvoyBootstrapOptions]: EnvoyBootstrapOptions[K] } = { statsTags: [] };
  if (!config) return out;
  const errors: string[] = [];
  for (const [key, field] of STRING_KEYS) {
    const v = config[key];
    if (v === undefined || v === null) continue;
    const s = weakString(key, v, errors);
    if (s !== undefined) out[field] = s;
  }
  const tags = config.envoy_stats_tags;
  if (tags !== undefined && tags !== null) {
    const items = Array.isArray(tags) ? tags : [tags];
    out.statsTags = items.flatMap((t, i) => weakString(`envoy_stats_tags[${i}]`, t, errors) ?? []);
  }
  const tpl = config.envoy_bootstrap_json_tpl;
  if (typeof tpl === "string" && tpl !== "") errors.push("'envoy_bootstrap_json_tpl' is not supported: Causeway does not render Go templates; use the envoy_extra_* keys");
  if (errors.length > 0) throw new Error(`failed parsing Proxy.Config: ${errors.length} error(s) decoding:\n\n${errors.map((e) => `* ${e}`).join("\n")}`);
  return out;
}

/**
 * Parses a JSON snippet of the `envoy_extra_*_json` kind: zero or more comma-separated values "suitable
 * for direct injection into a JSON array" (Consul splices them into its template). Throws naming `key`.
 */
export function parseJsonList(key: string, text: string): unknown[] {
  try {
    return JSON.parse(`[${text}]`) as unknown[];
  } catch (err) {
    throw new Error(`failed parsing ${key}: ${(err as Error).message}`);
  }
}

/** Parses a JSON object snippet (`envoy_tracing_json`, `envoy_stats_config_json`). Throws naming `key`. */
export function parseJsonObject(key: string, text: string): JsonObject {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch (err) {
    throw new Error(`failed parsing ${key}: ${(err as Error).message}`);
  }
  if (typeof v !== "object" || v === null || Array.isArray(v)) throw new Error(`failed parsing ${key}: not a JSON object`);
  return v as JsonObject;
}

/** Envoy v3 names of the two sink kinds Consul configures from a URL. */
const SINKS = {
  statsd: { key: "envoy_statsd_url", name: "envoy.stat_sinks.statsd", type: "StatsdSink" },
  dogstatsd: { key: "envoy_dogstatsd_url", name: "envoy.stat_sinks.dog_statsd", type: "DogStatsdSink" },
} as const;

/**
 * A statsd or dogstatsd sink from `udp://<ip>:<port>`, `unix:///path`, or `$ENV_VAR` naming one of those
 * (Consul's generateStatsSinkJSON). Throws `unsupported address protocol "<s>" for <name> sink` as
 * Consul does for another scheme.
 */
export function statsSink(kind: keyof typeof SINKS, raw: string, env: Readonly<Record<string, string | undefined>>): JsonObject {
  const sink = SINKS[kind];
  const addr = raw.length > 2 && raw.startsWith("$") ? (env[raw.slice(1)] ?? "") : raw;
  const scheme = /^([a-zA-Z][a-zA-Z0-9+.-]*):/.exec(addr)?.[1]?.toLowerCase() ?? "";
  let address: JsonObject;
  if (scheme === "udp") {
    const m = /^udp:\/\/(\[[^\]]*\]|[^:/]*):(\d+)\/?$/i.exec(addr);
    if (!m) throw new Error(`failed to parse ${sink.name} sink address "${addr}"`);
    address = { socket_address: { address: m[1]!.replace(/^\[|\]$/g, ""), port_value: Number(m[2]) } };
  } else if (scheme === "unix") {
    const path = addr.replace(/^unix:\/\/[^/]*/i, "");
    if (!path) throw new Error(`failed to parse ${sink.name} sink address "${addr}"`);
    address = { pipe: { path } };
  } else {
    throw new Error(`unsupported address protocol "${scheme}" for ${sink.name} sink`);
  }
  return { name: sink.name, typed_config: { "@type": `type.googleapis.com/envoy.config.metrics.v3.${sink.type}`, address } };
}

const SEG = "[^.]+";

/**
 * The regex tag specifiers Consul 1.8 adds for cluster metric names
 * `<hash>~<subset>.<service>.<namespace>.<dc>.<internal|external>.<trust domain>.consul` (the set
 * Consul 1.9 kept as its deprecated `consul.*` tags). The outer group is removed from the metric name,
 * the inner one becomes the tag value.
 */
const CLUSTER_TAG_RULES: ReadonlyArray<readonly [string, string]> = [
  ["consul.custom_hash", `^cluster\\.((?:(${SEG})~)?(?:${SEG}\\.)?${SEG}\\.${SEG}\\.${SEG}\\.${SEG}\\.${SEG}\\.consul\\.)`],
  ["consul.service_subset", `^cluster\\.((?:${SEG}~)?(?:(${SEG})\\.)?${SEG}\\.${SEG}\\.${SEG}\\.${SEG}\\.${SEG}\\.consul\\.)`],
  ["consul.service", `^cluster\\.((?:${SEG}~)?(?:${SEG}\\.)?(${SEG})\\.${SEG}\\.${SEG}\\.${SEG}\\.${SEG}\\.consul\\.)`],
  ["consul.namespace", `^cluster\\.((?:${SEG}~)?(?:${SEG}\\.)?${SEG}\\.(${SEG})\\.${SEG}\\.${SEG}\\.${SEG}\\.consul\\.)`],
  ["consul.datacenter", `^cluster\\.((?:${SEG}~)?(?:${SEG}\\.)?${SEG}\\.${SEG}\\.(${SEG})\\.${SEG}\\.${SEG}\\.consul\\.)`],
  ["consul.routing_type", `^cluster\\.((?:${SEG}~)?(?:${SEG}\\.)?${SEG}\\.${SEG}\\.${SEG}\\.(${SEG})\\.${SEG}\\.consul\\.)`],
  ["consul.trust_domain", `^cluster\\.((?:${SEG}~)?(?:${SEG}\\.)?${SEG}\\.${SEG}\\.${SEG}\\.${SEG}\\.(${SEG})\\.consul\\.)`],
  ["consul.target", `^cluster\\.(((?:${SEG}~)?(?:${SEG}\\.)?${SEG}\\.${SEG}\\.${SEG})\\.${SEG}\\.${SEG}\\.consul\\.)`],
  ["consul.full_target", `^cluster\\.(((?:${SEG}~)?(?:${SEG}\\.)?${SEG}\\.${SEG}\\.${SEG}\\.${SEG}\\.${SEG})\\.consul\\.)`],
];

/**
 * `stats_config` from `envoy_stats_tags` (Consul's generateStatsConfig): the user's fixed tags first
 * (`name=value`, or `name` alone for the value "1"; names lower-cased), then the cluster regex tags,
 * then `local_cluster` = the proxy's cluster unless a user tag already sets it; `use_all_default_tags`.
 */
export function statsConfig(userTags: readonly string[], proxyCluster: string): JsonObject {
  const tags: JsonObject[] = [];
  const named = new Set<string>();
  for (const tag of userTags) {
    const eq = tag.indexOf("=");
    const name = (eq < 0 ? tag : tag.slice(0, eq)).toLowerCase();
    tags.push({ tag_name: name, fixed_value: eq < 0 ? "1" : tag.slice(eq + 1) });
    named.add(name);
  }
  for (const [name, regex] of CLUSTER_TAG_RULES) tags.push({ tag_name: name, regex });
  if (proxyCluster !== "" && !named.has("local_cluster")) tags.push({ tag_name: "local_cluster", fixed_value: proxyCluster });
  return { stats_tags: tags, use_all_default_tags: true };
}

/** The cluster the admin-proxy listeners route to: Envoy's own admin port on loopback. */
export const SELF_ADMIN_CLUSTER = "self_admin";

/** The `self_admin` static cluster (Consul's, in v3 form: `load_assignment` instead of `hosts`). */
export function selfAdminCluster(adminPort: number): JsonObject {
  const address = { socket_address: { address: "127.0.0.1", port_value: adminPort } };
  return {
    name: SELF_ADMIN_CLUSTER,
    connect_timeout: "5s",
    type: "STATIC",
    http_protocol_options: {},
    load_assignment: { cluster_name: SELF_ADMIN_CLUSTER, endpoints: [{ lb_endpoints: [{ endpoint: { address } }] }] },
  };
}

/** What one admin-proxy listener exposes: `<name>_listener` on `bindAddr`, one route to the admin API. */
export interface AdminProxyListener {
  readonly name: string;
  readonly bindAddr: string;
  readonly match: "path" | "prefix";
  readonly value: string;
  readonly rewrite: string;
}

/**
 * A listener that proxies one admin path to `self_admin` and answers 404 to everything else (Consul's
 * generateListenerConfig, with v3 typed configs). Throws `invalid <name> bind address: ...` on an
 * address without a port.
 */
export function adminProxyListener(l: AdminProxyListener): JsonObject {
  let hp: { host: string; port: number };
  try {
    hp = splitHostPort(l.bindAddr);
  } catch (err) {
    throw new Error(`invalid ${l.name} bind address: ${(err as Error).message}`);
  }
  const routeConfig = {
    name: "self_admin_route",
    virtual_hosts: [
      {
        name: SELF_ADMIN_CLUSTER,
        domains: ["*"],
        routes: [
          { match: { [l.match]: l.value }, route: { cluster: SELF_ADMIN_CLUSTER, prefix_rewrite: l.rewrite } },
          { match: { prefix: "/" }, direct_response: { status: 404 } },
        ],
      },
    ],
  };
  const hcm = {
    "@type": "type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager",
    stat_prefix: l.name,
    codec_type: "HTTP1",
    route_config: routeConfig,
    http_filters: [{ name: "envoy.filters.http.router", typed_config: { "@type": "type.googleapis.com/envoy.extensions.filters.http.router.v3.Router" } }],
  };
  return {
    name: `${l.name}_listener`,
    address: { socket_address: { address: hp.host, port_value: hp.port } },
    filter_chains: [{ filters: [{ name: "envoy.filters.network.http_connection_manager", typed_config: hcm }] }],
  };
}
