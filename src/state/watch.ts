/**
 * Watch sets and the hub that fires them: the blocking-query machinery (Consul's memdb WatchSet and
 * agent/consul/rpc.go blockingQuery).
 *
 * A query records what it read in a WatchSet: topics (a table, a node, a service name, a session...),
 * exact KV keys and KV prefixes. A committed write fires the topics it touched and the keys it changed;
 * a KV key change also fires every watched prefix of that key. Writes to other keys or other services
 * fire nothing the query read, so the query keeps sleeping.
 */
import type { Cancel, Clock } from "../platform/index.ts";

/** A query's result and the Raft index that describes it (Consul's QueryMeta.Index). */
export interface QueryResult<T> {
  readonly index: number;
  readonly value: T;
}

interface Waiter {
  done: boolean;
  fire(): void;
}

/**
 * What a query depended on. Create one per query run; the query functions add to it. Adding is cheap
 * and deduplicated. A watch set belongs to one store (the first one that adds to it).
 */
export class WatchSet {
  /** @internal */ readonly topics = new Set<string>();
  /** @internal */ readonly keys = new Set<string>();
  /** @internal */ readonly prefixes = new Set<string>();
  /** @internal */ hub: WatchHub | undefined;

  /** @internal Records a dependency on a topic of `hub`. */
  addTopic(hub: WatchHub, topic: string): void {
    this.hub ??= hub;
    this.topics.add(topic);
  }

  /** @internal Records a dependency on one KV key (present or not). */
  addKey(hub: WatchHub, key: string): void {
    this.hub ??= hub;
    this.keys.add(key);
  }

  /** @internal Records a dependency on every KV key under `prefix` ("" is the whole KV store). */
  addPrefix(hub: WatchHub, prefix: string): void {
    this.hub ??= hub;
    this.prefixes.add(prefix);
  }

  /** Number of distinct things watched. */
  get size(): number {
    return this.topics.size + this.keys.size + this.prefixes.size;
  }
}

/**
 * Waiters woken per turn of the event loop, over all writes of that turn; the rest are queued and woken
 * WAKE_BATCH at a time, each batch in a later turn (see WatchHub.wake).
 */
export const WAKE_BATCH = 256;

/** @internal Registry of waiting watch sets; the store fires it after each committed write. */
export class WatchHub {
  /**
   * `defer` runs a function in a later turn of the event loop (a 0 ms timer). Without it every waiter
   * is woken at once.
   */
  constructor(private readonly defer?: (fn: () => void) => void) {}

  private readonly topics = new Map<string, Set<Waiter>>();
  private readonly keys = new Map<string, Set<Waiter>>();
  private readonly prefixes = new Map<string, Set<Waiter>>();
  private readonly all = new Set<Waiter>();

  /** Number of registered waiters (for leak tests). */
  get waiting(): number {
    return this.all.size;
  }

  /** Registers `w` on everything in `ws`; the returned function unregisters it. */
  register(ws: WatchSet, w: Waiter): () => void {
    this.all.add(w);
    for (const t of ws.topics) add(this.topics, t, w);
    for (const k of ws.keys) add(this.keys, k, w);
    for (const p of ws.prefixes) add(this.prefixes, p, w);
    return () => {
      this.all.delete(w);
      for (const t of ws.topics) remove(this.topics, t, w);
      for (const k of ws.keys) remove(this.keys, k, w);
      for (const p of ws.prefixes) remove(this.prefixes, p, w);
    };
  }

  /** Fires the waiters of the given topics and KV keys (and of every watched prefix of those keys). */
  fire(topics: Iterable<string>, kvKeys: Iterable<string>): void {
    if (this.all.size === 0) return;
    const hit = new Set<Waiter>();
    for (const t of topics) collect(this.topics.get(t), hit);
    for (const k of kvKeys) {
      collect(this.keys.get(k), hit);
      if (this.prefixes.size === 0) continue;
      if (this.prefixes.size <= k.length + 1) {
        for (const [p, ws] of this.prefixes) if (k.startsWith(p)) collect(ws, hit);
      } else {
        for (let i = 0; i <= k.length; i++) collect(this.prefixes.get(k.slice(0, i)), hit);
      }
    }
    this.wake([...hit]);
  }

  /** Fires every waiter (a snapshot restore replaced the whole state; Consul's AbandonCh). */
  fireAll(): void {
    this.wake([...this.all]);
  }

  /** Waiters to wake in later turns, oldest first; a waiter hit again while queued keeps its place. */
  private readonly queue = new Set<Waiter>();
  /** Waiters woken since the synchronous run that woke them began (reset by a microtask after it). */
  private wokenThisRun = 0;
  private drainScheduled = false;

