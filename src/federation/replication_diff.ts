/**
 * The decisions of federation-state replication and anti-entropy as pure functions (Consul's
 * agent/consul/replication.go, federation_state_replication.go and leader_federation_state_ae.go).
 * The leader routines in src/server fetch, apply through Raft, pace and retry; these say what to write.
 */
import { isSameFederationState } from "../model/index.ts";
import type { FederationState } from "../model/index.ts";

/** Consul's defaults (agent/consul/config.go, replication.go, leader_federation_state_ae.go). */
export const FEDERATION_STATE_REPLICATION = {
  /** Replication rounds per second (token bucket rate) and burst. */
  rate: 1,
  burst: 5,
  /** Raft applies per second while writing a round's changes. */
  applyLimit: 100,
  /** Longest wait between failed rounds (RetryWaiter, 10% jitter). */
  maxRetryWaitMs: 120_000,
  /** How often the primary's leader prunes states of datacenters it no longer knows. */
  pruneIntervalMs: 3_600_000,
} as const;

/** Anti-entropy pacing (retryLoopBackoff in leader_connect.go: 0.2 loops/s, burst 5, errors back off 2^n s). */
export const FEDERATION_STATE_ANTI_ENTROPY = {
  /** At most one sync per this interval (1 / 0.2 loops per second). */
  minIntervalMs: 5_000,
  burst: 5,
  /** Longest back-off after consecutive errors. */
  maxBackoffMs: 256_000,
} as const;

/** What one replication round must do to make the local states match the primary's. */
export interface ReplicationDiff {
  /** Datacenters whose local state the primary no longer has, sorted. Apply these first. */
  readonly deletions: readonly string[];
  /** States to upsert, sorted by datacenter, each with PrimaryModifyIndex = the primary's ModifyIndex. */
  readonly updates: readonly FederationState[];
  /** The lastRemoteIndex of the next round once these are applied (the remote index). */
  readonly nextIndex: number;
  /** The remote index went backwards (the primary was rebuilt): every state present on both sides is rewritten. */
  readonly fullResync: boolean;
}

/** Datacenter order of Consul's sort.Slice on Datacenter (byte order for the ASCII names datacenters have). */
const byDatacenter = (a: FederationState, b: FederationState) => (a.Datacenter < b.Datacenter ? -1 : a.Datacenter > b.Datacenter ? 1 : 0);

/**
 * The replication merge-walk (IndexReplicator.Replicate + DiffRemoteAndLocalState). Both lists are
 * sorted by datacenter and walked together: a state only local is deleted; only remote is upserted; on
 * both sides it is upserted when the remote ModifyIndex is above `lastRemoteIndex`. When `remoteIndex`
 * is below `lastRemoteIndex` the remote side was rebuilt, so the comparison uses 0 (a full resync).
 * Local Raft indexes are never compared. The inputs are not modified.
 *
 * After a failed round (fetch or apply) the runner sets its lastRemoteIndex to 0 (full sync next time).
 */
export function diffFederationStates(
  local: readonly FederationState[],
  remote: readonly FederationState[],
  lastRemoteIndex: number,
  remoteIndex: number,
): ReplicationDiff {
  const fullResync = remoteIndex < lastRemoteIndex;
  const since = fullResync ? 0 : lastRemoteIndex;
  const l = [...local].sort(byDatacenter);
  const r = [...remote].sort(byDatacenter);
  const deletions: string[] = [];
  const changed: FederationState[] = [];
  let i = 0, j = 0;
  while (i < l.length && j < r.length) {
    const a = l[i]!, b = r[j]!;
    if (a.Datacenter === b.Datacenter) {
      if (b.ModifyIndex > since) changed.push(b);
      i++;
      j++;
    } else if (a.Datacenter < b.Datacenter) {
      deletions.push(a.Datacenter);
      i++;
    } else {
      changed.push(b);
      j++;
    }
  }
  for (; i < l.length; i++) deletions.push(l[i]!.Datacenter);
  for (; j < r.length; j++) changed.push(r[j]!);
  const updates = changed.map((s) => ({ ...s, PrimaryModifyIndex: s.ModifyIndex }));
  return { deletions, updates, nextIndex: remoteIndex, fullResync };
}

/**
 * Federation-state anti-entropy (every datacenter's leader): `curr` is this datacenter's state built
 * from its catalog's mesh gateways (all of them, not only wanfed-tagged ones), `prev` the stored one.
 * "skip" when a stored state exists and IsSame holds (UpdatedAt and indexes ignored), else "upsert"
 * (the caller stamps UpdatedAt and writes locally in the primary or forwards to the primary).
 */
export function antiEntropyDecision(
  prev: Pick<FederationState, "Datacenter" | "MeshGateways"> | undefined,
  curr: Pick<FederationState, "Datacenter" | "MeshGateways">,
): "skip" | "upsert" {
  return prev !== undefined && isSameFederationState(prev, curr) ? "skip" : "upsert";
}

/**
 * The primary leader's hourly prune (pruneStaleFederationStates): the datacenters of stored states that
 * the WAN no longer knows (exact names, as router.HasDatacenter), in the order given. `localDc` is never
 * pruned (Consul's router always knows its own datacenter; an empty `known` must not wipe it).
 */
export function statesToPrune(states: readonly Pick<FederationState, "Datacenter">[], known: Iterable<string>, localDc: string): readonly string[] {
  const knownSet = new Set(known);
  knownSet.add(localDc);
  return states.filter((s) => !knownSet.has(s.Datacenter)).map((s) => s.Datacenter);
}
