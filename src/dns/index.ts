/** The DNS interface (issue 20): Consul's DNS on port 8600 (src/dns/BEHAVIOUR.md). */
export {
  decodeMessage, DnsClass, DnsRcode, DnsType, DnsWireError, encodeMessage, type DnsFlags, type DnsMessage, type DnsQuestion, type DnsRecord, type DnsRecordData,
  type SoaData, type SrvData,
} from "./wire.ts";
export { canonicalDomain, DNS_DEFAULTS, recursorAddress, serviceTtlFor, type DnsConfig, type DnsSoaConfig } from "./config.ts";
export { createDnsResolver, type DnsAnswer, type DnsCatalog, type DnsResolver, type PreparedQueryAnswer } from "./resolver.ts";
export { createRecursors, type Recursors } from "./recursors.ts";
export { startDnsServer, type DnsServer, type DnsServerOptions, type DnsServerStats } from "./server.ts";
