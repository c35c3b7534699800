/**
 * The session behind a lock or semaphore: created with the session TTL and renewed in the
 * background as Consul's api Session.RenewPeriodic does (every TTL/2, the TTL the server answers
 * taking over; after a failed renewal again in 1 s; giving up once a whole TTL passed without a
 * renewal, or when the session is gone). Ending it destroys the session, unless the renewal had
 * already given up (RenewPeriodic then no longer listens for its done channel).
 */
import { parseGoDuration } from "../../../lib/index.ts";
import { delay, type Clock } from "../../../platform/index.ts";
import type { LockApi } from "./api.ts";

/** A created session whose renewal runs until `end`. */
export interface RenewedSession {
  readonly id: string;
  /** Stops the renewal and, if it was still going, destroys the session (errors ignored). Idempotent. */
  end(): Promise<void>;
}

/** After a failed renewal, Consul tries again after this long. */
export const RENEW_RETRY_MS = 1_000;

/** A Go duration in ms, or undefined when it does not parse. */
function durationMs(text: string): number | undefined {
  try {
    return parseGoDuration(text) / 1e6;
  } catch {
    return undefined;
  }
}

/**
 * Creates a session from `entry` (Name, TTL and maybe Behavior) and starts renewing it on `clock`.
 * Rejects with `failed to create session: <cause>` when the agent refuses.
 */
export async function createRenewedSession(api: LockApi, clock: Clock, entry: { readonly Name: string; readonly TTL: string; readonly Behavior?: string }): Promise<RenewedSession> {
  let id: string;
  try {
    id = await api.createSession({ ...(entry.Behavior ? { Behavior: entry.Behavior } : {}), Name: entry.Name, TTL: entry.TTL });
  } catch (err) {
    throw new Error(`failed to create session: ${(err as Error).message}`);
  }
  const stop = new AbortController();
  const renewal = renewPeriodic(api, clock, id, entry.TTL, stop.signal);
  let ended: Promise<void> | undefined;
  return {
    id,
    end() {
      stop.abort();
      ended ??= renewal.then(async (destroy) => {
        if (destroy) await api.destroySession(id).catch(() => {});
      });
      return ended;
    },
  };
}

/** RenewPeriodic's loop: resolves true when stopped (the session is to be destroyed), false when it gave up. */
async function renewPeriodic(api: LockApi, clock: Clock, id: string, initialTtl: string, stop: AbortSignal): Promise<boolean> {
  let ttl = durationMs(initialTtl) ?? 0;
  let wait = ttl / 2;
  let lastRenew = clock.monotonic();
  for (;;) {
    if (clock.monotonic() - lastRenew > ttl) return false;
    if (!(await delay(clock, wait, stop))) return true;
    let entry: { readonly TTL: string } | undefined;
    try {
      entry = await api.renewSession(id);
    } catch {
      if (stop.aborted) return true;
      wait = RENEW_RETRY_MS;
      continue;
    }
    if (stop.aborted) return true;
    if (entry === undefined) return false;
    // Go ignores a TTL it cannot parse (and would then renew in a busy loop); keep the last one.
    ttl = durationMs(entry.TTL) ?? ttl;
    wait = ttl / 2;
    lastRenew = clock.monotonic();
  }
}
