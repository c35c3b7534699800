/**
 * Leader routine: the Connect CA (Consul's initializeCA in establishLeadership). The leader creates
 * the cluster ID and first root when the state has none, retrying while it stays leader. Only with
 * `connect { enabled = true }` (always with -dev).
 */
import type { Cancel, Clock, Logger } from "../platform/index.ts";
import type { ConnectCa } from "./connect_ca.ts";
import type { LeaderRoutine } from "./leader_routines.ts";

/** Retry delay of a failed CA initialisation while this server stays leader. */
export const CA_INIT_RETRY_MS = 5_000;

export function connectCaRoutine(o: { ca: ConnectCa; enabled: boolean; clock: Clock; logger: Logger }): LeaderRoutine {
  let active = false;
  let retry: Cancel | undefined;
  const initialize = () => {
    retry = undefined;
    if (!active || !o.enabled) return;
    o.ca.initialize().catch((err) => {
      o.logger.warn("initializing the Connect CA failed; will retry", { error: err });
      if (active) retry = o.clock.setTimer(CA_INIT_RETRY_MS, initialize);
    });
  };
  return {
    name: "Connect CA",
    start() {
      active = true;
      initialize();
    },
    stop() {
      active = false;
      retry?.();
      retry = undefined;
    },
  };
}
