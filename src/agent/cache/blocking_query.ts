/**
 * The usual cache type: a server blocking query kept fresh in the background (Consul's
 * `RegisterOptionsBlockingRefresh`: Refresh on, no RefreshTimer, a 10-minute RefreshTimeout).
 * One call per kind of data: `blockingQueryType({ name, key, query })`.
 */
import { DEFAULT_REFRESH_TIMEOUT_MS, type CacheResult, type CacheType, type FetchOptions } from "./types.ts";

/** What a blocking-query type states; everything else takes Consul's defaults. */
export interface BlockingQuerySpec<Req, V> {
  readonly name: string;
  key(req: Req): string;
  /** One blocking query: at once when the index is past `minIndex` (or it is 0), else on change or after `maxWaitMs`. */
  query(req: Req, options: FetchOptions): Promise<CacheResult<V>>;
  readonly refreshTimeoutMs?: number;
  readonly lastGetTtlMs?: number;
}

/** A refreshing cache type over a blocking query (no per-entry fetch state). */
export function blockingQueryType<Req, V>(spec: BlockingQuerySpec<Req, V>): CacheType<Req, V> {
  return {
    name: spec.name,
    key: (req) => spec.key(req),
    fetch: (req, options) => spec.query(req, options),
    refresh: true,
    refreshTimerMs: 0,
    refreshTimeoutMs: spec.refreshTimeoutMs ?? DEFAULT_REFRESH_TIMEOUT_MS,
    ...(spec.lastGetTtlMs !== undefined ? { lastGetTtlMs: spec.lastGetTtlMs } : {}),
  };
}
