/**
 * Leader routine: federation-state replication on a secondary datacenter's leader (Consul 1.8
 * agent/consul/replication.go Replicator.Run and IndexReplicator.Replicate, with
 * federation_state_replication.go as the delegate). Each round, paced by a token bucket, reads the
 * primary's list with a blocking stale query from the last remote index, diffs it against the local
 * list (diffFederationStates) and writes the difference through Raft: deletions, then updates, at most
 * `applyLimit` per second. A failed round forces a full resync and waits (RetryWaiter) before the next.
 */
import { diffFederationStates, FEDERATION_STATE_REPLICATION } from "../federation/index.ts";
import type { FederationState, FederationStateWrite } from "../model/index.ts";
import type { Clock, Logger, Rng } from "../platform/index.ts";
import type { StateCommand } from "../state/index.ts";
import type { GaugeHandle } from "../telemetry/index.ts";
import { abortableLoop, retryWaiterMs, RoutineStopped, sleep, tokenBucket, untilStopped } from "./leader_federation_pace.ts";
import type { LeaderRoutine } from "./leader_routines.ts";

/** Consul's errFederationStatesNotSupported: a round refused while the `ft_fs` gate is closed. */
export const FEDERATION_STATES_NOT_SUPPORTED = "Not all servers in the datacenter support federation states - preventing replication";

/** One answer of the primary's federation-state list. */
export interface RemoteFederationStates {
  readonly index: number;
  readonly states: readonly FederationState[];
}

export interface FederationStateReplicationOptions {
  /** The `ft_fs` feature gate; while closed each round fails with FEDERATION_STATES_NOT_SUPPORTED. */
  supported: () => boolean;
  /**
   * The primary's states: a blocking `federation-state-list` read in the primary datacenter, stale
   * allowed, returning once its index exceeds `minIndex` (at once for 0). `signal` aborts on stop():
   * the read should then be cancelled (rejecting, typically with an AbortError); nothing it answers
   * after the abort is applied, and its rejection is not counted as a failed round.
   */
  fetchRemote: (minIndex: number, signal: AbortSignal) => Promise<RemoteFederationStates>;
  /** The local states now (this server's store). */
  localStates: () => readonly FederationState[];
  /** Writes a command through Raft in this datacenter; rejects when it fails or is refused. */
  apply: (command: StateCommand) => Promise<void>;
  /**
   * Each fetch's outcome (Consul feeds SetLastFederationStateReplicationError(err, true) to the gateway
   * locator): true when the primary answered, false when the read failed. Not called for rounds the
   * feature gate refuses, nor for local apply failures.
   */
  onResult?: (ok: boolean) => void;
  /**
   * Consul's `leader.replication.federation-state.status` (1 after a successful round, 0 after a failed
   * one) and `.index` (the primary's index the last successful round synced to).
   */
  metrics?: { readonly status: GaugeHandle; readonly index: GaugeHandle };
  clock: Clock;
  /** Draws the retry wait's jitter. */
  rng: Rng;
  logger: Logger;
  /** Overrides of Consul's defaults (FEDERATION_STATE_REPLICATION). */
  rate?: number;
  burst?: number;
  applyLimit?: number;
  maxRetryWaitMs?: number;
}

export interface FederationStateReplicationRoutine extends LeaderRoutine {
  /** The remote index the next round reads from (0: a full sync). */
  lastRemoteIndex(): number;
}

/** The upsert a replicated state becomes: the primary's record without its (primary) Raft indexes. */
function toWrite(s: FederationState): FederationStateWrite {
  const { CreateIndex: _c, ModifyIndex: _m, ...w } = s;
  return w;
}

export function federationStateReplicationRoutine(o: FederationStateReplicationOptions): FederationStateReplicationRoutine {
  const d = FEDERATION_STATE_REPLICATION;
  const applyGapMs = 1000 / (o.applyLimit ?? d.applyLimit);
  let lastRemoteIndex = 0;

  /** Applies `commands` in order, each at least applyGapMs after the previous (Consul's ticker of 1s/ApplyLimit). */
  const applyPaced = async (commands: readonly StateCommand[], signal: AbortSignal) => {
    for (let i = 0; i < commands.length; i++) {
      if (i > 0) await sleep(o.clock, applyGapMs, signal);
      await untilStopped(o.apply(commands[i]!), signal);
    }
  };

  /** One IndexReplicator.Replicate round; returns the remote index it synced to. */
  const replicate = async (last: number, signal: AbortSignal): Promise<number> => {
    if (!o.supported()) throw new Error(FEDERATION_STATES_NOT_SUPPORTED);
    let remote: RemoteFederationStates;
    try {
      remote = await untilStopped(o.fetchRemote(last, signal), signal);
    } catch (err) {
      // The read cancelled by stop() (an AbortError, should it win the race) is a stop, not a failure.
      if (err instanceof RoutineStopped || signal.aborted) throw new RoutineStopped();
      o.onResult?.(false);
      throw new Error(`failed to retrieve federation states: ${err instanceof Error ? err.message : String(err)}`);
    }
    o.onResult?.(true);
    const diff = diffFederationStates(o.localStates(), remote.states, last, remote.index);
    if (diff.fullResync) {
      o.logger.warn("federation state replication remote index moved backwards, forcing a full federation state sync", { from: last, to: remote.index });
    }
    if (diff.deletions.length > 0 || diff.updates.length > 0) {
      o.logger.debug("federation state replication", { deletions: diff.deletions.length, updates: diff.updates.length });
    }
    await applyPaced(diff.deletions.map((datacenter) => ({ type: "federation-state", op: "delete", datacenter })), signal);
    await applyPaced(diff.updates.map((s) => ({ type: "federation-state", op: "upsert", state: toWrite(s) })), signal);
    return diff.nextIndex;
  };

  const loop = abortableLoop(async (signal) => {
    const bucket = tokenBucket(o.clock, o.rate ?? d.rate, o.burst ?? d.burst);
    let failures = 0;
    lastRemoteIndex = 0;
    for (;;) {
      await sleep(o.clock, bucket.reserve(), signal);
      try {
        lastRemoteIndex = await replicate(lastRemoteIndex, signal);
        failures = 0;
        o.metrics?.status.set(1);
        o.metrics?.index.set(lastRemoteIndex);
        o.logger.debug("federation state replication completed", { remoteIndex: lastRemoteIndex });
      } catch (err) {
        if (err instanceof RoutineStopped || signal.aborted) throw new RoutineStopped();
        // A failed round (fetch or apply) makes the next one a full sync (Replicator.Run).
        lastRemoteIndex = 0;
        failures++;
        o.metrics?.status.set(0);
        o.logger.warn("federation state replication error (will retry if still leader)", { error: err });
        await sleep(o.clock, retryWaiterMs(failures, o.maxRetryWaitMs ?? d.maxRetryWaitMs, o.rng), signal);
      }
    }
  }, (err) => o.logger.error("federation state replication stopped unexpectedly", { error: err }));

  return {
    name: "federation state replication",
    start: () => loop.start(),
    stop: () => loop.stop(),
    lastRemoteIndex: () => lastRemoteIndex,
  };
}
