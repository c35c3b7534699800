/**
 * A token bucket over the injected Clock, shared by every ADS stream of one server: Consul's
 * `xds.update_max_per_second` (default 250), "the number of proxy configuration updates across all
 * connected xDS streams that are allowed per second". Like Consul (agent/proxycfg/manager.go,
 * `rate.NewLimiter(limit, 1)`), the burst is one update and a rate of 0 means no limit.
 */
import type { Cancel, Clock } from "../platform/index.ts";

/** Consul's default `xds.update_max_per_second`. */
export const DEFAULT_UPDATES_PER_SECOND = 250;

export interface UpdateLimiter {
  /**
   * Calls `granted` once a token is available: synchronously, before returning, when one is
   * available now and nobody waits; otherwise later, first come first served, from a clock timer.
   * The returned canceller withdraws a request not yet granted (no-op after).
   */
  acquire(granted: () => void): Cancel;
  /** Changes the rate (updates per second; 0 = unlimited), e.g. on a config reload. Waiters keep their place. */
  setRate(perSecond: number): void;
  /** The current rate (0 = unlimited). */
  rate(): number;
  /** Requests waiting for a token. */
  waiting(): number;
}

/** Creates a limiter allowing `perSecond` updates per second with a burst of one (0 = unlimited). */
export function createUpdateLimiter(clock: Clock, perSecond: number = DEFAULT_UPDATES_PER_SECOND): UpdateLimiter {
  if (!(perSecond >= 0) || !Number.isFinite(perSecond)) throw new RangeError(`xds: bad update rate ${perSecond}`);
  let rate = perSecond;
  let tokens = 1;
  let last = clock.monotonic();
  const queue: Array<{ granted: () => void; live: boolean }> = [];
  let timer: Cancel | undefined;

  const refill = () => {
    const now = clock.monotonic();
    if (rate > 0) tokens = Math.min(1, tokens + ((now - last) * rate) / 1000);
    last = now;
  };
  const drain = () => {
    timer = undefined;
    refill();
    while (queue.length > 0) {
      const head = queue[0]!;
      if (!head.live) {
        queue.shift();
        continue;
      }
      if (rate > 0 && tokens < 1) break;
      queue.shift();
      if (rate > 0) tokens -= 1;
      head.granted();
    }
    schedule();
  };
  const schedule = () => {
    if (timer || queue.length === 0 || rate === 0) {
      if (rate === 0 && queue.length > 0 && !timer) timer = clock.setTimer(0, drain);
      return;
    }
    const waitMs = Math.max(0, Math.ceil(((1 - tokens) * 1000) / rate));
    timer = clock.setTimer(waitMs, drain);
  };

  return {
    acquire(granted) {
      refill();
      if (queue.length === 0 && (rate === 0 || tokens >= 1)) {
        if (rate > 0) tokens -= 1;
        granted();
        return () => {};
      }
      const entry = { granted, live: true };
      queue.push(entry);
      schedule();
      return () => {
        entry.live = false;
      };
    },
    setRate(perSecond) {
      if (!(perSecond >= 0) || !Number.isFinite(perSecond)) throw new RangeError(`xds: bad update rate ${perSecond}`);
      refill();
      rate = perSecond;
      timer?.();
      timer = undefined;
      schedule();
    },
    rate: () => rate,
    waiting: () => queue.filter((e) => e.live).length,
  };
}
