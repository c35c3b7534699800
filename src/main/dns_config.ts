/**
 * The agent's DNS settings: Consul's `dns_config` block, plus the top-level `recursors` and `alt_domain`
 * (src/dns/BEHAVIOUR.md section 6). config.ts parses the block with `parseDnsConfigBlock`; no I/O here.
 * Durations are whole seconds for TTLs (as Consul truncates them) and milliseconds for the timeout.
 */
import { DNS_DEFAULTS, type DnsConfig } from "../dns/index.ts";
import { nonNegativeDurationMs as durationMs, ownEntry } from "../lib/index.ts";

/**
 * The resolver's settings (src/dns DnsConfig) without what comes from elsewhere (domain, datacenter),
 * plus `allow_stale`. `recursors` are the top-level key (and -recursor), appended across sources;
 * `altDomain` the top-level `alt_domain` (-alt-domain) as written, "" when unset.
 */
export type DnsSettings = Omit<DnsConfig, "domain" | "datacenter"> & {
  readonly allowStale: boolean;
  /** `max_stale`: a stale read whose server last heard from its leader longer ago than this is redone consistently. */
  readonly maxStaleMs: number;
};

const { domain: _domain, ...resolverDefaults } = DNS_DEFAULTS;
/** Consul's defaults; max_stale 87600h (ten years: stale answers are always taken). */
export const DEFAULT_DNS: DnsSettings = { ...resolverDefaults, allowStale: true, maxStaleMs: 87_600 * 3_600_000 };

type Mutable<T> = { -readonly [K in keyof T]?: T[K] };

const BOOLS: Record<string, keyof DnsSettings> = {
  allow_stale: "allowStale", only_passing: "onlyPassing", enable_truncate: "enableTruncate",
  enable_additional_node_meta_txt: "enableAdditionalNodeMetaTxt", disable_compression: "disableCompression",
};
/** Keys Consul has that change only freshness or caching, accepted and without effect here (the reads go to the servers each time). */
const ACCEPTED_WITHOUT_EFFECT = new Set(["use_cache", "cache_max_age"]);

const seconds = (v: unknown): number | undefined => {
  const ms = typeof v === "string" ? durationMs(v) : undefined;
  return ms === undefined ? undefined : Math.floor(ms / 1000);
};

/** The settings one `dns_config` block sets, or a message naming the key (`dns_config.<key>`) that is unknown or wrong. */
export function parseDnsConfigBlock(block: Readonly<Record<string, unknown>>): Partial<DnsSettings> | string {
  const out: Mutable<DnsSettings> = {};
  for (const [key, v] of Object.entries(block)) {
    const name = `dns_config.${key}`;
    const field = ownEntry(BOOLS, key);
    if (field) {
      if (typeof v !== "boolean") return `${name} must be true or false, got ${JSON.stringify(v)}`;
      (out as Record<string, unknown>)[field] = v;
      continue;
    }
    if (ACCEPTED_WITHOUT_EFFECT.has(key)) {
      if (key === "use_cache" ? typeof v !== "boolean" : seconds(v) === undefined) return `${name} has the wrong type, got ${JSON.stringify(v)}`;
      continue;
    }
    switch (key) {
      case "node_ttl":
      case "max_stale":
      case "recursor_timeout": {
        const ms = typeof v === "string" ? durationMs(v) : undefined;
        if (ms === undefined) return `${name} must be a duration such as "30s", got ${JSON.stringify(v)}`;
        if (key === "node_ttl") out.nodeTtl = Math.floor(ms / 1000);
        else if (key === "max_stale") out.maxStaleMs = ms;
        else if (ms <= 0) return `${name} must be greater than 0`;
        else out.recursorTimeoutMs = ms;
        break;
      }
      case "service_ttl": {
        if (typeof v !== "object" || v === null || Array.isArray(v)) return `${name} must be an object of durations`;
        // Keys here are service names, not config keys: every name is kept as an own key, `__proto__` too
        // (an assignment `ttls[svc] = s` would drop that one silently).
        const ttls: [string, number][] = [];
        for (const [svc, d] of Object.entries(v)) {
          const s = seconds(d);
          if (s === undefined) return `${name}.${svc} must be a duration such as "10s", got ${JSON.stringify(d)}`;
          ttls.push([svc, s]);
        }
        out.serviceTtl = Object.fromEntries(ttls);
        break;
      }
      case "udp_answer_limit":
      case "a_record_limit":
        if (typeof v !== "number" || !Number.isInteger(v) || v < 0) return `${name} must be a non-negative integer, got ${JSON.stringify(v)}`;
        out[key === "udp_answer_limit" ? "udpAnswerLimit" : "aRecordLimit"] = v;
        break;
      case "recursor_strategy":
        if (v !== "sequential" && v !== "random") return `${name} must be "sequential" or "random", got ${JSON.stringify(v)}`;
        out.recursorStrategy = v;
        break;
      case "soa": {
        if (typeof v !== "object" || v === null || Array.isArray(v)) return `${name} must be an object`;
        const soa = { ...DEFAULT_DNS.soa };
        const keys: Record<string, keyof typeof soa> = { refresh: "refresh", retry: "retry", expire: "expire", min_ttl: "minTtl" };
        for (const [k, n] of Object.entries(v)) {
          const f = ownEntry(keys, k);
          if (!f) return `invalid config key ${name}.${k}`;
          if (typeof n !== "number" || !Number.isInteger(n) || n < 0 || n > 0xffffffff) return `${name}.${k} must be a non-negative integer of seconds, got ${JSON.stringify(n)}`;
          soa[f] = n;
        }
        out.soa = soa;
        break;
      }
      default:
        return `invalid config key ${name}`;
    }
  }
  return out;
}

/** Checks a recursor address ("ip", "ip:port", "[v6]:port"); a message naming it, or undefined. */
export function recursorProblem(addr: string): string | undefined {
  const m = /^\[([0-9a-fA-F:.]+)\](?::(\d+))?$/.exec(addr) ?? /^([0-9.]+)(?::(\d+))?$/.exec(addr) ?? /^([0-9a-fA-F:]+)()$/.exec(addr);
  if (!m) return `recursor "${addr}" must be an IP address with an optional port`;
  if (m[2] && (Number(m[2]) < 1 || Number(m[2]) > 65535)) return `recursor "${addr}" has an invalid port`;
  if (m[1] === "0.0.0.0" || m[1] === "::") return `recursor "${addr}" cannot be the unspecified address`;
  return undefined;
}
