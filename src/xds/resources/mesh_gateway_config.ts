/**
 * The mesh gateway's options in its opaque `Proxy.Config` (Consul 1.8 agent/xds/config.go GatewayConfig,
 * ParseGatewayConfig): bind options under their `envoy_gateway_*` names or the `envoy_mesh_gateway_*`
 * aliases, `envoy_dns_discovery_type` and `connect_timeout_ms` (default 5000). Decoding is weak like
 * mapstructure's WeaklyTypedInput; a value that cannot be decoded is reported in `warnings` and the
 * default used (Consul logs and continues).
 */
import type { ServiceAddress } from "../../model/index.ts";

type Opaque = Readonly<Record<string, unknown>> | undefined;

export interface GatewayConfig {
  /** `envoy_gateway_bind_tagged_addresses`: one listener per tagged address too. */
  readonly bindTaggedAddresses: boolean;
  /** `envoy_gateway_bind_addresses`: named extra listeners. */
  readonly bindAddresses: Readonly<Record<string, ServiceAddress>>;
  /** `envoy_gateway_no_default_bind`: no `default` listener on the registration's address. */
  readonly noDefaultBind: boolean;
  /** Lower-cased `envoy_dns_discovery_type`: "strict_dns" picks STRICT_DNS for hostname clusters. */
  readonly dnsDiscoveryType: string;
  /** `connect_timeout_ms`, 5000 when unset or below 1. */
  readonly connectTimeoutMs: number;
}

/** ParseGatewayConfig. */
export function parseGatewayConfig(m: Opaque): { config: GatewayConfig; warnings: string[] } {
  const warnings: string[] = [];
  const pick = (key: string): unknown => m?.[`envoy_gateway_${key}`] ?? m?.[`envoy_mesh_gateway_${key}`];
  const bool = (key: string, v: unknown): boolean => {
    if (v === undefined || v === null) return false;
    if (typeof v === "boolean") return v;
    if (typeof v === "number") return v !== 0;
    if (typeof v === "string" && /^(1|t|true|0|f|false)$/i.test(v)) return /^(1|t|true)$/i.test(v);
    if (typeof v === "string" && v === "") return false;
    warnings.push(`Proxy.Config: '${key}' expected a bool, got ${JSON.stringify(v)}`);
    return false;
  };
  const int = (key: string, v: unknown): number => {
    if (v === undefined || v === null) return 0;
    if (typeof v === "number" && Number.isFinite(v)) return Math.trunc(v);
    if (typeof v === "string" && /^[+-]?\d+$/.test(v.trim())) return Number.parseInt(v.trim(), 10);
    warnings.push(`Proxy.Config: '${key}' expected an integer, got ${JSON.stringify(v)}`);
    return 0;
  };
  const bindAddresses: Record<string, ServiceAddress> = {};
  const rawBinds = unwrap(pick("bind_addresses"));
  if (rawBinds !== undefined && (typeof rawBinds !== "object" || rawBinds === null || Array.isArray(rawBinds))) {
    warnings.push(`Proxy.Config: 'envoy_gateway_bind_addresses' expected an object, got ${JSON.stringify(rawBinds)}`);
  } else if (rawBinds) {
    for (const [name, raw] of Object.entries(rawBinds as Record<string, unknown>)) {
      const a = unwrap(raw);
      if (typeof a !== "object" || a === null || Array.isArray(a)) {
        warnings.push(`Proxy.Config: bind address '${name}' expected an object, got ${JSON.stringify(raw)}`);
        continue;
      }
      const rec = a as Record<string, unknown>;
      const address = rec["Address"] ?? rec["address"];
      bindAddresses[name] = { Address: typeof address === "string" ? address : "", Port: int(`${name}.Port`, rec["Port"] ?? rec["port"]) };
    }
  }
  const dns = m?.["envoy_dns_discovery_type"];
  const timeout = int("connect_timeout_ms", m?.["connect_timeout_ms"]);
  const config: GatewayConfig = {
    bindTaggedAddresses: bool("envoy_gateway_bind_tagged_addresses", pick("bind_tagged_addresses")),
    bindAddresses,
    noDefaultBind: bool("envoy_gateway_no_default_bind", pick("no_default_bind")),
    dnsDiscoveryType: typeof dns === "string" ? dns.toLowerCase() : "",
    connectTimeoutMs: timeout < 1 ? 5000 : timeout,
  };
  return { config, warnings };
}

/** HCL decoding may wrap a block in a one-element list (decode.HookWeakDecodeFromSlice). */
function unwrap(v: unknown): unknown {
  return Array.isArray(v) && v.length === 1 ? v[0] : v;
}
