/**
 * The config entries a chain compiles from (Consul's structs.DiscoveryChainConfigEntries), indexed by
 * service name. Causeway, like Consul OSS, has one namespace, so entries are keyed by name alone.
 */
import type {
  ConfigEntry,
  ProxyConfigEntry,
  ServiceConfigEntry,
  ServiceResolverConfigEntry,
  ServiceRouterConfigEntry,
  ServiceSplitterConfigEntry,
} from "../config_entries/index.ts";

export interface DiscoveryChainSet {
  readonly routers: ReadonlyMap<string, ServiceRouterConfigEntry>;
  readonly splitters: ReadonlyMap<string, ServiceSplitterConfigEntry>;
  readonly resolvers: ReadonlyMap<string, ServiceResolverConfigEntry>;
  /** service-defaults by service name. */
  readonly services: ReadonlyMap<string, ServiceConfigEntry>;
  /** proxy-defaults "global", if any. */
  readonly globalProxy: ProxyConfigEntry | undefined;
}

/** Indexes entries of any kinds; for a repeated kind+name the last one wins. */
export function discoveryChainSet(entries: Iterable<ConfigEntry>): DiscoveryChainSet {
  const routers = new Map<string, ServiceRouterConfigEntry>();
  const splitters = new Map<string, ServiceSplitterConfigEntry>();
  const resolvers = new Map<string, ServiceResolverConfigEntry>();
  const services = new Map<string, ServiceConfigEntry>();
  let globalProxy: ProxyConfigEntry | undefined;
  for (const e of entries) {
    switch (e.Kind) {
      case "service-router":
        routers.set(e.Name, e);
        break;
      case "service-splitter":
        splitters.set(e.Name, e);
        break;
      case "service-resolver":
        resolvers.set(e.Name, e);
        break;
      case "service-defaults":
        services.set(e.Name, e);
        break;
      case "proxy-defaults":
        if (e.Name === "global") globalProxy = e;
        break;
    }
  }
  return { routers, splitters, resolvers, services, globalProxy };
}

/**
 * The other services an entry sends traffic to (Entry.ListRelatedServices, which feeds the state store's
 * "link" index): route destinations, split services, redirect and failover services. Sorted, without the
 * entry's own name.
 */
export function relatedServices(entry: ConfigEntry): string[] {
  const out = new Set<string>();
  switch (entry.Kind) {
    case "service-router":
      for (const r of entry.Routes) if (r.Destination?.Service) out.add(r.Destination.Service);
      break;
    case "service-splitter":
      for (const s of entry.Splits) if (s.Service) out.add(s.Service);
      break;
    case "service-resolver":
      if (entry.Redirect?.Service) out.add(entry.Redirect.Service);
      for (const f of Object.values(entry.Failover ?? {})) if (f.Service) out.add(f.Service);
      break;
    default:
      break;
  }
  out.delete(entry.Name);
  return [...out].sort();
}
