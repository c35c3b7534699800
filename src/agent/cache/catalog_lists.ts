/**
 * List-shaped cache types a mesh gateway (and a proxyless client) watches: the service names of a
 * datacenter's catalog (Consul's agent/cache-types/catalog_list_services.go, `Catalog.ListServices`),
 * the config entries of one kind (config_entry.go's list form, `ConfigEntry.List`), both blocking; and
 * the known datacenters (catalog_datacenters.go), which do not block: proxycfg asks them with a 30 s
 * MaxAge (`datacentersWatchID`), so a watched entry is polled every 30 s and reported only when the list
 * differs.
 */
import type { ConfigEntry } from "../../model/index.ts";
import { blockingQueryType } from "./blocking_query.ts";
import { blockingRead, type StateReader } from "./state_reader.ts";
import type { CacheType, FetchResult } from "./types.ts";

/** The service names of a datacenter's catalog; `datacenter` undefined = the agent's own. */
export interface CatalogServicesRequest {
  readonly datacenter?: string;
}

/** The catalog's service names, sorted. */
export function catalogServicesType(reader: StateReader): CacheType<CatalogServicesRequest, readonly string[]> {
  return blockingQueryType({
    name: "catalog-services",
    key: (r) => r.datacenter ?? "",
    async query(r, options) {
      const res = await blockingRead(reader, { type: "catalog-services" }, r.datacenter, options);
      return { index: res.index, value: Object.keys(res.value).sort() };
    },
  });
}

/** The config entries of one kind ("service-resolver", ...) in a datacenter. */
export interface ConfigEntriesRequest {
  readonly datacenter?: string;
  readonly kind: string;
}

/** The entries of `kind`, sorted by name. */
export function configEntriesType(reader: StateReader): CacheType<ConfigEntriesRequest, readonly ConfigEntry[]> {
  return blockingQueryType({
    name: "config-entries",
    key: (r) => JSON.stringify([r.datacenter ?? "", r.kind.toLowerCase()]),
    query: (r, options) => blockingRead(reader, { type: "config-entry-list", kind: r.kind }, r.datacenter, options),
  });
}

/** Consul 1.8 proxycfg's MaxAge for the datacenter list of a mesh gateway. */
export const DATACENTERS_POLL_MS = 30_000;

/** The request of the datacenter list: there is only one list. */
export type DatacentersRequest = Record<never, never>;

/**
 * The known datacenters (the WAN pool's, or the servers' answer on a client agent), sorted by name;
 * polled every {@link DATACENTERS_POLL_MS}, the index moving only when the list changes.
 */
export function datacentersType(datacenters: () => Promise<readonly string[]> | readonly string[]): CacheType<DatacentersRequest, readonly string[]> {
  return {
    name: "catalog-datacenters",
    key: () => "",
    async fetch(_r, _options, prev?: FetchResult<readonly string[]>) {
      const value = [...new Set(await datacenters())].sort();
      if (!prev) return { value, index: 1 };
      return value.join("\u0000") === prev.value.join("\u0000") ? prev : { value, index: prev.index + 1 };
    },
    refresh: false,
    refreshTimerMs: DATACENTERS_POLL_MS,
  };
}
