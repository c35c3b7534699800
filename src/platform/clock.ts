/**
 * Clock port: wall time, monotonic time and cancellable timers.
 *
 * Everything outside src/platform and src/main receives a Clock instead of touching
 * Date.now/setTimeout, so that tests can drive time by hand (see test/harness).
 */

/** Cancels a timer; calling it twice, or after the timer fired, is a no-op. */
export type Cancel = () => void;

export interface Clock {
  /** Wall-clock milliseconds since the Unix epoch. May jump (NTP); never use it for durations. */
  now(): number;
  /** Monotonic milliseconds from an arbitrary origin; never goes backwards. Use for durations and deadlines. */
  monotonic(): number;
  /** Runs fn once after at least `ms` milliseconds. */
  setTimer(ms: number, fn: () => void): Cancel;
  /** Runs fn every `ms` milliseconds until cancelled. */
  setInterval(ms: number, fn: () => void): Cancel;
}

/** Longest delay a runtime timer takes; longer ones fire at once (with a warning) on Node, Bun and Deno. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * The real clock of the running process. Pending timers keep the process alive, as runtime timers do.
 * Delays longer than a runtime timer allows are chained, so "at least `ms`" holds for any delay; a NaN
 * or negative delay counts as 0.
 */
export function systemClock(): Clock {
  const delay = (ms: number) => (Number.isFinite(ms) || ms === Infinity ? Math.max(0, ms) : 0);
  return {
    now: () => Date.now(),
    monotonic: () => performance.now(),
    setTimer(ms, fn) {
      let handle: ReturnType<typeof setTimeout>;
      let remaining = delay(ms);
      const arm = () => {
        const step = Math.min(remaining, MAX_TIMER_MS);
        remaining -= step;
        handle = setTimeout(() => (remaining > 0 ? arm() : fn()), step);
      };
      arm();
      return () => clearTimeout(handle);
    },
    setInterval(ms, fn) {
      const handle = setInterval(fn, Math.min(MAX_TIMER_MS, Math.max(1, delay(ms))));
      return () => clearInterval(handle);
    },
  };
}

/**
 * Resolves after the event loop has run whatever is waiting (timers, I/O): long computations await it
 * between slices so that a heavy request cannot stall the server (a macrotask, not a microtask).
 */
export function yieldToEventLoop(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/**
 * Resolves at the next timer turn of `clock` (a 0 ms timer): yieldToEventLoop for code that also runs
 * under a simulated clock (snapshots encoded in slices), where only the clock moves time.
 */
export function nextTimerTurn(clock: Pick<Clock, "setTimer">): Promise<void> {
  return new Promise((resolve) => void clock.setTimer(0, resolve));
}

/**
 * Waits `ms` on `clock`: resolves true once they passed, or false as soon as `signal` aborts (the
 * timer then cancelled). A signal already aborted resolves false at once.
 */
export function delay(clock: Clock, ms: number, signal: AbortSignal): Promise<boolean> {
  return new Promise<boolean>((resolve) => {
    if (signal.aborted) return resolve(false);
    const onAbort = () => {
      cancel();
      resolve(false);
    };
    const cancel = clock.setTimer(Math.max(0, ms), () => {
      signal.removeEventListener("abort", onAbort);
      resolve(true);
    });
    signal.addEventListener("abort", onAbort, { once: true });
  });
}
