/**
 * The driver's local replica: the Raft core's in-memory log, the durable log behind it, and the state
 * machine (with the applied-proposals table that travels in its snapshots) as far as it is applied.
 *
 * One object shared by node.ts and the parts split out of it (snapshot_taker.ts, snapshot_transfer.ts,
 * storage_outage.ts). They read and write its fields in the loop's turn only, or while no loop runs (a
 * storage outage). Reopening the log after a full disk replaces `storage` and `log`: code that holds
 * either across an await reads the field again afterwards, or (a snapshot being written) knows that
 * it holds the old one.
 */
import { MemoryStorage, type ConfState, type Snapshot } from "../raft/index.ts";
import type { StateMachine } from "./node_types.ts";
import type { LogStore, RecoveredLog } from "./ports.ts";
import { AppliedProposals, decodeDriverSnapshot, encodeDriverSnapshot } from "./proposals.ts";

export class Replica {
  /** What the Raft core reads: the log from the last snapshot on. Replaced by `reset`. */
  storage = new MemoryStorage();
  /** The durable log. Replaced by a reopened one after a storage failure (storage_outage.ts). */
  log: LogStore;
  /** Index of the last entry applied to the state machine. */
  applied = 0;
  /** Index of the latest snapshot the log holds (taken here, installed from a leader, or loaded). */
  snapshotIndex = 0;
  /** The configuration as of `applied`; undefined until one is loaded or applied. */
  confState: ConfState | undefined;
  /** Proposals applied so far (deduplication); part of every snapshot. */
  readonly appliedProposals = new AppliedProposals();

  constructor(log: LogStore, readonly stateMachine: Pick<StateMachine<unknown>, "snapshot" | "snapshotInSlices" | "restore">) {
    this.log = log;
  }

  /** Term of the stored entry at `index`, or undefined when it is compacted away or not stored yet. */
  storedTerm(index: number): number | undefined {
    if (index === 0) return 0;
    try {
      return this.storage.term(index);
    } catch {
      return undefined;
    }
  }

  /**
   * Loads what the log recovered into the in-memory log and the state machine (from its snapshot; the
   * core then hands back the committed entries after it), as at start-up. Throws when the snapshot the
   * log records has no file.
   */
  load(initial: RecoveredLog): void {
    if (initial.snapshot.index > 0) {
      this.storage.applySnapshot(initial.snapshot);
      const snap = this.log.loadSnapshot();
      if (!snap || snap.meta.index !== initial.snapshot.index) throw new Error(`snapshot ${initial.snapshot.index} is recorded in the log but its file is missing`);
      this.restore(snap.data);
      this.applied = this.snapshotIndex = initial.snapshot.index;
      this.confState = initial.snapshot.confState;
    }
    // A snapshot holds only committed state, so the commit index is at least its index even when the
    // hard state that said so was not synced before a crash (commit-only updates need no fsync).
    const hs = initial.hardState;
    this.storage.setHardState(hs.commit < initial.snapshot.index ? { ...hs, commit: initial.snapshot.index } : hs);
    if (initial.entries.length) this.storage.append(initial.entries);
  }

  /**
   * Makes `meta`, already durable in the log, the replica's state: the in-memory log starts after it,
   * and the state machine is restored from `data` (absent for a new cluster's empty first snapshot).
   */
  adopt(meta: Snapshot, data?: Uint8Array): void {
    this.storage.applySnapshot(meta);
    if (data) this.restore(data);
    this.applied = meta.index;
    this.snapshotIndex = meta.index;
    this.confState = meta.confState;
  }

  /** Starts again from nothing, to load a reopened log: an empty in-memory log, nothing applied. */
  reset(): void {
    this.storage = new MemoryStorage();
    this.applied = this.snapshotIndex = 0;
  }

  /** The bytes of a snapshot at the current applied index: the dedup table and the state machine. */
  snapshotBytes(): Uint8Array {
    return encodeDriverSnapshot(this.appliedProposals.encode(), this.stateMachine.snapshot());
  }

  private restore(data: Uint8Array): void {
    const { table, machine } = decodeDriverSnapshot(data);
    this.appliedProposals.restore(table);
    this.stateMachine.restore(machine);
  }
}

/** The first configuration of a new cluster: the same snapshot (index 1, term 1) on every bootstrapping server. */
export function bootstrapSnapshot(voters: readonly string[]): Snapshot {
  return { index: 1, term: 1, confState: { voters: [...voters].sort(), learners: [], votersOutgoing: [], learnersNext: [], autoLeave: false } };
}
