/**
 * The watch loop at the edge, Consul 1.8's `Plan.RunWithClientAndHclog` (api/watch/plan.go): query,
 * let the pure plan decide, hand fired results to the handler, back off after failures, until stopped.
 * Time and I/O come in through the options, so tests drive it without real sleeps.
 */
import { formatGoDuration } from "../../../lib/index.ts";
import { goJson } from "./results.ts";
import { INITIAL_PLAN, planAnswer, planFailure, type PlanState } from "./plan.ts";
import type { WatchAnswer } from "./query.ts";

export interface WatchLoopOptions {
  /** One blocking query on `lastIndex` (null: none). */
  readonly query: (lastIndex: bigint | null) => Promise<WatchAnswer>;
  /** Runs the handler on a fired result; resolves false to stop the watch. */
  readonly handle: (index: bigint, result: unknown) => Promise<boolean>;
  /** Resolves after `ms`, or early when `signal` aborts. */
  readonly sleep: (ms: number, signal: AbortSignal) => Promise<void>;
  /** Told about each failed query and the back-off before the next. */
  readonly onError: (err: Error, retryMs: number) => void;
  /** Stops the loop: checked after every query and back-off (Go's stopCh). */
  readonly signal: AbortSignal;
  /** Sees each plan state after it changes (for tests). */
  readonly onState?: (state: PlanState) => void;
  /** The index is a hash with no order (event watches): see nextIndex. */
  readonly hashedIndex?: boolean;
}

/** Runs until `signal` aborts or the handler asks to stop; never rejects for a failed query. */
export async function runWatchLoop(o: WatchLoopOptions): Promise<void> {
  let state = INITIAL_PLAN;
  const set = (next: PlanState) => {
    state = next;
    o.onState?.(state);
  };
  while (!o.signal.aborted) {
    let answer: WatchAnswer;
    try {
      answer = await o.query(state.lastIndex);
    } catch (err) {
      if (o.signal.aborted) break;
      const step = planFailure(state);
      set(step.state);
      o.onError(err instanceof Error ? err : new Error(String(err)), step.retryMs);
      await o.sleep(step.retryMs, o.signal);
      continue;
    }
    if (o.signal.aborted) break;
    const step = planAnswer(state, answer.index, goJson(answer.result), o.hashedIndex ?? false);
    set(step.state);
    if (step.fire && !(await o.handle(answer.index, answer.result))) break;
  }
}

/**
 * The plan's error line as hclog writes it to stderr (the plan's logger is named "watch" and names its
 * own child "watch" again): `<time> [ERROR] watch.watch: Watch errored: type=key error="..." retry=5s`,
 * a value quoted when it holds a space, tab or quote.
 */
export function watchErrorLine(now: Date, type: string, err: Error, retryMs: number): string {
  const value = (v: string) => (v === "" ? '""' : /[\s"]/.test(v) ? JSON.stringify(v) : v);
  return `${now.toISOString()} [ERROR] watch.watch: Watch errored: type=${value(type)} error=${value(err.message)} retry=${formatGoDuration(retryMs * 1e6)}\n`;
}
