/**
 * The agent's cache of server data (Consul's agent/cache/cache.go). Entries are keyed by (type, key,
 * ACL token): a request made with a token is fetched with it and never shares an entry with another
 * token's (Consul's cache keys include the token). The key logged is the type's, never the token;
 * each one is fetched as a blocking query: on demand, or continuously in the background for refresh
 * types and while watched. An entry nobody used for its type's `lastGetTtlMs` is dropped, which stops
 * its refresh. Time only through the injected clock, so tests drive it by hand.
 */
import type { UnitRandom } from "../../connect/index.ts";
import type { Cancel, Clock, Logger } from "../../platform/index.ts";
import { refreshBackoffMs } from "./backoff.ts";
import {
  DEFAULT_GET_WAIT_MS, DEFAULT_LAST_GET_TTL_MS, DEFAULT_REFRESH_TIMEOUT_MS,
  type AgentCache, type CacheResult, type CacheType, type FetchResult, type GetOptions, type WatchHandlers, type WatchOptions,
} from "./types.ts";

/** What the cache needs. */
export interface AgentCacheDeps {
  readonly clock: Clock;
  readonly rng: UnitRandom;
  readonly logger: Logger;
  /** Wait before retrying after `failures` consecutive failed background fetches; default {@link refreshBackoffMs}. */
  backoffMs?(failures: number): number;
}

type AnyType = CacheType<unknown, unknown, unknown>;
/** How a fetch ended, as blocked gets learn it; undefined when their own wait ran out. */
type Outcome = { readonly ok: true } | { readonly ok: false; readonly error: unknown } | undefined;

interface Watcher {
  readonly handlers: WatchHandlers<unknown>;
  /** Index of the last value delivered (0: none yet). */
  delivered: number;
}

interface Entry {
  readonly type: AnyType;
  readonly req: unknown;
  /** The type's key of the request (what logs show). */
  readonly key: string;
  /** The key in the type's table: `key` and the token. */
  readonly tableKey: string;
  /** The ACL token the entry is fetched with; undefined: the reader's default. */
  readonly token: string | undefined;
  result?: FetchResult<unknown, unknown>;
  fetching: boolean;
  /** Consecutive failed fetches (for the back-off). */
  failures: number;
  dropped: boolean;
  readonly abort: AbortController;
  /** The next background fetch, waiting out RefreshTimer or a back-off. */
  refreshTimer?: Cancel | undefined;
  expiryTimer?: Cancel | undefined;
  /** Monotonic time of the last get, or of the last watch ending. */
  lastUsed: number;
  readonly waiters: Set<(o: Outcome) => void>;
  readonly watchers: Set<Watcher>;
}

const OK: Outcome = { ok: true };
const view = <V>(r: FetchResult<unknown, unknown>): CacheResult<V> => ({ value: r.value as V, index: r.index });

