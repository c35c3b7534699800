import { ErrCompacted, ErrSnapOutOfDate, ErrUnavailable } from "./errors.ts";
import type { ConfState, Entry, HardState, Snapshot } from "./types.ts";
import { EMPTY_HARD_STATE, EMPTY_SNAPSHOT, limitSize } from "./types.ts";

/** What the core reads at start-up. */
export interface InitialState {
  readonly hardState: HardState;
  readonly confState: ConfState;
}

/**
 * Read side of the durable log the core replicates (etcd raft.Storage). All methods are synchronous;
 * a driver with asynchronous disks keeps a {@link MemoryStorage} as a write-through cache.
 *
 * Errors are thrown: `ErrCompacted` when an index is below the first retained entry, `ErrUnavailable`
 * when it is beyond the last one, `ErrSnapshotTemporarilyUnavailable` from `snapshot()` when it is being
 * built. Any other error is fatal.
 */
export interface Storage {
  initialState(): InitialState;
  /**
   * Entries in [lo, hi). `maxSize` limits the total payload but at least one entry is returned when
   * the range is non-empty. Throws ErrCompacted if lo <= the snapshot index.
   */
  entries(lo: number, hi: number, maxSize: number): readonly Entry[];
  /** Term of entry i; i may be the snapshot index (firstIndex - 1). */
  term(i: number): number;
  /** Index of the first entry that may be returned by entries() (snapshot index + 1). */
  firstIndex(): number;
  lastIndex(): number;
  /** The most recent snapshot's metadata (the bytes live with the application). */
  snapshot(): Snapshot;
}

/**
 * In-memory Storage (etcd MemoryStorage). `ents[0]` is a dummy holding the snapshot's index and term.
 * Writers (`append`, `applySnapshot`, `compact`, `createSnapshot`, `setHardState`) are called by the
 * application after handling a Ready, never by the core.
 */
export class MemoryStorage implements Storage {
  private hardState: HardState = EMPTY_HARD_STATE;
  private snap: Snapshot = EMPTY_SNAPSHOT;
  /** Index 0 is a dummy entry at the snapshot position. */
  private ents: Entry[] = [{ type: "Normal", term: 0, index: 0, data: new Uint8Array() }];

  initialState(): InitialState {
    return { hardState: this.hardState, confState: this.snap.confState };
  }

  setHardState(hs: HardState): void {
    this.hardState = hs;
  }

  entries(lo: number, hi: number, maxSize: number): readonly Entry[] {
    const offset = this.ents[0]!.index;
    if (lo <= offset) throw new ErrCompacted();
    if (hi > this.lastIndex() + 1) throw new Error(`entries' hi(${hi}) is out of bound lastindex(${this.lastIndex()})`);
    if (this.ents.length === 1) throw new ErrUnavailable();
    return limitSize(this.ents.slice(lo - offset, hi - offset), maxSize);
  }

  term(i: number): number {
    const offset = this.ents[0]!.index;
    if (i < offset) throw new ErrCompacted();
    if (i - offset >= this.ents.length) throw new ErrUnavailable();
    return this.ents[i - offset]!.term;
  }

  lastIndex(): number {
    return this.ents[0]!.index + this.ents.length - 1;
  }

  firstIndex(): number {
    return this.ents[0]!.index + 1;
  }

  snapshot(): Snapshot {
    return this.snap;
  }

  /** Replaces the contents with a snapshot (a follower installing one). Throws ErrSnapOutOfDate. */
  applySnapshot(snap: Snapshot): void {
    if (this.snap.index >= snap.index) throw new ErrSnapOutOfDate();
    this.snap = snap;
    this.ents = [{ type: "Normal", term: snap.term, index: snap.index, data: new Uint8Array() }];
  }

  /**
   * Records a snapshot at applied index `i` (the application serialized its state up to `i`), to be
   * served by snapshot(). Use `compact` afterwards to discard the log prefix.
   */
  createSnapshot(i: number, cs?: ConfState): Snapshot {
    if (i <= this.snap.index) throw new ErrSnapOutOfDate();
    const offset = this.ents[0]!.index;
    if (i > this.lastIndex()) throw new Error(`snapshot ${i} is out of bound lastindex(${this.lastIndex()})`);
    this.snap = { index: i, term: this.ents[i - offset]!.term, confState: cs ?? this.snap.confState };
    return this.snap;
  }

  /** Discards entries before `compactIndex` (which becomes the dummy). Throws ErrCompacted if already gone. */
  compact(compactIndex: number): void {
    const offset = this.ents[0]!.index;
    if (compactIndex <= offset) throw new ErrCompacted();
    if (compactIndex > this.lastIndex()) throw new Error(`compact ${compactIndex} is out of bound lastindex(${this.lastIndex()})`);
    const i = compactIndex - offset;
    const dummy: Entry = { type: "Normal", term: this.ents[i]!.term, index: this.ents[i]!.index, data: new Uint8Array() };
    this.ents = [dummy, ...this.ents.slice(i + 1)];
  }

  /**
   * Appends entries (which must be contiguous), truncating any conflicting suffix first. Entries at or
   * below the snapshot index are ignored.
   */
  append(entries: readonly Entry[]): void {
    if (entries.length === 0) return;
    const first = this.firstIndex();
    const last = entries[0]!.index + entries.length - 1;
    if (last < first) return;
    let ents = entries;
    if (first > ents[0]!.index) ents = ents.slice(first - ents[0]!.index);
    const offset = ents[0]!.index - this.ents[0]!.index;
    if (this.ents.length > offset) {
      this.ents = [...this.ents.slice(0, offset), ...ents];
    } else if (this.ents.length === offset) {
      this.ents.push(...ents);
    } else {
      throw new Error(`missing log entry [last: ${this.lastIndex()}, append at: ${ents[0]!.index}]`);
    }
  }
}
