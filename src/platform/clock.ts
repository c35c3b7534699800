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

/** The real clock of the running process. Timers are unref'd where the runtime allows, so they never keep the process alive by themselves. */
export function systemClock(): Clock {
  return {
    now: () => Date.now(),
    monotonic: () => performance.now(),
    setTimer(ms, fn) {
      const handle = setTimeout(fn, Math.max(0, ms));
      return () => clearTimeout(handle);
    },
    setInterval(ms, fn) {
      const handle = setInterval(fn, Math.max(1, ms));
      return () => clearInterval(handle);
    },
  };
}
