/**
 * Applying a compiled filter to a result: synchronously for small inputs (agent-local data), or in slices
 * that yield to the event loop between them for large ones (catalog and health results), so that a heavy
 * filter over a large catalog cannot stall the server (and with it Raft heartbeats and KV writes).
 *
 * Both charge their work to a WorkMeter (budget.ts) and throw FilterTooExpensiveError when the budget is
 * spent, in total or on one item; no partial result is returned then. Results are identical to testing
 * each item with `filter.matches`, in the items' order.
 */
import { DEFAULT_SLICE_UNITS, WorkMeter, type FilterBudget } from "./budget.ts";
import type { Filter } from "./compile.ts";

/** How filterListAsync and filterRecordAsync pace themselves. */
export interface AsyncFilterOptions extends FilterBudget {
  /**
   * Called between slices; the evaluation continues when it resolves. It must let other tasks run (timers,
   * I/O): a macrotask such as `() => new Promise((r) => setImmediate(r))`, not a resolved promise. Injected
   * because this layer may not touch timers.
   */
  readonly yield: () => Promise<void>;
  /** Work units between yields (default DEFAULT_SLICE_UNITS). */
  readonly sliceUnits?: number;
  /** Checked after every yield: when aborted, the evaluation stops with the signal's reason. */
  readonly signal?: AbortSignal;
}

/**
 * The items that pass `filter`, in their original order (a new array); every item when `filter` is
 * undefined. Runs to completion without yielding: use it for inputs known to be small. Throws
 * FilterTooExpensiveError when `budget` is exceeded.
 */
export function filterList<T>(items: readonly T[], filter: Filter | undefined, budget?: FilterBudget): T[] {
  if (filter === undefined) return [...items];
  const meter = new WorkMeter(budget);
  return items.filter((item) => {
    meter.startItem();
    return filter.evaluate(item, meter);
  });
}

/** The entries whose values pass `filter` (Consul filters map-shaped results, e.g. /v1/agent/services, by value). */
export function filterRecord<T>(record: Readonly<Record<string, T>>, filter: Filter | undefined, budget?: FilterBudget): Record<string, T> {
  if (filter === undefined) return { ...record };
  return Object.fromEntries(filterList(Object.entries(record), entryFilter(filter), budget));
}

/**
 * As filterList, but awaits `options.yield()` before the next item whenever a slice of `sliceUnits` work
 * units has been spent since the last yield (one item is never split, and costs at most `maxItemUnits`). The points where it
 * yields depend only on the filter and the items, never on time. `items` must not change until the
 * promise settles (state-store results are immutable snapshots). Rejects with FilterTooExpensiveError when
 * the budget is exceeded, or with the signal's reason when `signal` is aborted.
 */
export async function filterListAsync<T>(items: readonly T[], filter: Filter | undefined, options: AsyncFilterOptions): Promise<T[]> {
  if (filter === undefined) return [...items];
  const meter = new WorkMeter(options);
  const slice = options.sliceUnits ?? DEFAULT_SLICE_UNITS;
  const out: T[] = [];
  let sliceEnd = slice;
  for (const item of items) {
    if (meter.used >= sliceEnd) {
      await options.yield();
      options.signal?.throwIfAborted();
      sliceEnd = meter.used + slice;
    }
    meter.startItem();
    if (filter.evaluate(item, meter)) out.push(item);
  }
  return out;
}

/** As filterRecord, paced like filterListAsync. */
export async function filterRecordAsync<T>(
  record: Readonly<Record<string, T>>,
  filter: Filter | undefined,
  options: AsyncFilterOptions,
): Promise<Record<string, T>> {
  if (filter === undefined) return { ...record };
  return Object.fromEntries(await filterListAsync(Object.entries(record), entryFilter(filter), options));
}

/** `filter` applied to the value of a [key, value] entry. */
function entryFilter(filter: Filter): Filter {
  return {
    expression: filter.expression,
    matches: (e) => filter.matches((e as [string, unknown])[1]),
    evaluate: (e, m) => filter.evaluate((e as [string, unknown])[1], m),
  };
}
