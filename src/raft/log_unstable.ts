import type { Entry, Snapshot } from "./types.ts";

/**
 * Entries (and possibly a snapshot) not yet handed to stable storage (etcd `unstable`).
 * `entries[i]` has index `offset + i`. When `snapshot` is set, `offset === snapshot.index + 1`.
 */
export class Unstable {
  snapshot: Snapshot | undefined = undefined;
  entries: Entry[] = [];
  constructor(public offset: number) {}

  /** First index if a snapshot is pending, else undefined. */
  maybeFirstIndex(): number | undefined {
    return this.snapshot ? this.snapshot.index + 1 : undefined;
  }

  maybeLastIndex(): number | undefined {
    if (this.entries.length > 0) return this.offset + this.entries.length - 1;
    return this.snapshot?.index;
  }

  maybeTerm(i: number): number | undefined {
    if (i < this.offset) return this.snapshot && this.snapshot.index === i ? this.snapshot.term : undefined;
    const last = this.maybeLastIndex();
    if (last === undefined || i > last) return undefined;
    return this.entries[i - this.offset]!.term;
  }

  /** Entries up to (i, t) were persisted. Ignored if the entry at i was since replaced (term mismatch). */
  stableTo(i: number, t: number): void {
    const gt = this.maybeTerm(i);
    if (gt === undefined) return;
    if (gt === t && i >= this.offset) {
      this.entries = this.entries.slice(i + 1 - this.offset);
      this.offset = i + 1;
    }
  }

  stableSnapTo(i: number): void {
    if (this.snapshot && this.snapshot.index === i) this.snapshot = undefined;
  }

  restore(s: Snapshot): void {
    this.offset = s.index + 1;
    this.entries = [];
    this.snapshot = s;
  }

  /** Appends `ents`, first truncating any existing entries at or after `ents[0].index`. */
  truncateAndAppend(ents: readonly Entry[]): void {
    const after = ents[0]!.index;
    if (after === this.offset + this.entries.length) {
      this.entries.push(...ents);
    } else if (after <= this.offset) {
      // The log is being replaced from before the unstable part: persisted entries from `after` on are
      // overwritten by the next storage append.
      this.offset = after;
      this.entries = [...ents];
    } else {
      this.entries = [...this.slice(this.offset, after), ...ents];
    }
  }

  /** Entries in [lo, hi), which must lie within the unstable range. */
  slice(lo: number, hi: number): Entry[] {
    const upper = this.offset + this.entries.length;
    if (lo > hi || lo < this.offset || hi > upper) throw new Error(`unstable.slice[${lo},${hi}) out of bound [${this.offset},${upper}]`);
    return this.entries.slice(lo - this.offset, hi - this.offset);
  }
}
