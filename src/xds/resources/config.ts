/**
 * The keys of a proxy's opaque `Proxy.Config` and an upstream's `Config` that shape xDS resources
 * (Consul 1.8 agent/xds/config.go). Decoding is weak like Go's mapstructure.WeakDecode: numbers given as
 * strings and strings given as numbers or booleans are accepted. A value that cannot be decoded is not
 * fatal (Consul warns and continues with the default); it is reported in `warnings`.
 */
import { parseDuration } from "../../lib/index.ts";

type Opaque = Readonly<Record<string, unknown>> | undefined;

/** ProxyConfig: `envoy_public_listener_json`, `envoy_local_cluster_json`, timeouts, protocol, bind. */
export interface ProxyConfig {
  readonly publicListenerJson: string;
  readonly localClusterJson: string;
  /** Default 5000. */
  readonly localConnectTimeoutMs: number;
  /** Lower-cased; default "tcp". */
  readonly protocol: string;
  readonly bindAddress: string;
  readonly bindPort: number;
}

/** UpstreamLimits: each absent unless configured (Envoy's defaults apply then). */
export interface UpstreamLimits {
  readonly maxConnections?: number;
  readonly maxPendingRequests?: number;
  readonly maxConcurrentRequests?: number;
}

/** PassiveHealthCheck: zero values mean Envoy's defaults. */
export interface PassiveHealthCheck {
  readonly intervalMs: number;
  readonly maxFailures: number;
}

/** UpstreamConfig as parsed without defaults (ParseUpstreamConfigNoDefaults): protocol "" when unset. */
export interface UpstreamConfig {
  readonly listenerJson: string;
  readonly clusterJson: string;
  /** Lower-cased; "" when unset. */
  readonly protocol: string;
  /** 0 when unset (the default 5000 is applied by `withUpstreamDefaults`). */
  readonly connectTimeoutMs: number;
  readonly limits: UpstreamLimits;
  readonly passiveHealthCheck: PassiveHealthCheck;
}

export interface Parsed<T> {
  readonly config: T;
  readonly warnings: readonly string[];
}

class WeakDecoder {
  readonly warnings: string[] = [];
  constructor(private readonly where: string) {}

  str(m: Opaque, key: string): string {
    const v = m?.[key];
    if (v === undefined || v === null) return "";
    if (typeof v === "string") return v;
    if (typeof v === "number") return String(v);
    if (typeof v === "boolean") return v ? "1" : "0";
    this.warnings.push(`${this.where}: '${key}' expected a string, got ${JSON.stringify(v)}`);
    return "";
  }

  int(m: Opaque, key: string): number | undefined {
    const v = m?.[key];
    if (v === undefined || v === null) return undefined;
    if (typeof v === "number" && Number.isFinite(v)) return Math.trunc(v);
    if (typeof v === "boolean") return v ? 1 : 0;
    if (typeof v === "string" && /^[+-]?\d+$/.test(v.trim())) return Number.parseInt(v.trim(), 10);
    this.warnings.push(`${this.where}: '${key}' expected an integer, got ${JSON.stringify(v)}`);
    return undefined;
  }

  /** A Go time.Duration: a number is nanoseconds; a string is a Go duration ("10s") or a nanosecond count. */
  durationMs(m: Opaque, key: string): number {
    const v = m?.[key];
    if (v === undefined || v === null) return 0;
    if (typeof v === "number" && Number.isFinite(v)) return Math.trunc(v) / 1e6;
    if (typeof v === "string") {
      if (/^\d+$/.test(v.trim())) return Number.parseInt(v.trim(), 10) / 1e6;
      try {
        return parseDuration(v);
      } catch {
        // fall through to the warning
      }
    }
    this.warnings.push(`${this.where}: '${key}' expected a duration, got ${JSON.stringify(v)}`);
    return 0;
  }

  map(m: Opaque, key: string): Opaque {
    const v = m?.[key];
    if (v === undefined || v === null) return undefined;
    // HCL decoding may wrap a block in a one-element list (decode.HookWeakDecodeFromSlice).
    const one = Array.isArray(v) && v.length === 1 ? v[0] : v;
    if (typeof one === "object" && one !== null && !Array.isArray(one)) return one as Record<string, unknown>;
    this.warnings.push(`${this.where}: '${key}' expected an object, got ${JSON.stringify(v)}`);
    return undefined;
  }
}

/** ParseProxyConfig: defaults protocol "tcp" and local_connect_timeout_ms 5000. */
export function parseProxyConfig(m: Opaque): Parsed<ProxyConfig> {
  const d = new WeakDecoder("Proxy.Config");
  const timeout = d.int(m, "local_connect_timeout_ms") ?? 0;
  const config: ProxyConfig = {
    publicListenerJson: d.str(m, "envoy_public_listener_json"),
    localClusterJson: d.str(m, "envoy_local_cluster_json"),
    localConnectTimeoutMs: timeout < 1 ? 5000 : timeout,
    protocol: d.str(m, "protocol").toLowerCase() || "tcp",
    bindAddress: d.str(m, "bind_address"),
    bindPort: d.int(m, "bind_port") ?? 0,
  };
  return { config, warnings: d.warnings };
}

/** ParseUpstreamConfigNoDefaults. */
export function parseUpstreamConfig(m: Opaque, upstreamId: string): Parsed<UpstreamConfig> {
  const d = new WeakDecoder(`upstream ${upstreamId} Config`);
  const limits = d.map(m, "limits");
  const phc = d.map(m, "passive_health_check");
  const lim: { maxConnections?: number; maxPendingRequests?: number; maxConcurrentRequests?: number } = {};
  const mc = d.int(limits, "max_connections");
  const mp = d.int(limits, "max_pending_requests");
  const mr = d.int(limits, "max_concurrent_requests");
  if (mc !== undefined) lim.maxConnections = mc;
  if (mp !== undefined) lim.maxPendingRequests = mp;
  if (mr !== undefined) lim.maxConcurrentRequests = mr;
  const config: UpstreamConfig = {
    listenerJson: d.str(m, "envoy_listener_json"),
    clusterJson: d.str(m, "envoy_cluster_json"),
    protocol: d.str(m, "protocol").toLowerCase(),
    connectTimeoutMs: d.int(m, "connect_timeout_ms") ?? 0,
    limits: lim,
    passiveHealthCheck: { intervalMs: d.durationMs(phc, "interval"), maxFailures: Math.max(0, d.int(phc, "max_failures") ?? 0) },
  };
  return { config, warnings: d.warnings };
}

/** ParseUpstreamConfig's defaults: protocol "tcp", connect timeout 5000 ms. */
export function withUpstreamDefaults(c: UpstreamConfig): UpstreamConfig {
  return { ...c, protocol: c.protocol || "tcp", connectTimeoutMs: c.connectTimeoutMs < 1 ? 5000 : c.connectTimeoutMs };
}

/** True for the protocols served by http_connection_manager. */
export function isHttpProtocol(protocol: string): boolean {
  return protocol === "http" || protocol === "http2" || protocol === "grpc";
}
