/**
 * Leader routines: federation-state anti-entropy on every datacenter's leader, and the primary's
 * hourly prune (Consul agent/consul/leader_federation_state_ae.go). Anti-entropy keeps this
 * datacenter's own record in the primary equal to its catalog's mesh gateways: a blocking read of the
 * local gateways and stored record, then, when they differ (IsSame), an upsert stamped with UpdatedAt,
 * applied here in the primary or sent to the primary from a secondary. Its loop is Consul's
 * retryLoopBackoff (a token bucket of 0.2 loops/s, burst 5; errors back off 2^n s up to 256 s) with the
 * 5 s minimum between syncs.
 */
import { formatGoTime } from "../connect/index.ts";
import { antiEntropyDecision, FEDERATION_STATE_ANTI_ENTROPY, FEDERATION_STATE_REPLICATION, statesToPrune } from "../federation/index.ts";
import type { CheckServiceNode, FederationState } from "../model/index.ts";
import type { Cancel, Clock, Logger } from "../platform/index.ts";
import type { StateCommand } from "../state/index.ts";
import { abortableLoop, loopBackoffMs, RoutineStopped, sleep, tokenBucket, untilStopped } from "./leader_federation_pace.ts";
import type { LeaderRoutine } from "./leader_routines.ts";

/** One blocking read of what anti-entropy compares: the stored record and the catalog's gateways. */
export interface AntiEntropyRead {
  /** max(federation-states table index, the gateways' index). */
  readonly index: number;
  /** This datacenter's stored federation state, or null. */
  readonly stored: FederationState | null;
  /** Every mesh-gateway instance of the local catalog (health-service-kind-nodes), in its order. */
  readonly gateways: readonly CheckServiceNode[];
}

export interface FederationStateAntiEntropyOptions {
  localDc: string;
  primaryDc: string;
  /** The `ft_fs` feature gate; while closed the loop checks again every minimum interval. */
  supported: () => boolean;
  /**
   * A consistent blocking read of the local state: returns once its index exceeds `minIndex` (at once
   * for 0). `signal` aborts on stop().
   */
  readLocal: (minIndex: number, signal: AbortSignal) => Promise<AntiEntropyRead>;
  /**
   * Writes a command through Raft in `datacenter` (undefined: this one); rejects when it fails or is
   * refused. A secondary's upsert names the primary (Consul's forwardDC of FederationState.Apply).
   */
  apply: (command: StateCommand, datacenter: string | undefined) => Promise<void>;
  clock: Clock;
  logger: Logger;
  /** Overrides of Consul's defaults (FEDERATION_STATE_ANTI_ENTROPY). */
  minIntervalMs?: number;
  burst?: number;
  maxBackoffMs?: number;
}

export function federationStateAntiEntropyRoutine(o: FederationStateAntiEntropyOptions): LeaderRoutine {
  const d = FEDERATION_STATE_ANTI_ENTROPY;
  const intervalMs = o.minIntervalMs ?? d.minIntervalMs;
  const isPrimary = o.primaryDc === o.localDc;

  /** One iteration: the index to block on next, or undefined when the gate kept it from reading. */
  const iterate = async (lastIndex: number, lastSyncAt: number | undefined, signal: AbortSignal): Promise<number | undefined> => {
    if (!o.supported()) {
      // Consul waits one interval before checking the gate again (no hot loop, no back-off).
      await sleep(o.clock, intervalMs, signal);
      return undefined;
    }
    if (lastSyncAt !== undefined) await sleep(o.clock, lastSyncAt + intervalMs - o.clock.monotonic(), signal);
    const read = await untilStopped(o.readLocal(lastIndex, signal), signal);
    const curr = { Datacenter: o.localDc, MeshGateways: read.gateways };
    if (antiEntropyDecision(read.stored ?? undefined, curr) === "skip") {
      o.logger.trace("federation state anti-entropy sync skipped; already up to date");
      return read.index;
    }
    const state = {
      Datacenter: o.localDc,
      ...(read.gateways.length > 0 ? { MeshGateways: read.gateways } : {}),
      UpdatedAt: formatGoTime(o.clock.now()),
      // 0: the primary's store sets it to the write's own Raft index.
      PrimaryModifyIndex: 0,
    };
    await untilStopped(o.apply({ type: "federation-state", op: "upsert", state }, isPrimary ? undefined : o.primaryDc), signal);
    o.logger.info("federation state anti-entropy synced");
    return read.index;
  };

  const loop = abortableLoop(async (signal) => {
    const bucket = tokenBucket(o.clock, 1000 / intervalMs, o.burst ?? d.burst);
    let failures = 0;
    let lastIndex = 0;
    let lastSyncAt: number | undefined;
    for (;;) {
      await sleep(o.clock, bucket.reserve(), signal);
      try {
        const index = await iterate(lastIndex, lastSyncAt, signal);
        if (index !== undefined) {
          lastIndex = index;
          lastSyncAt = o.clock.monotonic();
        }
        failures = 0;
      } catch (err) {
        if (err instanceof RoutineStopped || signal.aborted) throw new RoutineStopped();
        failures++;
        o.logger.error("error performing anti-entropy sync of federation state", { error: err });
        await sleep(o.clock, loopBackoffMs(failures, o.maxBackoffMs ?? d.maxBackoffMs), signal);
      }
    }
  }, (err) => o.logger.error("federation state anti-entropy stopped unexpectedly", { error: err }));

  return { name: "federation state anti-entropy", start: () => loop.start(), stop: () => loop.stop() };
}

/**
 * The primary's prune (federationStatePruning): every `intervalMs` (1 h), deletes the stored states of
 * datacenters the WAN pool no longer knows (statesToPrune), one Raft write each, stopping at the first
 * failure until the next tick. When the known datacenters cannot be read (no WAN pool yet) nothing is
 * pruned. Not behind the feature gate, as in Consul.
 */
export function federationStatePruneRoutine(o: {
  localDc: string;
  /** The stored states now. */
  localStates: () => readonly FederationState[];
  /** Datacenters known from the WAN pool; may throw while it is not running. */
  knownDatacenters: () => readonly string[];
  /** Writes a command through Raft in this datacenter; rejects when it fails or is refused. */
  apply: (command: StateCommand) => Promise<void>;
  clock: Clock;
  logger: Logger;
  intervalMs?: number;
}): LeaderRoutine & { prune(): Promise<void> } {
  let active = false;
  let cancel: Cancel | undefined;
  const prune = async () => {
    let known: readonly string[];
    try {
      known = o.knownDatacenters();
    } catch (err) {
      o.logger.warn("not pruning federation states: the known datacenters are unavailable", { error: err });
      return;
    }
    for (const dc of statesToPrune(o.localStates(), known, o.localDc)) {
      if (!active) return;
      o.logger.info("pruning stale federation state", { datacenter: dc });
      try {
        await o.apply({ type: "federation-state", op: "delete", datacenter: dc });
      } catch (err) {
        o.logger.error("error pruning stale federation states", { error: `Failed to delete federation state ${dc}: ${err instanceof Error ? err.message : String(err)}` });
        return;
      }
    }
  };
  return {
    name: "federation state pruning",
    start() {
      if (active) return;
      active = true;
      cancel = o.clock.setInterval(o.intervalMs ?? FEDERATION_STATE_REPLICATION.pruneIntervalMs, () => void prune());
    },
    stop() {
      active = false;
      cancel?.();
      cancel = undefined;
    },
    prune,
  };
}
