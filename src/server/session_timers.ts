/**
 * Session TTL timers, kept by the leader only (Consul's agent/consul/session_ttl.go): a session with a
 * TTL is destroyed when it goes unrenewed for TTL x 2 (SessionTTLMultiplier). A new leader arms a
 * timer for every TTL session it finds; a server that loses leadership drops them all.
 */
import { parseDuration } from "../lib/index.ts";
import type { Session } from "../model/index.ts";
import type { Cancel, Clock, Logger } from "../platform/index.ts";

/** Consul's structs.SessionTTLMultiplier: the grace on top of the TTL before a session expires. */
export const SESSION_TTL_MULTIPLIER = 2;

export interface SessionTimers {
  /** Arms (or re-arms) the timer of `session` if it has a TTL. */
  reset(session: Session): void;
  /** Drops `id`'s timer (destroyed sessions). */
  clear(id: string): void;
  /** Drops every timer (leadership lost). */
  clearAll(): void;
  /** Number of armed timers. */
  size(): number;
}

export function createSessionTimers(o: { clock: Clock; logger: Logger; expire: (id: string) => void }): SessionTimers {
  const timers = new Map<string, Cancel>();
  const clear = (id: string) => {
    timers.get(id)?.();
    timers.delete(id);
  };
  return {
    reset(session) {
      clear(session.ID);
      if (!session.TTL) return;
      let ttlMs: number;
      try {
        ttlMs = parseDuration(session.TTL);
      } catch {
        o.logger.warn("session has an unparseable TTL; not timing it", { session: session.ID, ttl: session.TTL });
        return;
      }
      if (ttlMs <= 0) return;
      timers.set(session.ID, o.clock.setTimer(ttlMs * SESSION_TTL_MULTIPLIER, () => {
        timers.delete(session.ID);
        o.expire(session.ID);
      }));
    },
    clear,
    clearAll() {
      for (const cancel of timers.values()) cancel();
      timers.clear();
    },
    size: () => timers.size,
  };
}
