/**
 * Leader routine: session TTLs (Consul's agent/consul/session_ttl.go). The leader times every TTL
 * session, whichever server proposed it; a new leader arms a timer for every TTL session it finds, and
 * a server that loses leadership drops them all. An expired session is destroyed through Raft.
 */
import type { Session } from "../model/index.ts";
import type { Clock, Logger } from "../platform/index.ts";
import { sessionGet, sessionList, WatchSet, type StateResult, type StateStore } from "../state/index.ts";
import type { GaugeHandle, SampleHandle } from "../telemetry/index.ts";
import type { DutyProposer, LeaderRoutine } from "./leader_routines.ts";
import { createSessionTimers } from "./session_timers.ts";

export interface SessionTtlRoutine extends LeaderRoutine {
  /** After the state machine applied an entry: times the session it created, while leader. */
  applied(result: StateResult): void;
  /** A renewal reached this server (renewals are routed to the leader): restarts the session's timer while leader. */
  renewed(session: Session): void;
}

/**
 * Consul's `session_ttl.active` (gauge: TTL sessions the leader times, set whenever that changes) and
 * `session_ttl.invalidate` (ms to destroy an expired session).
 */
export interface SessionTtlMetrics {
  readonly active: GaugeHandle;
  readonly invalidate: SampleHandle;
}

export function sessionTtlRoutine(o: { clock: Clock; logger: Logger; store: StateStore; proposeDuty: DutyProposer; metrics?: SessionTtlMetrics }): SessionTtlRoutine {
  let active = false;
  const timers = createSessionTimers({
    clock: o.clock,
    logger: o.logger,
    expire: (id) => {
      o.logger.info("session expired: its TTL passed without a renewal", { session: id });
      countActive();
      const startedAt = o.clock.monotonic();
      void o.proposeDuty("destroying an expired session", { type: "session", op: "destroy", id })
        .then(() => o.metrics?.invalidate.observe(o.clock.monotonic() - startedAt));
    },
  });
  const countActive = () => o.metrics?.active.set(timers.size());
  return {
    name: "session TTLs",
    start() {
      active = true;
      for (const s of sessionList(o.store, new WatchSet()).value) timers.reset(s);
      countActive();
    },
    stop() {
      active = false;
      timers.clearAll();
      countActive();
    },
    applied(result) {
      if (!active || result.type !== "session") return;
      const created = sessionGet(o.store, new WatchSet(), result.id).value;
      if (created) timers.reset(created);
      else timers.clear(result.id); // destroyed
      countActive();
    },
    renewed(session) {
      if (active) timers.reset(session);
    },
  };
}
