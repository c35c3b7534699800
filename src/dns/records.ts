/**
 * DNS records from catalog entries (Consul's nodeLookup, serviceNodeRecords, serviceSRVRecords,
 * nodeServiceRecords, findWeight, encodeKVasRFC1464; src/dns/BEHAVIOUR.md sections 2 and 3.1). Pure.
 *
 * Names passed in are without the trailing dot. Hostname addresses become CNAME (or SRV) targets
 * without resolving them.
 */
import { isIP } from "node:net";
import { formatIp, parseIp } from "../lib/index.ts";
import type { CheckServiceNode, HealthCheck, Node } from "../model/index.ts";
import { DnsClass, DnsType, type DnsRecord } from "./wire.ts";

const rr = (name: string, type: number, ttl: number, data: DnsRecord["data"]): DnsRecord => ({ name, type, class: DnsClass.IN, ttl, data });

/** Which address families a question accepts (Consul's TranslateAddressAccept). */
export function acceptedFamilies(qtype: number): { v4: boolean; v6: boolean } {
  if (qtype === DnsType.A) return { v4: true, v6: false };
  if (qtype === DnsType.AAAA) return { v4: false, v6: true };
  return { v4: true, v6: true };
}

/**
 * Consul's TranslateAddress within a datacenter: the tagged `lan_ipv6` when IPv6 is accepted, else the
 * tagged `lan_ipv4` when IPv4 is, else the address itself.
 */
export function nodeAddress(node: Pick<Node, "Address" | "TaggedAddresses">, qtype: number): string {
  const accept = acceptedFamilies(qtype);
  const tags = node.TaggedAddresses ?? {};
  if (accept.v6 && tags["lan_ipv6"]) return tags["lan_ipv6"];
  if (accept.v4 && tags["lan_ipv4"]) return tags["lan_ipv4"];
  return node.Address;
}

/** An A or AAAA record for `ip` if the question takes its family (Consul's makeARecord), else none. */
export function addressRecord(name: string, ip: string, qtype: number, ttl: number): DnsRecord | undefined {
  const family = isIP(ip);
  const takes = (t: number) => qtype === t || qtype === DnsType.ANY || qtype === DnsType.SRV || qtype === DnsType.NS || qtype === DnsType.TXT;
  if (family === 4 && takes(DnsType.A)) return rr(name, DnsType.A, ttl, { type: "A", address: ip });
  if (family === 6 && takes(DnsType.AAAA)) return rr(name, DnsType.AAAA, ttl, { type: "AAAA", address: ip });
  return undefined;
}

