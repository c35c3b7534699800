/**
 * Leader routine: KV tombstone GC (Consul's agent/consul/state/tombstone_gc.go driven by the leader).
 * Deleted keys leave tombstones so blocking queries on a prefix see the delete; the leader reaps
 * them through Raft once they are older than the TTL, in buckets of the granularity.
 */
import type { Clock } from "../platform/index.ts";
import { createTombstoneGc } from "../state/index.ts";
import type { DutyProposer, LeaderRoutine } from "./leader_routines.ts";

/** Consul's defaults: tombstones live 15 minutes, expiring in 30-second buckets. */
export const TOMBSTONE_TTL_MS = 15 * 60_000;
export const TOMBSTONE_GRANULARITY_MS = 30_000;

export interface TombstoneGcRoutine extends LeaderRoutine {
  /** The store wrote a tombstone at `index` (called on every server; only the leader's clock runs). */
  hint(index: number): void;
}

/** `lastIndex`: the store's latest index, from which a new leader times the tombstones it inherits. */
export function tombstoneGcRoutine(o: { clock: Clock; proposeDuty: DutyProposer; lastIndex: () => number }): TombstoneGcRoutine {
  const gc = createTombstoneGc({
    clock: o.clock,
    ttlMs: TOMBSTONE_TTL_MS,
    granularityMs: TOMBSTONE_GRANULARITY_MS,
    onExpire: (reapIndex) => void o.proposeDuty("reaping KV tombstones", { type: "tombstone-reap", reapIndex }),
  });
  return {
    name: "tombstone GC",
    start() {
      gc.setEnabled(true);
      gc.hint(o.lastIndex());
    },
    stop() {
      gc.setEnabled(false);
    },
    hint: (index) => gc.hint(index),
  };
}