/** Creates an empty cache; types need no registration (see {@link CacheType}). */
export function createAgentCache(d: AgentCacheDeps): AgentCache {
  const tables = new Map<AnyType, Map<string, Entry>>();
  const backoff = (n: number) => (d.backoffMs ? d.backoffMs(n) : refreshBackoffMs(n, d.rng));
  let closed = false;

  const entryFor = (type: AnyType, req: unknown, token: string | undefined): Entry => {
    let table = tables.get(type);
    if (!table) tables.set(type, (table = new Map()));
    const key = type.key(req);
    const tableKey = token ? `${key}\u0000${token}` : key;
    let e = table.get(tableKey);
    if (!e) {
      e = { type, req, key, tableKey, token: token || undefined, fetching: false, failures: 0, dropped: false, abort: new AbortController(), lastUsed: 0, waiters: new Set(), watchers: new Set() };
      table.set(tableKey, e);
    }
    return e;
  };

  const wake = (e: Entry, o: Outcome) => {
    const waiters = [...e.waiters];
    e.waiters.clear();
    for (const w of waiters) w(o);
  };

  const drop = (e: Entry, why: Error) => {
    if (e.dropped) return;
    e.dropped = true;
    const table = tables.get(e.type);
    if (table?.get(e.tableKey) === e) table.delete(e.tableKey);
    if (table?.size === 0) tables.delete(e.type);
    e.refreshTimer?.();
    e.expiryTimer?.();
    e.abort.abort(why);
    wake(e, { ok: false, error: why });
  };

  /** Drops `e` once it has been unused (no get, no watcher) for its type's LastGetTTL; one timer per entry. */
  const armExpiry = (e: Entry, ms: number) => {
    e.expiryTimer = d.clock.setTimer(ms, () => {
      e.expiryTimer = undefined;
      const ttl = e.type.lastGetTtlMs ?? DEFAULT_LAST_GET_TTL_MS;
      const idle = d.clock.monotonic() - e.lastUsed;
      if (e.watchers.size > 0) armExpiry(e, ttl);
      else if (idle >= ttl) drop(e, new Error(`the ${e.type.name} cache entry expired unused`));
      else armExpiry(e, ttl - idle);
    });
  };

  const touch = (e: Entry) => {
    if (e.dropped) return;
    e.lastUsed = d.clock.monotonic();
    if (!e.expiryTimer) armExpiry(e, e.type.lastGetTtlMs ?? DEFAULT_LAST_GET_TTL_MS);
  };

  /** Runs a watch callback; one that throws is logged, never breaks the entry. */
  const callback = (fn: () => void) => {
    try {
      fn();
    } catch (err) {
      d.logger.error("a cache watch callback threw", { error: err });
    }
  };

  const deliver = (w: Watcher, r: FetchResult<unknown, unknown>) => {
    if (r.index === w.delivered) return;
    w.delivered = r.index;
    callback(() => w.handlers.onUpdate(view(r)));
  };

  /** Starts one fetch of `e` (at most one is in flight per entry). */
  const run = (e: Entry) => {
    e.refreshTimer = undefined;
    if (e.fetching || e.dropped) return;
    e.fetching = true;
    const t = e.type;
    const options = { minIndex: e.result?.index ?? 0, maxWaitMs: t.refreshTimeoutMs ?? DEFAULT_REFRESH_TIMEOUT_MS, signal: e.abort.signal, ...(e.token ? { token: e.token } : {}) };
    let p: Promise<FetchResult<unknown, unknown>>;
    try {
      p = t.fetch(e.req, options, e.result);
    } catch (err) {
      p = Promise.reject(err);
    }
    p.then((r) => settled(e, r), (err) => failed(e, err));
  };

  /**
   * The next background fetch, for refresh types and watched entries. Right away after a new index with
   * no RefreshTimer (so a fetch that blocks on local timers arms them at once); otherwise through a
   * timer, so a fetch that keeps answering at once cannot starve the event loop.
   */
  const next = (e: Entry, delayMs: number, changed: boolean) => {
    if (!e.type.refresh && e.watchers.size === 0) return;
    if (delayMs > 0 || !changed) e.refreshTimer = d.clock.setTimer(delayMs, () => run(e));
    else run(e);
  };

  const settled = (e: Entry, r: FetchResult<unknown, unknown>) => {
    e.fetching = false;
    if (e.dropped) return;
    const before = e.result?.index;
    e.result = { value: r.value, index: Math.max(1, r.index), state: r.state };
    e.failures = 0;
    const changed = e.result.index !== before;
    wake(e, OK);
    if (changed) for (const w of [...e.watchers]) deliver(w, e.result);
    next(e, e.type.refreshTimerMs ?? 0, changed);
  };

  const failed = (e: Entry, error: unknown) => {
    e.fetching = false;
    if (e.dropped) return;
    e.failures++;
    wake(e, { ok: false, error });
    for (const w of [...e.watchers]) callback(() => w.handlers.onError?.(error));
    // Nothing cached and nobody watching: forget the entry, so the next get fetches afresh.
    if (!e.result && e.watchers.size === 0) return drop(e, error instanceof Error ? error : new Error(String(error)));
    if (e.type.refresh || e.watchers.size > 0) {
      d.logger.warn("refreshing a cache entry failed; will retry", { type: e.type.name, key: e.key, failures: e.failures, error });
    }
    next(e, backoff(e.failures), false);
  };

  const wait = (e: Entry, ms: number): Promise<Outcome> =>
    new Promise((resolve) => {
      const done = (o: Outcome) => {
        cancel?.();
        e.waiters.delete(done);
        resolve(o);
      };
      const cancel = Number.isFinite(ms) ? d.clock.setTimer(ms, () => done(undefined)) : undefined;
      e.waiters.add(done);
    });

  return {
    async get<Req, V, S>(type: CacheType<Req, V, S>, req: Req, options: GetOptions = {}) {
      if (closed) throw new Error("the agent cache is closed");
      const e = entryFor(type as unknown as AnyType, req, options.token);
      touch(e);
      const minIndex = options.minIndex ?? 0;
      const until = d.clock.monotonic() + (options.maxWaitMs ?? DEFAULT_GET_WAIT_MS);
      for (;;) {
        const r = e.result;
        const left = until - d.clock.monotonic();
        if (r && (minIndex <= 0 || r.index > minIndex || left <= 0 || e.dropped)) return view<V>(r);
        if (!e.fetching && !e.refreshTimer) run(e);
        const o = await wait(e, r ? left : Infinity);
        if (!e.result && o && !o.ok) throw o.error;
      }
    },

    watch<Req, V, S>(type: CacheType<Req, V, S>, req: Req, handlers: WatchHandlers<V>, options: WatchOptions = {}): Cancel {
      if (closed) return () => {};
      const e = entryFor(type as unknown as AnyType, req, options.token);
      const w: Watcher = { handlers: handlers as WatchHandlers<unknown>, delivered: 0 };
      e.watchers.add(w);
      touch(e);
      if (!e.fetching && !e.refreshTimer) run(e);
      if (e.result) {
        void Promise.resolve().then(() => {
          if (e.result && e.watchers.has(w) && !e.dropped) deliver(w, e.result);
        });
      }
      return () => {
        if (e.watchers.delete(w)) touch(e);
      };
    },

    close() {
      closed = true;
      const err = new Error("the agent cache is closed");
      for (const table of [...tables.values()]) for (const e of [...table.values()]) drop(e, err);
    },
  };
}
