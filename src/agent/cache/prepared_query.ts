/**
 * A prepared query's result as a cache type (Consul's agent/cache-types/prepared_query.go, used by
 * proxycfg for `prepared_query` upstreams). Prepared queries do not block, so a watched entry is polled
 * every 30 s (proxycfg's `defaultPreparedQueryPollInterval`) and, as Consul's polling Notify does,
 * reported only when the result differs: the index moves only then. Execution is Consul's Execute:
 * the local datacenter's result, else the query's failover datacenters in turn.
 */
import { executePreparedQuery } from "../../connect/index.ts";
import type { CheckServiceNode, QuerySource } from "../../model/index.ts";
import { blockingRead, type StateReader } from "./state_reader.ts";
import type { CacheType, FetchResult } from "./types.ts";

/** Consul proxycfg's poll interval of prepared-query upstreams. */
export const PREPARED_QUERY_POLL_MS = 30_000;

/** structs.PreparedQueryExecuteRequest as proxycfg asks it (Connect true, no limit). */
export interface PreparedQueryRequest {
  /** The datacenter to execute in; undefined = this agent's. */
  readonly datacenter?: string;
  readonly idOrName: string;
  /** The asking agent (template rendering, "_agent") and the source results are sorted near. */
  readonly source: QuerySource;
}

export interface PreparedQueryTypeDeps {
  readonly reader: StateReader;
  /** Every known datacenter, nearest first, for the query's failover. */
  datacenters(): Promise<readonly string[]> | readonly string[];
}

/**
 * The prepared-query type. The value is the Connect-capable instances the query returned, sorted by node
 * and service ID (the server shuffles them; the order carries nothing here). An unknown query fails the
 * fetch with "Query not found", a query that does not render with its message.
 */
export function preparedQueryType(d: PreparedQueryTypeDeps): CacheType<PreparedQueryRequest, readonly CheckServiceNode[]> {
  const execute = async (r: PreparedQueryRequest, token: string | undefined): Promise<CheckServiceNode[]> => {
    const now = { minIndex: 0, maxWaitMs: 0, ...(token ? { token } : {}) };
    const outcome = await executePreparedQuery({
      local: async () =>
        (await blockingRead(d.reader, { type: "prepared-query-execute", idOrName: r.idOrName, agent: r.source, source: r.source, limit: 0, connect: true }, r.datacenter, now)).value,
      datacenters: async () => d.datacenters(),
      remote: async (dc, query) => (await blockingRead(d.reader, { type: "prepared-query-execute-remote", query, limit: 0, connect: true }, dc, now)).value,
    });
    if (outcome.type === "not-found") throw new Error("Query not found");
    if (outcome.type === "error") throw new Error(outcome.error);
    const key = (n: CheckServiceNode) => `${n.Node.Node}\u0000${n.Service.ID}`;
    return [...outcome.value.Nodes].sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
  };
  return {
    name: "prepared-query",
    key: (r) => JSON.stringify([r.datacenter ?? "", r.idOrName, r.source.Datacenter, r.source.Node, r.source.Segment]),
    async fetch(r, options, prev?: FetchResult<readonly CheckServiceNode[]>) {
      const value = await execute(r, options.token);
      if (!prev) return { value, index: 1 };
      return JSON.stringify(value) === JSON.stringify(prev.value) ? prev : { value, index: prev.index + 1 };
    },
    refresh: false,
    refreshTimerMs: PREPARED_QUERY_POLL_MS,
  };
}
