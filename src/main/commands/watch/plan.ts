/**
 * The decision core of a watch, Consul 1.8's watch plan (api/watch/plan.go and the WaitIndexVal of
 * api/watch/watch.go in hashicorp/consul) as pure functions of the plan state: after each answer, whether
 * the handler fires and which index the next blocking query asks for; after each failure, how long to
 * back off. Indexes are exact uint64 values (bigint): event-list indexes are 64-bit hashes.
 */

/** Go's `retryInterval`: the back-off unit after a failed query. */
export const RETRY_INTERVAL_MS = 5_000;
/** Go's `maxBackoffTime`: the longest back-off. */
export const MAX_BACKOFF_MS = 180_000;

export interface PlanState {
  /** Go's `lastParamVal`: the index the next query blocks on; null is Go's nil (no index, no blocking). */
  readonly lastIndex: bigint | null;
  /** Go's `lastResult`, as the canonical JSON of the last result handed to the handler (null: none yet). */
  readonly lastResult: string | null;
  /** Consecutive failed queries. */
  readonly failures: number;
}

export const INITIAL_PLAN: PlanState = { lastIndex: null, lastResult: null, failures: 0 };

/**
 * Go's `WaitIndexVal.Next` (1.8): the index to block on after an answer at `index`; when the index went
 * backwards (below `previous`), 0, so that the next query does not block on an index the server may
 * never reach again.
 *
 * `hashed`: the index is a hash with no order (an event list's, derived from the newest event's random
 * ID), so "backwards" means nothing and the index is kept. Consul resets there too, for about half of all
 * new events, and its event watch then hands the handler every buffered event again; we deliver each once.
 */
export function nextIndex(previous: bigint | null, index: bigint, hashed = false): bigint {
  return !hashed && previous !== null && previous > index ? 0n : index;
}

/**
 * An answer at `index` whose result encodes to `result` (compare results by this encoding: Go compares
 * them with reflect.DeepEqual). An unchanged index changes nothing; otherwise the index advances (see
 * nextIndex) and the handler fires when there was no index before (the first answer, or the first after
 * a failure) or when the result differs from the last one handled.
 */
export function planAnswer(state: PlanState, index: bigint, result: string, hashed = false): { readonly state: PlanState; readonly fire: boolean } {
  if (state.lastIndex !== null && state.lastIndex === index) return { state: { ...state, failures: 0 }, fire: false };
  const lastIndex = nextIndex(state.lastIndex, index, hashed);
  if (state.lastIndex !== null && state.lastResult === result) return { state: { lastIndex, lastResult: state.lastResult, failures: 0 }, fire: false };
  return { state: { lastIndex, lastResult: result, failures: 0 }, fire: true };
}

/**
 * A failed query: the index is forgotten (the watch functions return no index with an error), so the next
 * answer fires the handler even when nothing changed; the back-off grows with the square of the
 * consecutive failures (5s, 20s, 45s, ...) up to 180s.
 */
export function planFailure(state: PlanState): { readonly state: PlanState; readonly retryMs: number } {
  const failures = state.failures + 1;
  return { state: { lastIndex: null, lastResult: state.lastResult, failures }, retryMs: Math.min(RETRY_INTERVAL_MS * failures * failures, MAX_BACKOFF_MS) };
}
