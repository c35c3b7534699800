/**
 * Leader routine of a secondary datacenter: its Connect CA follows the primary's (Consul's
 * initializeSecondaryCA and secondaryCARootWatch in agent/consul/leader_connect.go). A blocking read
 * of the primary's roots; on the first answer and whenever they change, adoptPrimaryRoots takes the
 * primary's trust domain and roots, and when the active root is new (or this datacenter has no
 * intermediate yet) a fresh intermediate key whose CSR the primary signs. Failures back off (1 s
 * doubling to 256 s, Consul's retryLoopBackoff) for as long as this server stays leader.
 *
 * Only with `connect { enabled = true }` and `primary_datacenter` naming another datacenter.
 */
import type { ReadQuery } from "../model/index.ts";
import type { Clock, Logger } from "../platform/index.ts";
import { decodeWire, encodeWire, type StateCaller } from "../rpc/index.ts";
import type { ConnectCa, PrimaryRoots } from "./connect_ca.ts";
import { abortableLoop, loopBackoffMs, sleep, untilStopped } from "./leader_federation_pace.ts";
import type { LeaderRoutine } from "./leader_routines.ts";

/** How long one blocking read of the primary's roots waits for a change (Consul's blocking default). */
export const PRIMARY_ROOTS_WAIT_MS = 5 * 60_000;
/** Cap of the back-off between failed rounds (Consul's retryLoopBackoff, 256 s). */
export const SECONDARY_CA_MAX_BACKOFF_MS = 256_000;

export interface SecondaryCaOptions {
  readonly ca: ConnectCa;
  readonly primaryDc: string;
  /** The StateCaller once the RPC layer is up (reads of and calls to the primary go through it). */
  readonly state: () => StateCaller | undefined;
  readonly clock: Clock;
  readonly logger: Logger;
}

export function secondaryCaRoutine(o: SecondaryCaOptions): LeaderRoutine {
  const loop = abortableLoop(async (signal) => {
    let index = 0;
    let failures = 0;
    for (;;) {
      try {
        const caller = o.state();
        if (!caller) throw new Error("the RPC layer is not up yet");
        const out = await untilStopped(
          caller.query(encodeWire({ type: "ca-roots" } satisfies ReadQuery), { datacenter: o.primaryDc, minIndex: index, maxWaitMs: PRIMARY_ROOTS_WAIT_MS, signal }),
          signal,
        );
        const primary = decodeWire<PrimaryRoots>(out.result);
        // An index that went back (the primary was restored) starts the watch over.
        index = out.index < index ? 0 : out.index;
        await untilStopped(o.ca.adoptPrimaryRoots(primary, (csr) => caller.signIntermediate(csr, o.primaryDc)), signal);
        failures = 0;
      } catch (err) {
        if (signal.aborted) throw err;
        failures++;
        index = 0;
        const wait = loopBackoffMs(failures, SECONDARY_CA_MAX_BACKOFF_MS);
        o.logger.warn("secondary CA: following the primary's CA failed; will retry", { primary: o.primaryDc, error: err, retry_in_ms: wait });
        await sleep(o.clock, wait, signal);
      }
    }
  }, (err) => o.logger.error("secondary CA routine crashed", { error: err }));
  return { name: "secondary Connect CA", start: () => loop.start(), stop: () => loop.stop() };
}
