/**
 * The agent's DNS interface: the resolver of src/dns over this agent's way to the replicated state,
 * with the agent's default token (as Consul's DNS uses it), served on the client address.
 */
import { canonicalDomain, createDnsResolver, startDnsServer, type DnsCatalog, type DnsConfig, type DnsServer } from "../dns/index.ts";
import type { StateAccess } from "../http/index.ts";
import { shuffled, type Clock, type Logger, type Rng } from "../platform/index.ts";
import type { RuntimeConfig } from "./config.ts";

/** The resolver's settings from the agent's config. */
export function dnsConfigOf(config: RuntimeConfig): DnsConfig {
  const { allowStale: _, ...d } = config.dns;
  return { ...d, domain: canonicalDomain(config.domain), altDomain: canonicalDomain(d.altDomain), datacenter: config.datacenter };
}

/** Catalog reads for the resolver; no token given, so the state access uses the agent's default token. */
export function dnsCatalogOver(state: StateAccess, allowStale: boolean): DnsCatalog {
  const options = (datacenter: string) => ({ datacenter, consistency: allowStale ? "stale" as const : "default" as const, minIndex: 0, maxWaitMs: 0 });
  return {
    async nodeServices(node, datacenter) {
      return (await state.read({ type: "catalog-node-services", node }, options(datacenter))).value;
    },
    async serviceNodes(service, tag, connect, datacenter) {
      const q = { type: "health-service-nodes" as const, service, passingOnly: false, connect, ...(tag === undefined ? {} : { tags: [tag] }) };
      return (await state.read(q, options(datacenter))).value;
    },
  };
}

export function startAgentDns(o: { readonly config: RuntimeConfig; readonly state: StateAccess; readonly clock: Clock; readonly rng: Rng; readonly logger: Logger }): Promise<DnsServer> {
  const cfg = dnsConfigOf(o.config);
  const resolver = createDnsResolver({ config: cfg, catalog: dnsCatalogOver(o.state, o.config.dns.allowStale), rng: o.rng, nowSeconds: () => Math.floor(o.clock.now() / 1000) });
  return startDnsServer({ host: o.config.clientAddr, port: o.config.ports.dns, resolver, config: cfg, logger: o.logger, clock: o.clock, shuffle: (xs) => shuffled(xs, o.rng) });
}
