import { ErrCompacted, ErrUnavailable } from "./errors.ts";
import { Unstable } from "./log_unstable.ts";
import type { Storage } from "./storage.ts";
import type { Entry, Snapshot } from "./types.ts";
import { limitSize } from "./types.ts";

/** No size limit. */
export const NO_LIMIT = Number.MAX_SAFE_INTEGER;

/**
 * The replicated log as the core sees it (etcd raftLog): stable entries in `storage` followed by the
 * `unstable` tail, plus the commit and applied cursors. Invariant: applied <= committed <= lastIndex().
 */
export class RaftLog {
  readonly unstable: Unstable;
  committed: number;
  applied: number;

  constructor(readonly storage: Storage, readonly maxNextEntsSize: number = NO_LIMIT) {
    const first = storage.firstIndex();
    const last = storage.lastIndex();
    this.unstable = new Unstable(last + 1);
    this.committed = first - 1;
    this.applied = first - 1;
  }

  /**
   * Appends `ents` after (index, logTerm) if that entry matches (the AppendEntries consistency check,
   * Raft §5.3). Returns the last index of the new entries, or undefined on mismatch. Conflicting
   * entries are truncated; committing is bounded by the last new index.
   */
  maybeAppend(index: number, logTerm: number, committed: number, ents: readonly Entry[]): number | undefined {
    if (!this.matchTerm(index, logTerm)) return undefined;
    const lastNew = index + ents.length;
    const ci = this.findConflict(ents);
    if (ci !== 0) {
      if (ci <= this.committed) throw new Error(`entry ${ci} conflicts with committed entry [committed(${this.committed})]`);
      this.append(ents.slice(ci - (index + 1)));
    }
    this.commitTo(Math.min(committed, lastNew));
    return lastNew;
  }

  /** Appends to the unstable tail (truncating after ents[0].index - 1); returns the new last index. */
  append(ents: readonly Entry[]): number {
    if (ents.length === 0) return this.lastIndex();
    const after = ents[0]!.index - 1;
    if (after < this.committed) throw new Error(`after(${after}) is out of range [committed(${this.committed})]`);
    this.unstable.truncateAndAppend(ents);
    return this.lastIndex();
  }

  /**
   * First index in `ents` whose term differs from ours (or that we lack); 0 if all match. Entries must be
   * contiguous.
   */
  findConflict(ents: readonly Entry[]): number {
    for (const e of ents) if (!this.matchTerm(e.index, e.term)) return e.index;
    return 0;
  }

  /**
   * Fast backtracking (etcd findConflictByTerm): the largest index <= `index` whose term is <= `term`,
   * with its term. Entries above it cannot match a log whose entry at `index` has `term`. An unknown
   * term (compacted) is reported as 0 and treated as a possible match.
   */
  findConflictByTerm(index: number, term: number): { index: number; term: number } {
    for (; index > 0; index--) {
      const ours = this.knownTerm(index);
      if (ours === undefined) return { index, term: 0 };
      if (ours <= term) return { index, term: ours };
    }
    return { index: 0, term: 0 };
  }

  unstableEntries(): readonly Entry[] {
    return this.unstable.entries;
  }

  /** Committed entries not yet applied, limited to maxNextEntsSize payload bytes (at least one). */
  nextEnts(): readonly Entry[] {
    const off = Math.max(this.applied + 1, this.firstIndex());
    if (this.committed + 1 > off) return this.slice(off, this.committed + 1, this.maxNextEntsSize);
    return [];
  }

  hasNextEnts(): boolean {
    return this.committed + 1 > Math.max(this.applied + 1, this.firstIndex());
  }

  hasPendingSnapshot(): boolean {
    return this.unstable.snapshot !== undefined;
  }

  /** The pending (unstable) snapshot, else storage's. May throw ErrSnapshotTemporarilyUnavailable. */
  snapshot(): Snapshot {
    return this.unstable.snapshot ?? this.storage.snapshot();
  }

  firstIndex(): number {
    return this.unstable.maybeFirstIndex() ?? this.storage.firstIndex();
  }

  lastIndex(): number {
    return this.unstable.maybeLastIndex() ?? this.storage.lastIndex();
  }

  commitTo(toCommit: number): void {
    if (this.committed < toCommit) {
      if (this.lastIndex() < toCommit) throw new Error(`tocommit(${toCommit}) is out of range [lastIndex(${this.lastIndex()})]`);
      this.committed = toCommit;
    }
  }

