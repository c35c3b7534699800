/**
 * Consul 1.8's checks of a prepared query before it is written (agent/consul/prepared_query_endpoint.go
 * parseQuery, parseService, parseDNS; structs.ValidateNodeMetadata). Each returns Consul's message or
 * undefined; the endpoint prefixes it with "Invalid prepared query: " (PREPARED_QUERY_INVALID_PREFIX).
 */
import { GoError, parseGoDuration } from "../../lib/index.ts";
import type { PreparedQuery, QueryDNSOptions, ServiceQuery } from "../../model/index.ts";

/** Consul's redactedToken: what a query's Token reads as to a client that may not see it. */
export const REDACTED_TOKEN = "<hidden>";
/** How Apply wraps a parseQuery error. */
export const PREPARED_QUERY_INVALID_PREFIX = "Invalid prepared query: ";

const META_MAX_PAIRS = 64;
const META_KEY_MAX = 128;
const META_VALUE_MAX = 512;

/** parseQuery: the whole query (the ID and the template are checked elsewhere). */
export function parseQueryError(q: PreparedQuery): string | undefined {
  if (q.Name === "" && q.Template.Type === "" && q.Session === "") return "Must be bound to a session";
  if (q.Token === REDACTED_TOKEN) {
    return `Bad Token '${q.Token}', it looks like a query definition with a redacted token was submitted`;
  }
  return parseServiceError(q.Service) ?? parseDnsError(q.DNS);
}

/** parseService: a service name, NearestN >= 0 and valid node metadata filters. */
export function parseServiceError(s: ServiceQuery): string | undefined {
  if (s.Service === "") return "Must provide a Service name to query";
  if (s.Failover.NearestN < 0) return `Bad NearestN '${s.Failover.NearestN}', must be >= 0`;
  return nodeMetadataError(s.NodeMeta);
}

/** parseDNS: a TTL that is "" or a non-negative Go duration. */
export function parseDnsError(d: QueryDNSOptions): string | undefined {
  if (d.TTL === "") return undefined;
  let ns: number;
  try {
    ns = parseGoDuration(d.TTL);
  } catch (err) {
    return `Bad DNS TTL '${d.TTL}': ${err instanceof GoError ? err.message : String(err)}`;
  }
  return ns < 0 ? `DNS TTL '${ns}', must be >=0` : undefined;
}

/** structs.ValidateNodeMetadata(meta, allowConsulPrefix = true), keys in sorted order (Go's map order is random). */
export function nodeMetadataError(meta: Readonly<Record<string, string>> | null): string | undefined {
  if (!meta) return undefined;
  const keys = Object.keys(meta).sort();
  if (keys.length > META_MAX_PAIRS) return `Node metadata cannot contain more than ${META_MAX_PAIRS} key/value pairs`;
  for (const key of keys) {
    const value = meta[key]!;
    const why = key === "" ? "Key cannot be blank"
      : !/^[a-zA-Z0-9_-]+$/.test(key) ? "Key contains invalid characters"
      : key.length > META_KEY_MAX ? `Key is too long (limit: ${META_KEY_MAX} characters)`
      : new TextEncoder().encode(value).length > META_VALUE_MAX ? `Value is too long (limit: ${META_VALUE_MAX} characters)`
      : undefined;
    if (why) return `Couldn't load metadata pair ('${key}', '${value}'): ${why}`;
  }
  return undefined;
}
