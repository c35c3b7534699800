/**
 * The DNS interface's settings (Consul's `domain`, `alt_domain`, `recursors` and `dns_config` block;
 * src/dns/BEHAVIOUR.md section 6), with Consul's defaults, and the service TTL rule.
 */
import { ownEntry } from "../lib/index.ts";

export interface DnsSoaConfig {
  readonly refresh: number;
  readonly retry: number;
  readonly expire: number;
  /** Also the SOA record's own TTL. */
  readonly minTtl: number;
}

export interface DnsConfig {
  /** Lower case, fully qualified: "consul.". */
  readonly domain: string;
  /** Lower case, fully qualified, or "" when unset. */
  readonly altDomain: string;
  /** This agent's datacenter and node name. */
  readonly datacenter: string;
  /** Seconds. */
  readonly nodeTtl: number;
  /** Service name, or a prefix ending in "*" ("*" alone: every service) -> seconds. */
  readonly serviceTtl: Readonly<Record<string, number>>;
  readonly onlyPassing: boolean;
  readonly udpAnswerLimit: number;
  /** 0: no limit. */
  readonly aRecordLimit: number;
  readonly enableTruncate: boolean;
  readonly enableAdditionalNodeMetaTxt: boolean;
  readonly disableCompression: boolean;
  readonly soa: DnsSoaConfig;
  /** "host:port" of each upstream resolver, in order. */
  readonly recursors: readonly string[];
  readonly recursorTimeoutMs: number;
  readonly recursorStrategy: "sequential" | "random";
}

export const DNS_DEFAULTS = {
  domain: "consul.",
  altDomain: "",
  nodeTtl: 0,
  serviceTtl: {},
  onlyPassing: false,
  udpAnswerLimit: 3,
  aRecordLimit: 0,
  enableTruncate: false,
  enableAdditionalNodeMetaTxt: true,
  disableCompression: false,
  soa: { refresh: 3600, retry: 600, expire: 86400, minTtl: 0 },
  recursors: [],
  recursorTimeoutMs: 2000,
  recursorStrategy: "sequential",
} as const satisfies Omit<DnsConfig, "datacenter">;

/** A domain as Consul keeps it: lower case with one trailing dot ("Consul" -> "consul."). */
export function canonicalDomain(d: string): string {
  const t = d.trim().toLowerCase();
  if (t === "") return "";
  return t.endsWith(".") ? t : `${t}.`;
}

/**
 * Consul's GetTTLForService: the exact name's TTL, else the longest "prefix*" key that matches, else
 * the "*" key, else 0. `service` is compared as given (the lookup's lower-cased name).
 */
export function serviceTtlFor(ttls: Readonly<Record<string, number>>, service: string): number {
  const exact = ownEntry(ttls, service);
  if (exact !== undefined) return exact;
  let best: number | undefined;
  let bestLen = -1;
  for (const [key, ttl] of Object.entries(ttls)) {
    if (!key.endsWith("*")) continue;
    const prefix = key.slice(0, -1);
    if (service.startsWith(prefix) && prefix.length > bestLen) {
      best = ttl;
      bestLen = prefix.length;
    }
  }
  return best ?? 0;
}

/** "8.8.8.8" -> "8.8.8.8:53", "[::1]:5353" and "::1" handled (Consul's recursorAddr, without templates). */
export function recursorAddress(addr: string): string {
  const a = addr.trim();
  if (a.startsWith("[")) return a.includes("]:") ? a : `${a}:53`;
  const colons = a.split(":").length - 1;
  if (colons === 0) return `${a}:53`;
  if (colons === 1) return a;
  return `[${a}]:53`; // a bare IPv6 literal
}
