/**
 * The agent's DNS interface: the resolver of src/dns over this agent's way to the replicated state,
 * with the agent's default token (as Consul's DNS uses it), served on the client address.
 */
import { canonicalDomain, createDnsResolver, startDnsServer, type DnsCatalog, type DnsConfig, type DnsServer } from "../dns/index.ts";
import { executePreparedQuery } from "../connect/index.ts";
import type { StateAccess } from "../http/index.ts";
import { shuffled, type Clock, type Logger, type Rng } from "../platform/index.ts";
import type { MetricsRegistry } from "../telemetry/index.ts";
import type { RuntimeConfig } from "./config.ts";

/** The resolver's settings from the agent's config. */
export function dnsConfigOf(config: RuntimeConfig): DnsConfig {
  const { allowStale: _, ...d } = config.dns;
  return { ...d, domain: canonicalDomain(config.domain), altDomain: canonicalDomain(d.altDomain), datacenter: config.datacenter };
}

/**
 * Catalog reads for the resolver; no token given, so the state access uses the agent's default token.
 * `agent` is who asks prepared queries (this agent's datacenter and node); `datacenters` every known
 * datacenter, nearest first, for their failover.
 */
export function dnsCatalogOver(
  state: StateAccess, allowStale: boolean, agent: { readonly datacenter: string; readonly node: string }, datacenters: () => Promise<readonly string[]>,
): DnsCatalog {
  const options = (datacenter: string) => ({ datacenter, consistency: allowStale ? "stale" as const : "default" as const, minIndex: 0, maxWaitMs: 0 });
  return {
    async nodeServices(node, datacenter) {
      return (await state.read({ type: "catalog-node-services", node }, options(datacenter))).value;
    },
    async serviceNodes(service, tag, connect, datacenter) {
      const q = { type: "health-service-nodes" as const, service, passingOnly: false, connect, ...(tag === undefined ? {} : { tags: [tag] }) };
      return (await state.read(q, options(datacenter))).value;
    },
    async nodes(datacenter) {
      return (await state.read({ type: "catalog-nodes" }, options(datacenter))).value;
    },
    async preparedQuery(idOrName, datacenter, sourceIp) {
      const dc = datacenter ?? agent.datacenter;
      const who = { Datacenter: agent.datacenter, Segment: "", Node: agent.node, Ip: "" };
      const source = { Datacenter: dc, Segment: "", Node: "", Ip: sourceIp };
      const outcome = await executePreparedQuery({
        local: async () => (await state.read({ type: "prepared-query-execute", idOrName, agent: who, source, limit: 0, connect: false }, options(dc))).value,
        datacenters,
        remote: async (remoteDc, query) => (await state.read({ type: "prepared-query-execute-remote", query, limit: 0, connect: false }, options(remoteDc))).value,
      });
      if (outcome.type === "not-found") return null;
      if (outcome.type === "error") throw new Error(outcome.error);
      const r = outcome.value;
      return { service: r.Service, datacenter: r.Datacenter, nodes: r.Nodes, ttl: r.DNS?.TTL ?? "" };
    },
  };
}

export function startAgentDns(o: {
  readonly config: RuntimeConfig; readonly state: StateAccess; readonly datacenters: () => Promise<readonly string[]>;
  readonly clock: Clock; readonly rng: Rng; readonly logger: Logger; readonly metrics: MetricsRegistry;
}): Promise<DnsServer> {
  const cfg = dnsConfigOf(o.config);
  const catalog = dnsCatalogOver(o.state, o.config.dns.allowStale, { datacenter: o.config.datacenter, node: o.config.nodeName }, o.datacenters);
  const resolver = createDnsResolver({ config: cfg, catalog, rng: o.rng, nowSeconds: () => Math.floor(o.clock.now() / 1000) });
  // Consul's names: consul.dns.domain_query and consul.dns.ptr_query (ms), by node.
  const node = [["node", o.config.nodeName]] as const;
  const timings = { domain: o.metrics.sample("dns.domain_query", node), ptr: o.metrics.sample("dns.ptr_query", node) };
  const malformed = o.metrics.counter("dns.malformed_requests", node);
  return startDnsServer({
    host: o.config.clientAddr, port: o.config.ports.dns, resolver, config: cfg, logger: o.logger, clock: o.clock, shuffle: (xs) => shuffled(xs, o.rng),
    onAnswered: (kind, ms) => timings[kind].observe(ms), onMalformed: () => malformed.add(),
  });
}
