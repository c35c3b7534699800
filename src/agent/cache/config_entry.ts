/**
 * One config entry as a cache type (Consul's agent/cache-types/config_entry.go, `ConfigEntry.Get`): a
 * blocking read of an entry by kind and name; null while it does not exist.
 */
import type { ConfigEntry } from "../../model/index.ts";
import { blockingQueryType } from "./blocking_query.ts";
import { blockingRead, type StateReader } from "./state_reader.ts";
import type { CacheType } from "./types.ts";

export interface ConfigEntryRequest {
  readonly datacenter?: string;
  /** "proxy-defaults", "service-defaults", ... */
  readonly kind: string;
  readonly name: string;
}

/** The config-entry type over `reader`. */
export function configEntryType(reader: StateReader): CacheType<ConfigEntryRequest, ConfigEntry | null> {
  return blockingQueryType({
    name: "config-entry",
    key: (r) => JSON.stringify([r.datacenter ?? "", r.kind.toLowerCase(), r.name.toLowerCase()]),
    query: (r, options) => blockingRead(reader, { type: "config-entry-get", kind: r.kind, name: r.name }, r.datacenter, options),
  });
}
