/**
 * The server side of a page's live updates: a blocking-read loop per topic that pushes the
 * re-rendered fragment whenever the read's index moves, at most once per `minGapMs` (250 ms: bursts
 * of changes coalesce into one push), resuming after `since` (the page's index, or the stream's
 * Last-Event-ID). No timers of its own: time comes from the injected clock.
 */
import { delay, type Clock } from "../platform/index.ts";

export interface LivePush {
  readonly event: string;
  /** The read's index: the client's Last-Event-ID when it reconnects. */
  readonly id: string;
  readonly data: string;
}

/** Every push's SSE event name: the client swaps its data in by the fragment's element id. */
export const FRAGMENT_EVENT = "fragment";

export interface LiveTopic<T> {
  /** A blocking read: answers once the index passes `minIndex` or `maxWaitMs` passed. */
  read(minIndex: number, maxWaitMs: number, signal: AbortSignal): Promise<{ readonly value: T; readonly index: number }>;
  render(value: T): string | Promise<string>;
}

export const LIVE_MIN_GAP_MS = 250;
const WAIT_MS = 60_000;

/** Runs `topic` until `signal` aborts, pushing each change after `since`. Read errors end the loop (the client reconnects). */
export async function runLiveTopic<T>(o: {
  readonly topic: LiveTopic<T>; readonly since: number; readonly signal: AbortSignal; readonly clock: Clock;
  readonly push: (p: LivePush) => Promise<void>; readonly minGapMs?: number;
}): Promise<void> {
  let index = o.since;
  let lastPush = -Infinity;
  const gap = o.minGapMs ?? LIVE_MIN_GAP_MS;
  while (!o.signal.aborted) {
    const r = await o.topic.read(index, WAIT_MS, o.signal);
    if (o.signal.aborted) return;
    // An index that went backwards (a restored snapshot) resets, as Consul's blocking clients do.
    if (r.index === index) continue;
    const wait = lastPush + gap - o.clock.monotonic();
    if (wait > 0) await delay(o.clock, wait, o.signal);
    if (o.signal.aborted) return;
    index = r.index < index ? 0 : r.index;
    // Read again after the wait so the push carries the latest state of the burst.
    const latest = wait > 0 ? await o.topic.read(0, 0, o.signal) : r;
    if (o.signal.aborted) return;
    index = Math.max(index, latest.index);
    await o.push({ event: FRAGMENT_EVENT, id: String(latest.index), data: await o.topic.render(latest.value) });
    lastPush = o.clock.monotonic();
  }
}
