/**
 * A simulated Clock: time moves only when the test says so, timers fire in (time, creation) order,
 * so a run is a pure function of its inputs and seed.
 */
import type { Cancel, Clock } from "../../src/platform/clock.ts";

interface Timer {
  at: number;
  seq: number;
  fn: () => void;
  every: number | undefined;
  cancelled: boolean;
}

export interface SimClock extends Clock {
  /** Runs every timer due at or before `now() + ms` in order, advancing time to each, then to the end. */
  advance(ms: number): void;
  /** Advances to the next timer and runs it (and others due at the same instant); false if none is pending. */
  runNext(): boolean;
  /** Time of the earliest pending timer, or undefined. */
  nextAt(): number | undefined;
  pending(): number;
}

export function simClock(startMs = 1_700_000_000_000): SimClock {
  let now = 0;
  let seq = 0;
  const heap: Timer[] = [];
  const less = (a: Timer, b: Timer) => a.at < b.at || (a.at === b.at && a.seq < b.seq);
  const push = (t: Timer) => {
    heap.push(t);
    let i = heap.length - 1;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (!less(heap[i]!, heap[p]!)) break;
      [heap[i], heap[p]] = [heap[p]!, heap[i]!];
      i = p;
    }
  };
  const pop = (): Timer | undefined => {
    const top = heap[0];
    const last = heap.pop();
    if (heap.length && last) {
      heap[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1, r = l + 1;
        let m = i;
        if (l < heap.length && less(heap[l]!, heap[m]!)) m = l;
        if (r < heap.length && less(heap[r]!, heap[m]!)) m = r;
        if (m === i) break;
        [heap[i], heap[m]] = [heap[m]!, heap[i]!];
        i = m;
      }
    }
    return top;
  };
  const prune = () => {
    while (heap.length && heap[0]!.cancelled) pop();
  };
  const schedule = (ms: number, fn: () => void, every?: number): Cancel => {
    const t: Timer = { at: now + Math.max(0, ms), seq: seq++, fn, every, cancelled: false };
    push(t);
    return () => void (t.cancelled = true);
  };
  const fire = (t: Timer) => {
    now = Math.max(now, t.at);
    if (t.every !== undefined) {
      t.at = now + t.every;
      t.seq = seq++;
      push(t);
    }
    t.fn();
  };
  const clock: SimClock = {
    now: () => startMs + now,
    monotonic: () => now,
    setTimer: (ms, fn) => schedule(ms, fn),
    setInterval: (ms, fn) => schedule(Math.max(1, ms), fn, Math.max(1, ms)),
    advance(ms) {
      const end = now + ms;
      for (;;) {
        prune();
        const t = heap[0];
        if (!t || t.at > end) break;
        pop();
        fire(t);
      }
      now = end;
    },
    runNext() {
      prune();
      const t = pop();
      if (!t) return false;
      fire(t);
      return true;
    },
    nextAt() {
      prune();
      return heap[0]?.at;
    },
    pending() {
      return heap.filter((t) => !t.cancelled).length;
    },
  };
  return clock;
}

/** Lets promise continuations run (a macrotask turn); no simulated time passes. */
export const flushMacrotask = (): Promise<void> => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * Runs `clock`'s timers for up to `ms` of simulated time, letting continuations settle with `flush`
 * after each; stops early (true) once `until` holds. Resolves to `until()` (or true) at the end.
 */
export async function runSimTimers(clock: SimClock, ms: number, until?: () => boolean, flush: () => Promise<void> = flushMacrotask): Promise<boolean> {
  const end = clock.monotonic() + ms;
  await flush();
  for (;;) {
    if (until?.()) return true;
    const at = clock.nextAt();
    if (at === undefined || at > end) break;
    clock.runNext();
    await flush();
  }
  clock.advance(end - clock.monotonic());
  await flush();
  return until?.() ?? true;
}
