/**
 * Duties that run only on the Raft leader, started when this server gains leadership and stopped when
 * it loses it (Consul's establishLeadership / revokeLeadership in agent/consul/leader.go). A new duty
 * is one file implementing LeaderRoutine plus one entry in the server's list.
 */
import type { Logger } from "../platform/index.ts";
import type { StateCommand, StateResult } from "../state/index.ts";

export interface LeaderRoutine {
  /** For log lines: "session TTLs", "tombstone GC", ... */
  readonly name: string;
  /**
   * Called once on gaining leadership. Must return promptly; work that can fail is the routine's to
   * retry (with its own timers) for as long as it stays started. A throw is logged and ignored.
   */
  start(): void;
  /** Called once on losing leadership or at shutdown: cancels timers and drops leader-only state. */
  stop(): void;
}

export interface LeaderRunner {
  /** Starts every routine in list order on `true`, stops them in reverse order on `false`; repeats are ignored. */
  setLeader(leader: boolean): void;
  readonly leader: boolean;
}

export function createLeaderRunner(routines: readonly LeaderRoutine[], logger: Logger): LeaderRunner {
  let leader = false;
  const each = (list: readonly LeaderRoutine[], what: "start" | "stop") => {
    for (const r of list) {
      try {
        r[what]();
      } catch (err) {
        logger.error(`leader routine failed to ${what}`, { routine: r.name, error: err });
      }
    }
  };
  return {
    get leader() {
      return leader;
    },
    setLeader(now) {
      if (now === leader) return;
      leader = now;
      if (now) each(routines, "start");
      else each([...routines].reverse(), "stop");
    },
  };
}

/**
 * Proposes a routine's command through Raft. Refusals and failures are logged, never thrown: the routine
 * tries again on its next round.
 */
export type DutyProposer = (what: string, command: StateCommand) => Promise<void>;

export function dutyProposer(propose: (command: StateCommand) => Promise<StateResult>, logger: Logger): DutyProposer {
  return (what, command) =>
    propose(command).then((r) => {
      if (r.type === "error") logger.warn(`${what} was refused`, { error: r.error });
    }, (err) => logger.warn(`${what} failed`, { error: err }));
}
