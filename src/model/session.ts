/** Session types in Consul's wire shape (agent/structs Session, v1.8). */
import type { RaftIndex } from "./catalog.ts";

/** What happens to the locks a session holds when it is invalidated. */
export type SessionBehavior = "release" | "delete";

export interface ServiceCheckRef {
  readonly ID: string;
  readonly Namespace?: string;
}

export interface Session extends RaftIndex {
  readonly ID: string;
  readonly Name: string;
  readonly Node: string;
  /** Lock delay in nanoseconds (Go's time.Duration on the wire). Default 15 s. */
  readonly LockDelay: number;
  readonly Behavior: SessionBehavior;
  /** Go duration string ("30s") or "" for no TTL. Between 10s and 24h when set. */
  readonly TTL: string;
  /** Node check ids the session is tied to (default ["serfHealth"]). */
  readonly NodeChecks: readonly string[];
  readonly ServiceChecks: readonly ServiceCheckRef[] | null;
}

export const DEFAULT_LOCK_DELAY_NS = 15_000_000_000;
export const SESSION_TTL_MIN_MS = 10_000;
export const SESSION_TTL_MAX_MS = 24 * 3600_000;
/** Consul's cap on a session's lock delay (structs.MaxLockDelay): 60 s, in milliseconds. */
export const MAX_LOCK_DELAY_MS = 60_000;
