/**
 * Snapshots taken here, and the compaction that follows them. One at a time, without stopping the loop:
 * the state is captured in the loop's turn (`maybeStart`), then encoded in slices (pauses of one timer
 * turn between them), checksummed and written to its file off the loop; the outcome goes back to the
 * loop as an event, and in its turn `finish` records the snapshot in the log and compacts.
 */
import type { Snapshot } from "../raft/index.ts";
import { nextTimerTurn, type Clock, type Logger } from "../platform/index.ts";
import { driverSnapshotHead } from "./proposals.ts";
import type { RaftMetrics } from "./raft_metrics.ts";
import type { Replica } from "./replica.ts";
import { compactionIndex, snapshotDue, type SnapshotLimits } from "./snapshot_policy.ts";

/** How a snapshot taken here ended; `generation` is that of the log it was taken from (see logReplaced). */
export type SnapshotOutcome =
  | { readonly kind: "snapshot-written"; readonly generation: number; readonly meta: Snapshot; readonly bytes: number; readonly bytesCovered: number; readonly startedAt: number }
  | { readonly kind: "snapshot-failed"; readonly generation: number; readonly error: unknown };

export interface SnapshotTakerOptions {
  readonly clock: Clock;
  readonly logger: Logger;
  readonly metrics: RaftMetrics;
  readonly limits: SnapshotLimits;
  /** Queues a snapshot's outcome for the loop, which hands it to `finish` in its turn. */
  readonly deliver: (outcome: SnapshotOutcome) => void;
  /** True once the node stopped: a snapshot that finishes then writes no file (its directory may be gone). */
  readonly stopped: () => boolean;
}

export class SnapshotTaker {
  /** Monotonic time of the last snapshot taken here (start-up counts as one). */
  private lastAt: number;
  /** Command bytes applied since the last snapshot (the part of the in-memory log a snapshot frees). */
  private bytesSince = 0;
  /** Set when a follower needs a snapshot newer than the latest one (see wantFresh). */
  private freshWanted = false;
  /** The snapshot being taken; settles once its outcome is delivered. */
  private writing: Promise<void> | undefined;
  /** Counts log replacements (logReplaced); a snapshot taken from an older log is dropped. */
  private generation = 0;
  /** One timer turn: lets the event loop run between slices of snapshot work. */
  private readonly pause: () => Promise<void>;

  constructor(private readonly replica: Replica, private readonly o: SnapshotTakerOptions) {
    this.lastAt = o.clock.monotonic();
    this.pause = () => nextTimerTurn(o.clock);
  }

  /** The snapshot being taken, if any: settles (never rejects) once its outcome is delivered. */
  get inFlight(): Promise<void> | undefined {
    return this.writing;
  }

  /** A command of `bytes` bytes was applied (counts toward the byte limit). */
  noteApplied(bytes: number): void {
    this.bytesSince += bytes;
  }

  /** Asks for a snapshot at the applied index at the next chance, due or not (a follower's configuration is newer than the latest). */
  wantFresh(): void {
    this.freshWanted = true;
  }

  /** In the loop's turn, after a Ready: starts a snapshot at the applied index if one is wanted or due and none is being taken. */
  maybeStart(): void {
    const r = this.replica;
    if (r.applied <= r.snapshotIndex) return;
    if (!this.freshWanted && !snapshotDue(this.o.limits, r.applied - r.snapshotIndex, this.bytesSince, this.o.clock.monotonic() - this.lastAt)) return;
    if (this.writing) return;
    const term = r.storedTerm(r.applied);
    if (term === undefined || !r.confState) return;
    this.freshWanted = false;
    const { clock, metrics } = this.o;
    const startedAt = clock.monotonic();
    const meta: Snapshot = { index: r.applied, term, confState: r.confState };
    const bytesCovered = this.bytesSince;
    const head = driverSnapshotHead(r.appliedProposals.encode());
    const sm = r.stateMachine;
    const machine = sm.snapshotInSlices ? sm.snapshotInSlices(this.pause) : Promise.resolve([sm.snapshot()]);
    const store = r.log;
    const generation = this.generation;
    this.writing = machine
      .then(async (parts): Promise<SnapshotOutcome> => {
        const all = [head, ...parts];
        // Not for a log that was replaced, nor after stop.
        if (generation === this.generation && !this.o.stopped()) {
          const writeStart = clock.monotonic();
          await store.writeSnapshot(meta, all, this.pause);
          metrics.snapshotPersist.observe(clock.monotonic() - writeStart);
        }
        return { kind: "snapshot-written", generation, meta, bytesCovered, bytes: all.reduce((n, p) => n + p.length, 0), startedAt };
      })
      .catch((error): SnapshotOutcome => ({ kind: "snapshot-failed", generation, error }))
      .then(this.o.deliver);
  }

  /**
   * In the loop's turn: records a snapshot written by maybeStart in the log and compacts. Rethrows a
   * failure to write it (the loop's error); drops one from a replaced log, or one that a snapshot
   * installed from the leader meanwhile made old.
   */
  async finish(e: SnapshotOutcome): Promise<void> {
    this.writing = undefined;
    if (e.generation !== this.generation) return;
    if (e.kind === "snapshot-failed") throw e.error;
    const r = this.replica;
    if (e.meta.index <= r.snapshotIndex) return;
    r.storage.createSnapshot(e.meta.index, e.meta.confState);
    await r.log.recordSnapshot(e.meta);
    r.snapshotIndex = e.meta.index;
    this.lastAt = this.o.clock.monotonic();
    this.bytesSince = Math.max(0, this.bytesSince - e.bytesCovered);
    const compactTo = compactionIndex(this.o.limits, e.meta.index, r.storage.firstIndex(), (i) => {
      const entry = r.storage.entries(i, i + 1, Infinity)[0]!;
      return entry.type === "ConfChange" ? 0 : entry.data.length;
    });
    if (compactTo > r.storage.firstIndex()) {
      r.storage.compact(compactTo);
      r.log.compact(compactTo);
    }
    this.o.metrics.snapshotTake.observe(this.lastAt - e.startedAt);
    this.o.logger.info("took snapshot", { index: e.meta.index, bytes: e.bytes, compactedTo: r.storage.firstIndex() - 1 });
  }

  /**
   * The log is being replaced (storage_outage.ts), after `inFlight` settled: the outcome of a snapshot
   * taken from the old log will be dropped.
   */
  logReplaced(): void {
    this.writing = undefined;
    this.generation++;
  }

  /** The replica was reset to load a reopened log: nothing is applied since a snapshot. */
  restarted(): void {
    this.bytesSince = 0;
  }
}
