/**
 * Reconnect delays of the gateway's xDS client: exponential backoff with full jitter, as Envoy's
 * JitteredExponentialBackOffStrategy (source/common/common/backoff_strategy.cc) that its gRPC mux
 * uses for the ADS stream: each delay is uniform in [0, interval), then the interval doubles up to the
 * cap. Pure apart from the injected Rng.
 */
import type { Rng } from "../platform/index.ts";

export interface BackoffPolicy {
  /** The first interval, ms (> 0). */
  readonly baseMs: number;
  /** The cap of the interval, ms (>= baseMs). */
  readonly maxMs: number;
}

/** 250 ms doubling to 30 s (Envoy's xDS retry cap is 30 s). */
export const DEFAULT_BACKOFF: BackoffPolicy = { baseMs: 250, maxMs: 30_000 };

/** Successive reconnect delays; `reset()` after a healthy stream starts the sequence again. */
export class Backoff {
  private interval: number;

  /** Throws RangeError on a policy with baseMs <= 0 or maxMs < baseMs. */
  constructor(private readonly policy: BackoffPolicy, private readonly rng: Rng) {
    if (!(policy.baseMs > 0) || !(policy.maxMs >= policy.baseMs)) {
      throw new RangeError(`backoff: need 0 < baseMs <= maxMs, got ${policy.baseMs} and ${policy.maxMs}`);
    }
    this.interval = policy.baseMs;
  }

  /** The next delay in ms: an integer in [0, interval); the interval then doubles, up to maxMs. */
  next(): number {
    const interval = this.interval;
    this.interval = Math.min(this.policy.maxMs, interval * 2);
    return Math.floor(this.rng.next() * interval);
  }

  /** The interval the next delay is drawn below. */
  currentInterval(): number {
    return this.interval;
  }

  reset(): void {
    this.interval = this.policy.baseMs;
  }
}
