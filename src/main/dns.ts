/**
 * The agent's DNS interface: the resolver of src/dns over this agent's way to the replicated state,
 * with the agent's default token (as Consul's DNS uses it), served on the client address.
 */
import { canonicalDomain, createDnsResolver, createRecursors, startDnsServer, type DnsCatalog, type DnsConfig, type DnsServer } from "../dns/index.ts";
import { executePreparedQuery } from "../connect/index.ts";
import type { StateAccess } from "../http/index.ts";
import type { ReadQuery, ReadValue } from "../model/index.ts";
import { shuffled, type Clock, type Logger, type Rng } from "../platform/index.ts";
import type { MetricsRegistry } from "../telemetry/index.ts";
import type { RuntimeConfig } from "./config.ts";

/** The resolver's settings from the agent's config. */
export function dnsConfigOf(config: RuntimeConfig): DnsConfig {
  const { allowStale: _stale, maxStaleMs: _maxStale, ...d } = config.dns;
  return { ...d, domain: canonicalDomain(config.domain), altDomain: canonicalDomain(d.altDomain), datacenter: config.datacenter };
}

/**
 * Catalog reads for the resolver; no token given, so the state access uses the agent's default token.
 * `agent` is who asks prepared queries (this agent's datacenter and node); `datacenters` every known
 * datacenter, nearest first, for their failover.
 */
export function dnsCatalogOver(
  state: StateAccess, settings: { readonly allowStale: boolean; readonly maxStaleMs: number }, agent: { readonly datacenter: string; readonly node: string },
  datacenters: () => Promise<readonly string[]>, onStale?: () => void,
): DnsCatalog {
  const options = (datacenter: string, consistency: "stale" | "default") => ({ datacenter, consistency, minIndex: 0, maxWaitMs: 0 });
  /**
   * Consul's DNS reads: stale when allow_stale (any server answers), redone with the leader when the
   * server that answered last heard from it longer than max_stale ago; a read more than 5 s stale is
   * reported (consul.dns.stale_queries).
   */
  const read = async <Q extends ReadQuery>(q: Q, datacenter: string): Promise<ReadValue<Q>> => {
    if (!settings.allowStale) return (await state.read(q, options(datacenter, "default"))).value;
    const r = await state.read(q, options(datacenter, "stale"));
    if (r.meta.lastContactMs > settings.maxStaleMs) return (await state.read(q, options(datacenter, "default"))).value;
    if (r.meta.lastContactMs > 5_000) onStale?.();
    return r.value;
  };
  return {
    async nodeServices(node, datacenter) {
      return read({ type: "catalog-node-services", node }, datacenter);
    },
    async serviceNodes(service, tag, connect, datacenter) {
      const q = { type: "health-service-nodes" as const, service, passingOnly: false, connect, ...(tag === undefined ? {} : { tags: [tag] }) };
      return read(q, datacenter);
    },
    async nodes(datacenter) {
      return read({ type: "catalog-nodes" }, datacenter);
    },
    async servicesAt(address, datacenter) {
      return read({ type: "catalog-service-nodes-by-address", address }, datacenter);
    },
    async preparedQuery(idOrName, datacenter, sourceIp) {
      const dc = datacenter ?? agent.datacenter;
      const who = { Datacenter: agent.datacenter, Segment: "", Node: agent.node, Ip: "" };
      const source = { Datacenter: dc, Segment: "", Node: "", Ip: sourceIp };
      const outcome = await executePreparedQuery({
        local: () => read({ type: "prepared-query-execute", idOrName, agent: who, source, limit: 0, connect: false }, dc),
        datacenters,
        remote: (remoteDc, query) => read({ type: "prepared-query-execute-remote", query, limit: 0, connect: false }, remoteDc),
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
  const node = [["node", o.config.nodeName]] as const;
  const stale = o.metrics.counter("dns.stale_queries", node);
  const catalog = dnsCatalogOver(o.state, o.config.dns, { datacenter: o.config.datacenter, node: o.config.nodeName }, o.datacenters, () => stale.add());
  const upstream = createRecursors({ config: cfg, clock: o.clock, logger: o.logger, shuffle: (xs) => shuffled(xs, o.rng) });
  const resolver = createDnsResolver({ config: cfg, catalog, rng: o.rng, nowSeconds: () => Math.floor(o.clock.now() / 1000), external: (name) => upstream.lookup(name) });
  // Consul's names: consul.dns.domain_query and consul.dns.ptr_query (ms), by node.
  const timings = { domain: o.metrics.sample("dns.domain_query", node), ptr: o.metrics.sample("dns.ptr_query", node) };
  const malformed = o.metrics.counter("dns.malformed_requests", node);
  return startDnsServer({
    host: o.config.clientAddr, port: o.config.ports.dns, resolver, config: cfg, logger: o.logger, clock: o.clock, shuffle: (xs) => shuffled(xs, o.rng),
    onAnswered: (kind, ms) => timings[kind].observe(ms), onMalformed: () => malformed.add(),
  });
}
