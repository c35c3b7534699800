/**
 * The contracts of the agent's cache (Consul's agent/cache `Type`, `FetchOptions`, `FetchResult`,
 * `RegisterOptions`): a cache type is a typed request -> typed result fetched as a blocking query.
 */
import type { Cancel } from "../../platform/index.ts";

/** What one fetch is asked for. */
export interface FetchOptions {
  /**
   * Answer at once when the data's index is greater than `minIndex` (or `minIndex` is 0); otherwise block
   * until it is, or until `maxWaitMs` passes, and then answer with what there is. Never 0 while refreshing
   * an entry that has a value.
   */
  readonly minIndex: number;
  /** Upper bound of a blocking fetch; `Infinity` lets the type decide (a fetch that waits only on local timers). */
  readonly maxWaitMs: number;
  /**
   * Aborted when the entry is dropped or the cache closes. A fetch that blocks on timers or watches of its
   * own stops them then; its result is ignored either way.
   */
  readonly signal: AbortSignal;
  /** The ACL token to read with (the entry's); absent: the reader's default token. */
  readonly token?: string;
}

/** What a fetch returns; `state` travels to the type's next fetch for the same entry (Consul's `FetchResult.State`). */
export interface FetchResult<V, S = undefined> {
  readonly value: V;
  /** Index of the data (the X-Consul-Index); values below 1 are stored as 1 so that blocking stays possible. */
  readonly index: number;
  readonly state?: S;
}

/** A cached value as callers see it. */
export interface CacheResult<V> {
  readonly value: V;
  readonly index: number;
}

/**
 * One kind of cached data. The type object is the identity: entries live per (type object, `key(req)`),
 * so two requests with the same key share one entry and one background fetch.
 */
export interface CacheType<Req, V, S = undefined> {
  /** A name for logs (Consul's registered type name, e.g. "connect-ca-leaf"). */
  readonly name: string;
  /** The entry key of a request; requests that would fetch the same data must have the same key. */
  key(req: Req): string;
  /**
   * Fetches the data for `req` as a blocking query (see {@link FetchOptions}). `prev` is the entry's last
   * result (value, index and state), undefined on the first fetch. Rejections count as failures: the first
   * `get` of an entry without a value rejects with them, refreshes retry with a back-off.
   */
  fetch(req: Req, options: FetchOptions, prev: FetchResult<V, S> | undefined): Promise<FetchResult<V, S>>;
  /**
   * Consul's `Refresh`: keep the entry fresh with back-to-back blocking fetches, in the background, from
   * the first request until the entry is dropped. Without it an entry is fetched only when a `get` needs
   * a newer value (or while someone watches it).
   */
  readonly refresh: boolean;
  /** Consul's `RefreshTimer`: the pause between two background fetches; default 0 (back to back). */
  readonly refreshTimerMs?: number;
  /** Consul's `RefreshTimeout`: `maxWaitMs` of a background blocking fetch; default {@link DEFAULT_REFRESH_TIMEOUT_MS}. */
  readonly refreshTimeoutMs?: number;
  /** Consul's `LastGetTTL`: an entry nobody asked for (nor watched) this long is dropped; default {@link DEFAULT_LAST_GET_TTL_MS}. */
  readonly lastGetTtlMs?: number;
}

/** Consul's default `RefreshTimeout` (and QueryTimeout) for blocking refresh: 10 minutes. */
export const DEFAULT_REFRESH_TIMEOUT_MS = 10 * 60_000;
/** Consul's default `LastGetTTL`: 3 days. */
export const DEFAULT_LAST_GET_TTL_MS = 72 * 3_600_000;
/** How long a blocking `get` waits when the caller gives no `maxWaitMs`. */
export const DEFAULT_GET_WAIT_MS = 5 * 60_000;

/** Options of {@link AgentCache.get}. */
export interface GetOptions {
  /** 0 (default): the cached value, fetched first if there is none. > 0: wait for a value with a greater index. */
  readonly minIndex?: number;
  /** How long a blocking get waits before it answers with the value it has; default {@link DEFAULT_GET_WAIT_MS}. */
  readonly maxWaitMs?: number;
  /** The ACL token the value is read with; each token has its own entry. Absent or "": the reader's default. */
  readonly token?: string;
}

/** Options of {@link AgentCache.watch}. */
export interface WatchOptions {
  /** As {@link GetOptions.token}. */
  readonly token?: string;
}

/** Callbacks of {@link AgentCache.watch}. */
export interface WatchHandlers<V> {
  /** Each new value (a changed index), the current one first; called from the cache, never re-entrantly for one watch. */
  readonly onUpdate: (result: CacheResult<V>) => void;
  /** A failed fetch while watching; the cache keeps retrying with a back-off. */
  readonly onError?: (error: unknown) => void;
}

/** The agent's cache of server data. */
export interface AgentCache {
  /**
   * The value for `req`: the cached one when `minIndex` is 0 (fetched first when there is none; rejects when
   * that fetch fails), else the first value whose index is greater than `minIndex`, or after `maxWaitMs`
   * the value there is. Every get counts as a use of the entry (resets its unused TTL). Rejects once closed.
   */
  get<Req, V, S>(type: CacheType<Req, V, S>, req: Req, options?: GetOptions): Promise<CacheResult<V>>;
  /**
   * Follows the entry for `req`: `onUpdate` gets the current value (asynchronously, after this returns) and
   * then each value with a new index. The entry counts as in use until the returned function is called, and
   * is fetched continuously meanwhile, even for a type without `refresh`. Closing the cache ends every watch.
   */
  watch<Req, V, S>(type: CacheType<Req, V, S>, req: Req, handlers: WatchHandlers<V>, options?: WatchOptions): Cancel;
  /** Stops every refresh, timer and watch; pending blocking gets answer with the value they have. */
  close(): void;
}