/** RFC 1464 `key=value` as Consul writes node meta: "rfc1035-" keys give the bare value. */
export function encodeMetaTxt(key: string, value: string): string {
  if (key.toLowerCase().startsWith("rfc1035-")) return value;
  const k = key.replace(/`/g, "``").replace(/=/g, "`=").replace(/^ +| +$/g, (m) => "` ".repeat(m.length));
  return `${k}=${value.replace(/`/g, "``")}`;
}

/** One TXT record per meta key, sorted by key (Consul's order is Go map order, i.e. none). */
export function metaTxtRecords(name: string, meta: Readonly<Record<string, string>>, ttl: number): DnsRecord[] {
  return Object.keys(meta).sort().map((k) => rr(name, DnsType.TXT, ttl, { type: "TXT", strings: [encodeMetaTxt(k, meta[k]!)] }));
}

/** Consul's CheckServiceNodes.Filter: drop any instance with a critical check (with onlyPassing, any non-passing one). */
export function healthy(nodes: readonly CheckServiceNode[], onlyPassing: boolean): CheckServiceNode[] {
  return nodes.filter((n) => n.Checks.every((c) => c.Status === "passing" || (!onlyPassing && c.Status === "warning")));
}

/** Consul's findWeight: Weights.Warning when a check warns, Weights.Passing otherwise (both default 1). */
export function srvWeight(n: CheckServiceNode): number {
  const w = n.Service.Weights ?? { Passing: 1, Warning: 1 };
  const checks: readonly HealthCheck[] = n.Checks.filter((c) => c.ServiceName === "" || c.ServiceName === n.Service.Service);
  if (checks.some((c) => c.Status === "critical")) return 0;
  if (checks.some((c) => c.Status === "warning")) return w.Warning;
  return w.Passing;
}

export interface InstanceRecords {
  /** For A/AAAA/ANY/TXT questions: the address record, or CNAME to a hostname. */
  readonly answer: DnsRecord | undefined;
  /** For SRV questions. */
  readonly srv: DnsRecord | undefined;
  /** The SRV target's address record (Additional). */
  readonly extra: DnsRecord | undefined;
}

/**
 * One service instance's records (Consul's nodeServiceRecords): the service address when set (an IP:
 * SRV target `<hex>.addr.<dc>.<domain>`), else the node's (target `<node>.node.<dc>.<domain>`); a
 * hostname becomes a CNAME, or the SRV target itself.
 */
export function instanceRecords(o: {
  readonly instance: CheckServiceNode; readonly qname: string; readonly qtype: number; readonly ttl: number;
  readonly datacenter: string; readonly domain: string;
}): InstanceRecords {
  const { instance: n, qname, qtype, ttl, datacenter, domain } = o;
  const svcAddr = n.Service.Address;
  const nodeAddr = nodeAddress(n.Node, qtype);
  const srv = (target: string) => rr(qname, DnsType.SRV, ttl, { type: "SRV", srv: { priority: 1, weight: srvWeight(n), port: n.Service.Port, target } });
  const byIp = (ip: string, target: string): InstanceRecords => {
    const answer = addressRecord(qname, ip, qtype, ttl);
    const extra = addressRecord(target, ip, qtype, ttl);
    return { answer, srv: qtype === DnsType.SRV && extra ? srv(target) : undefined, extra };
  };
  const byHost = (host: string): InstanceRecords => ({ answer: rr(qname, DnsType.CNAME, ttl, { type: "CNAME", name: host }), srv: srv(host), extra: undefined });
  if (svcAddr === "" || svcAddr.replace(/\.$/, "").toLowerCase() === qname.toLowerCase()) {
    if (nodeAddr === "") return { answer: undefined, srv: undefined, extra: undefined };
    if (!isIP(nodeAddr)) return byHost(nodeAddr);
    return nodeAddr !== n.Node.Address ? byIp(nodeAddr, addrName(nodeAddr, datacenter, domain)) : byIp(nodeAddr, `${n.Node.Node}.node.${datacenter}.${domain}`);
  }
  return isIP(svcAddr) ? byIp(svcAddr, addrName(svcAddr, datacenter, domain)) : byHost(svcAddr);
}

/** `<hex>.addr.<dc>.<domain>`: the address as lower-case hex, 8 digits for IPv4, 32 for IPv6. */
export function addrName(ip: string, datacenter: string, domain: string): string {
  return `${ipHex(ip)}.addr.${datacenter}.${domain}`;
}

/** An address's bytes as lower-case hex (8 digits for IPv4, 32 for IPv6); "" for anything else. */
function ipHex(ip: string): string {
  let bytes: Uint8Array;
  try {
    bytes = parseIp(ip);
  } catch {
    return "";
  }
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

/** The canonical text of an address ("::0:1" -> "::1"), or undefined when it is not one. */
export function canonicalIp(text: string): string | undefined {
  try {
    return formatIp(parseIp(text));
  } catch {
    return undefined;
  }
}

/** The address an `in-addr.arpa` or `ip6.arpa` name spells ("4.3.2.1.in-addr.arpa" -> "1.2.3.4"), or undefined. */
export function reverseLookupAddress(name: string): string | undefined {
  const lower = name.replace(/\.$/, "").toLowerCase();
  if (lower.endsWith(".in-addr.arpa")) {
    const octets = lower.slice(0, -".in-addr.arpa".length).split(".").reverse();
    const ip = octets.join(".");
    return octets.length === 4 && isIP(ip) === 4 ? ip : undefined;
  }
  if (lower.endsWith(".ip6.arpa")) {
    const nibbles = lower.slice(0, -".ip6.arpa".length).split(".").reverse();
    if (nibbles.length !== 32 || !nibbles.every((n) => /^[0-9a-f]$/.test(n))) return undefined;
    const hex = nibbles.join("");
    const bytes = Uint8Array.from({ length: 16 }, (_, i) => parseInt(hex.slice(2 * i, 2 * i + 2), 16));
    return formatIp(bytes);
  }
  return undefined;
}