  /**
   * Wakes at most WAKE_BATCH waiters per synchronous run (the Raft driver applies a whole batch of
   * committed writes in one), counting every write of the run, and queues the rest, oldest first, for
   * later turns of the event loop, WAKE_BATCH per turn. A woken query re-runs and answers its client
   * right after the run: 10,000 watchers of one key woken at once held the event loop for about a
   * second, and so did 100 writes applied together that woke 100 watchers each (Raft heartbeats, other
   * clients and the writes' own answers all waiting behind them). Waiters whose wait ended meanwhile
   * are skipped.
   */
  private wake(waiters: readonly Waiter[]): void {
    if (!this.defer) {
      for (const w of waiters) w.fire();
      return;
    }
    for (const w of waiters) {
      if (w.done) continue;
      if (this.wokenThisRun < WAKE_BATCH && this.queue.size === 0) this.fireCounted(w);
      else this.queue.add(w);
    }
    this.scheduleDrain();
  }

  private fireCounted(w: Waiter): void {
    if (this.wokenThisRun++ === 0) queueMicrotask(() => (this.wokenThisRun = 0));
    w.fire();
  }

  private scheduleDrain(): void {
    if (this.drainScheduled || this.queue.size === 0) return;
    this.drainScheduled = true;
    this.defer!(() => {
      this.drainScheduled = false;
      for (const w of this.queue) {
        if (this.wokenThisRun >= WAKE_BATCH) break;
        this.queue.delete(w);
        if (!w.done) this.fireCounted(w);
      }
      this.scheduleDrain();
    });
  }
}

function add(m: Map<string, Set<Waiter>>, k: string, w: Waiter): void {
  let s = m.get(k);
  if (!s) m.set(k, (s = new Set()));
  s.add(w);
}

function remove(m: Map<string, Set<Waiter>>, k: string, w: Waiter): void {
  const s = m.get(k);
  if (s && s.delete(w) && s.size === 0) m.delete(k);
}

function collect(s: Set<Waiter> | undefined, into: Set<Waiter>): void {
  if (s) for (const w of s) into.add(w);
}

/** How a wait ended. */
export type WaitOutcome = "changed" | "timeout" | "aborted";

/** Options of waitFor. */
export interface WaitOptions {
  readonly clock: Clock;
  readonly timeoutMs: number;
  /** Ends the wait early (a client went away); resolves "aborted". */
  readonly signal?: AbortSignal;
}

/**
 * Resolves "changed" when anything in `ws` changes, "timeout" after `timeoutMs`, or "aborted" when
 * `signal` aborts. Every registration and the timer are released when it resolves, so nothing leaks.
 * Call it in the same synchronous turn as the query that filled `ws` (writes apply synchronously, so
 * none can slip in between). An empty watch set just waits for the timeout, like memdb's.
 */
export function waitFor(ws: WatchSet, opts: WaitOptions): Promise<WaitOutcome> {
  return new Promise((resolve) => {
    if (opts.signal?.aborted) return resolve("aborted");
    let unregister: (() => void) | undefined;
    let cancelTimer: Cancel | undefined;
    const waiter: Waiter = { done: false, fire: () => finish("changed") };
    const onAbort = () => finish("aborted");
    function finish(outcome: WaitOutcome): void {
      if (waiter.done) return;
      waiter.done = true;
      unregister?.();
      cancelTimer?.();
      opts.signal?.removeEventListener("abort", onAbort);
      resolve(outcome);
    }
    if (ws.hub && ws.size > 0) unregister = ws.hub.register(ws, waiter);
    cancelTimer = opts.clock.setTimer(Math.max(0, opts.timeoutMs), () => finish("timeout"));
    opts.signal?.addEventListener("abort", onAbort);
  });
}

/** Options of blockingQuery. */
export interface BlockingQueryOptions<T> {
  /** The client's `?index=`; 0 means "do not block". */
  readonly minIndex: number;
  /** How long to block at most, jitter included (the caller applies Consul's default, cap and jitter). */
  readonly maxWaitMs: number;
  readonly clock: Clock;
  readonly signal?: AbortSignal;
  /** Runs the query against the current state, recording what it read in `ws`. */
  readonly run: (ws: WatchSet) => QueryResult<T>;
}

/**
 * Consul's blocking query loop: run; return if minIndex is 0 or the result's index is above it;
 * otherwise wait for a change to something the run read (or the deadline, or an abort) and run again.
 * On timeout or abort it returns the last run's result (Consul does not re-run). The returned index
 * is at least 1: Consul never answers with 0, which clients would take as "do not block".
 */
export async function blockingQuery<T>(opts: BlockingQueryOptions<T>): Promise<QueryResult<T>> {
  const deadline = opts.clock.monotonic() + Math.max(0, opts.maxWaitMs);
  for (;;) {
    const ws = new WatchSet();
    const r = opts.run(ws);
    const result = r.index >= 1 ? r : { index: 1, value: r.value };
    if (opts.minIndex <= 0 || result.index > opts.minIndex) return result;
    const remaining = deadline - opts.clock.monotonic();
    if (remaining <= 0) return result;
    const outcome = await waitFor(ws, { clock: opts.clock, timeoutMs: remaining, signal: opts.signal });
    if (outcome !== "changed") return result;
  }
}
