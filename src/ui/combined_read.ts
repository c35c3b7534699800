/**
 * Several blocking reads of the API seen as one, for a page whose fragment depends on more than one
 * index (a failover page reads the chain, each target's health in its own datacenter, and the
 * gateways). The combined index is the sum of the parts' indexes: each part's index only grows (a
 * reset makes the sum move too), so the sum moves exactly when some part moved, and it survives a
 * reconnect (Last-Event-ID) because the parts' indexes do.
 *
 * A part that fails counts 0 and carries its error, so one unreachable datacenter shows in words
 * instead of ending the stream; while any part fails, a blocking wait ends after `retryMs` so that
 * the failing part is tried again.
 */
import { delay, type Clock } from "../platform/index.ts";
import type { Indexed } from "./page.ts";

/** One part: a read of the API, blocking past `minIndex` for up to `maxWaitMs` when `wait` is given. */
export type PartRead<T> = (wait?: { readonly minIndex: number; readonly maxWaitMs: number; readonly signal: AbortSignal }) => Promise<Indexed<T>>;

export type PartResult<T> = { readonly ok: true; readonly value: T; readonly index: number } | { readonly ok: false; readonly error: string; readonly index: 0 };

/** Reads every part once (no blocking); the results in order and their summed index. */
export async function readParts<T>(parts: readonly PartRead<T>[]): Promise<Indexed<PartResult<T>[]>> {
  const results = await Promise.all(parts.map(async (read): Promise<PartResult<T>> => {
    try {
      const r = await read();
      return { ok: true, value: r.value, index: r.index };
    } catch (err) {
      return { ok: false, error: (err as Error)?.message ?? String(err), index: 0 };
    }
  }));
  return { value: results, index: results.reduce((sum, r) => sum + r.index, 0) };
}

/**
 * A blocking read over the parts `plan()` names (asked again each time: the parts may depend on what
 * another part said, as a failover page's targets depend on the chain). Answers at once when the
 * combined index differs from `minIndex`; otherwise waits until any part's index moves, `maxWaitMs`
 * passes, or (when a part failed) `retryMs` passes, then answers the state read after that.
 */
export async function combinedBlockingRead<T, V>(o: {
  readonly plan: () => Promise<{ readonly parts: readonly PartRead<T>[]; readonly view: (results: readonly PartResult<T>[]) => V }>;
  readonly minIndex: number; readonly maxWaitMs: number; readonly signal: AbortSignal; readonly clock: Clock; readonly retryMs?: number;
}): Promise<Indexed<V>> {
  const first = await o.plan();
  const now = await readParts(first.parts);
  if (now.index !== o.minIndex || o.signal.aborted) return { value: first.view(now.value), index: now.index };
  const stop = new AbortController();
  const onAbort = () => stop.abort();
  o.signal.addEventListener("abort", onAbort, { once: true });
  try {
    const waits = first.parts.map((read, i) => {
      const was = now.value[i]!;
      if (!was.ok) return delay(o.clock, o.retryMs ?? 1_000, stop.signal);
      return read({ minIndex: was.index, maxWaitMs: o.maxWaitMs, signal: stop.signal }).then(() => true, () => delay(o.clock, o.retryMs ?? 1_000, stop.signal));
    });
    await Promise.race(waits);
  } finally {
    stop.abort();
    o.signal.removeEventListener("abort", onAbort);
  }
  const next = await o.plan();
  const after = await readParts(next.parts);
  return { value: next.view(after.value), index: after.index };
}