  appliedTo(i: number): void {
    if (i === 0) return;
    if (this.committed < i || i < this.applied) throw new Error(`applied(${i}) is out of range [prevApplied(${this.applied}), committed(${this.committed})]`);
    this.applied = i;
  }

  stableTo(i: number, t: number): void {
    this.unstable.stableTo(i, t);
  }

  stableSnapTo(i: number): void {
    this.unstable.stableSnapTo(i);
  }

  lastTerm(): number {
    return this.term(this.lastIndex());
  }

  /**
   * Term of entry i. Valid range is [firstIndex()-1, lastIndex()]: throws ErrCompacted below it and
   * ErrUnavailable above it.
   */
  term(i: number): number {
    const dummy = this.firstIndex() - 1;
    if (i < dummy) throw new ErrCompacted();
    if (i > this.lastIndex()) throw new ErrUnavailable();
    const t = this.unstable.maybeTerm(i);
    if (t !== undefined) return t;
    return this.storage.term(i);
  }

  /** term(i), or 0 if i is compacted or beyond the log. */
  termOrZero(i: number): number {
    return this.knownTerm(i) ?? 0;
  }

  /**
   * term(i), or undefined where term(i) throws ErrCompacted or ErrUnavailable, without throwing in the
   * common cases: a follower asks this for every entry it is sent, and building an Error (its stack)
   * for each one beyond its log cost it 3% of its CPU under write load.
   */
  knownTerm(i: number): number | undefined {
    if (i < this.firstIndex() - 1 || i > this.lastIndex()) return undefined;
    const t = this.unstable.maybeTerm(i);
    if (t !== undefined) return t;
    try {
      return this.storage.term(i);
    } catch (e) {
      if (e instanceof ErrCompacted || e instanceof ErrUnavailable) return undefined;
      throw e;
    }
  }

  /** Entries from i to the end, at most maxSize bytes (at least one). Throws ErrCompacted. */
  entries(i: number, maxSize: number): readonly Entry[] {
    if (i > this.lastIndex()) return [];
    return this.slice(i, this.lastIndex() + 1, maxSize);
  }

  /** Candidate's log is at least as up-to-date as ours (Raft §5.4.1). */
  isUpToDate(lasti: number, term: number): boolean {
    const ourTerm = this.lastTerm();
    return term > ourTerm || (term === ourTerm && lasti >= this.lastIndex());
  }

  matchTerm(i: number, term: number): boolean {
    return this.knownTerm(i) === term;
  }

  /**
   * Commits up to maxIndex only if that entry is of `term` (the leader's current term): Raft §5.4.2 —
   * entries of earlier terms are committed only indirectly.
   */
  maybeCommit(maxIndex: number, term: number): boolean {
    if (maxIndex > this.committed && this.termOrZero(maxIndex) === term) {
      this.commitTo(maxIndex);
      return true;
    }
    return false;
  }

  /** Resets the log to a snapshot (metadata only). */
  restore(s: Snapshot): void {
    this.committed = s.index;
    this.unstable.restore(s);
  }

  /** Entries in [lo, hi), from storage and/or unstable, limited to maxSize. Throws ErrCompacted. */
  slice(lo: number, hi: number, maxSize: number): readonly Entry[] {
    this.checkOutOfBounds(lo, hi);
    if (lo === hi) return [];
    let ents: Entry[] = [];
    if (lo < this.unstable.offset) {
      const stored = this.storage.entries(lo, Math.min(hi, this.unstable.offset), maxSize);
      // Storage applied the size limit and returned fewer entries: stop here.
      if (stored.length < Math.min(hi, this.unstable.offset) - lo) return stored;
      ents = [...stored];
    }
    if (hi > this.unstable.offset) {
      ents.push(...this.unstable.slice(Math.max(lo, this.unstable.offset), hi));
    }
    return limitSize(ents, maxSize);
  }

  private checkOutOfBounds(lo: number, hi: number): void {
    if (lo > hi) throw new Error(`invalid slice ${lo} > ${hi}`);
    const fi = this.firstIndex();
    if (lo < fi) throw new ErrCompacted();
    const length = this.lastIndex() + 1 - fi;
    if (hi > fi + length) throw new Error(`slice[${lo},${hi}) out of bound [${fi},${this.lastIndex()}]`);
  }
}
