/**
 * What a question under the DNS domain asks for (Consul's dispatch; src/dns/BEHAVIOUR.md section 1):
 * `<node>.node[.<dc>]`, `[<tag>.]<service>.service[.<dc>]`, RFC 2782 `_<service>._<tag|tcp>[.service][.<dc>]`,
 * `<service>.connect`, `<service>.ingress`, `<query>.query[.<dc>]`, `<hex>.addr`. Pure.
 *
 * The name is lower-cased, the longest configured domain it ends in (at a label boundary) is cut off,
 * and the labels are scanned from the right: the first kind keyword decides, the labels left of it are
 * the query, those right of it the locality (none: this datacenter; one: a datacenter; `<dc>.dc`).
 * With qtype SRV a label starting with "_" also starts an RFC 2782 service name. Anything else is
 * "invalid", which the resolver answers NXDOMAIN.
 */
import { formatIp } from "../lib/index.ts";
import { DnsType } from "./wire.ts";

export type DnsLookup =
  | { readonly kind: "node"; readonly node: string; readonly datacenter?: string }
  | { readonly kind: "service"; readonly service: string; readonly tag?: string; readonly datacenter?: string }
  | { readonly kind: "connect" | "ingress"; readonly service: string; readonly datacenter?: string }
  | { readonly kind: "query"; readonly query: string; readonly datacenter?: string }
  /** `address` undefined: hex of a length that is neither IPv4 nor IPv6 (answered NOERROR, empty). */
  | { readonly kind: "addr"; readonly address: string | undefined; readonly family: 4 | 6 | undefined }
  | { readonly kind: "invalid" };

export interface ParsedName {
  readonly lookup: DnsLookup;
  /** The domain suffix as the question spelled it ("consul", "Consul", the alt domain), for names we generate. */
  readonly responseDomain: string;
  /** The question without its domain, lower case ("web.service"). */
  readonly relative: string;
}

const KINDS = new Set(["service", "connect", "ingress", "node", "query", "addr"]);
const INVALID: DnsLookup = { kind: "invalid" };

/** The configured domains ("consul.", alt or ""), lower case without the dot, longest first: what `domainIn` matches. */
export function servedDomains(domain: string, altDomain: string): string[] {
  return [domain, altDomain].filter((d) => d !== "").map((d) => d.replace(/\.$/, "")).sort((a, b) => b.length - a.length);
}

/** The domain (of `servedDomains`) `name` lies in, at a label boundary, spelled as the name spells it; undefined for other names. */
export function domainIn(name: string, domains: readonly string[]): string | undefined {
  const bare = name.replace(/\.$/, "");
  const lower = bare.toLowerCase();
  const d = domains.find((x) => lower === x || lower.endsWith(`.${x}`));
  return d === undefined ? undefined : bare.slice(bare.length - d.length);
}

/** `domain` and `altDomain` lower case with a trailing dot ("consul."), altDomain "" when unset; or the served list precomputed. */
export function parseQueryName(qname: string, qtype: number, domain: string, altDomain: string, domains = servedDomains(domain, altDomain)): ParsedName {
  const name = qname.replace(/\.$/, "");
  const lower = name.toLowerCase();
  const responseDomain = domainIn(name, domains);
  if (responseDomain === undefined) return { lookup: INVALID, responseDomain: domain.replace(/\.$/, ""), relative: lower };
  const relative = lower.length === responseDomain.length ? "" : lower.slice(0, lower.length - responseDomain.length - 1);
  return { lookup: lookupOf(relative === "" ? [] : relative.split("."), qtype), responseDomain, relative };
}

function lookupOf(labels: readonly string[], qtype: number): DnsLookup {
  for (let i = labels.length - 1; i >= 0; i--) {
    const label = labels[i]!;
    if (KINDS.has(label)) return byKind(label, labels.slice(0, i), labels.slice(i + 1));
    if (qtype === DnsType.SRV && label.startsWith("_")) return byKind("service", labels.slice(0, i + 1), labels.slice(i + 1));
  }
  return INVALID;
}

/** The datacenter of a locality: none (this one), `<dc>`, or `<dc>.dc`; null when not a locality. */
function datacenterOf(suffixes: readonly string[], pairs: boolean): { datacenter?: string } | null {
  if (suffixes.length === 0) return {};
  if (suffixes.length === 1) return { datacenter: suffixes[0]! };
  if (pairs && suffixes.length === 2 && suffixes[1] === "dc") return { datacenter: suffixes[0]! };
  return null;
}

function byKind(kind: string, parts: readonly string[], suffixes: readonly string[]): DnsLookup {
  if (kind === "addr") return parts.length === 1 ? addrLookup(parts[0]!) : INVALID;
  if (parts.length === 0) return INVALID;
  const where = datacenterOf(suffixes, kind !== "query");
  if (where === null) return INVALID;
  switch (kind) {
    case "node":
      return { kind: "node", node: parts.join("."), ...where };
    case "connect":
    case "ingress":
      return { kind, service: parts.at(-1)!, ...where };
    case "query": {
      const rfc = parts.length >= 2 && parts[0]!.startsWith("_") && parts.at(-1)!.startsWith("_");
      const query = rfc ? parts.slice(0, -1).join(".").slice(1) : parts.join(".");
      return query === "" ? INVALID : { kind: "query", query, ...where };
    }
    default: {
      if (parts.length === 2 && parts[0]!.startsWith("_") && parts[1]!.startsWith("_")) {
        const service = parts[0]!.slice(1);
        const tag = parts[1]!.slice(1);
        if (service === "") return INVALID;
        return { kind: "service", service, ...(tag === "tcp" || tag === "" ? {} : { tag }), ...where };
      }
      const tag = parts.slice(0, -1).join(".");
      return { kind: "service", service: parts.at(-1)!, ...(tag === "" ? {} : { tag }), ...where };
    }
  }
}

function addrLookup(hex: string): DnsLookup {
  if (hex.length % 2 !== 0 || !/^[0-9a-f]*$/.test(hex)) return INVALID;
  const family = hex.length === 8 ? 4 : hex.length === 32 ? 6 : undefined;
  if (family === undefined) return { kind: "addr", family: undefined, address: undefined };
  const bytes = Uint8Array.from({ length: hex.length / 2 }, (_, i) => parseInt(hex.slice(2 * i, 2 * i + 2), 16));
  return { kind: "addr", family, address: formatIp(bytes) };
}
