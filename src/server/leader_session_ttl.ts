/**
 * Leader routine: session TTLs (Consul's agent/consul/session_ttl.go). The leader times every TTL
 * session, whichever server proposed it; a new leader arms a timer for every TTL session it finds, and
 * a server that loses leadership drops them all. An expired session is destroyed through Raft.
 */
import type { Session } from "../model/index.ts";
import type { Clock, Logger } from "../platform/index.ts";
import { sessionGet, sessionList, WatchSet, type StateResult, type StateStore } from "../state/index.ts";
import type { DutyProposer, LeaderRoutine } from "./leader_routines.ts";
import { createSessionTimers } from "./session_timers.ts";

export interface SessionTtlRoutine extends LeaderRoutine {
  /** After the state machine applied an entry: times the session it created, while leader. */
  applied(result: StateResult): void;
  /** A renewal reached this server (renewals are routed to the leader): restarts the session's timer while leader. */
  renewed(session: Session): void;
}

export function sessionTtlRoutine(o: { clock: Clock; logger: Logger; store: StateStore; proposeDuty: DutyProposer }): SessionTtlRoutine {
  let active = false;
  const timers = createSessionTimers({
    clock: o.clock,
    logger: o.logger,
    expire: (id) => {
      o.logger.info("session expired: its TTL passed without a renewal", { session: id });
      void o.proposeDuty("destroying an expired session", { type: "session", op: "destroy", id });
    },
  });
  return {
    name: "session TTLs",
    start() {
      active = true;
      for (const s of sessionList(o.store, new WatchSet()).value) timers.reset(s);
    },
    stop() {
      active = false;
      timers.clearAll();
    },
    applied(result) {
      if (!active || result.type !== "session") return;
      const created = sessionGet(o.store, new WatchSet(), result.id).value;
      if (created) timers.reset(created);
    },
    renewed(session) {
      if (active) timers.reset(session);
    },
  };
}
