/**
 * The wait before retrying a failed background fetch: Consul's agent/cache `backOffWait`
 * (`CacheRefreshBackoffMin` = 3, `CacheRefreshMaxWait` = 1 minute).
 */
import type { UnitRandom } from "../../connect/index.ts";

/** Failures retried without waiting (`CacheRefreshBackoffMin`). */
export const REFRESH_BACKOFF_MIN_FAILURES = 3;
/** The longest base wait between retries (`CacheRefreshMaxWait`). */
export const REFRESH_MAX_WAIT_MS = 60_000;

/**
 * 0 for the first 3 consecutive failures, then 2^(n-3) seconds capped at 1 minute, plus a random
 * stagger of up to as much again (`lib.RandomStagger`), so agents do not retry in step.
 */
export function refreshBackoffMs(failures: number, rng: UnitRandom): number {
  if (failures <= REFRESH_BACKOFF_MIN_FAILURES) return 0;
  const shift = Math.min(failures - REFRESH_BACKOFF_MIN_FAILURES, 30);
  const wait = Math.min(REFRESH_MAX_WAIT_MS, 2 ** shift * 1000);
  return wait + Math.floor(rng.next() * wait);
}
