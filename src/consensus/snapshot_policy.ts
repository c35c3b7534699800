/**
 * When the driver takes a snapshot and how much log it keeps behind one: pure functions of the
 * counters that snapshot_taker.ts keeps. The options they read are documented on ConsensusOptions.
 */
import type { ConsensusOptions } from "./node_types.ts";

/** ConsensusOptions' snapshot settings with their defaults filled in. */
export interface SnapshotLimits {
  /** Applied entries since the last snapshot that make one due (snapshotEntries). */
  readonly entries: number;
  /** With entries due, the least time since the last snapshot (snapshotIntervalMs); 0: none. */
  readonly intervalMs: number;
  /** Applied command bytes since the last snapshot that make one due whatever else says (snapshotBytes). */
  readonly bytes: number;
  /** Entries kept in the log behind a snapshot (keepEntries). */
  readonly keepEntries: number;
  /** At most this many command bytes are kept behind a snapshot, always at least one entry (keepBytes). */
  readonly keepBytes: number;
}

export function snapshotLimits(o: ConsensusOptions<unknown>): SnapshotLimits {
  return {
    entries: o.snapshotEntries ?? 8192,
    intervalMs: o.snapshotIntervalMs ?? 0,
    bytes: o.snapshotBytes ?? 64 * 1024 * 1024,
    keepEntries: o.keepEntries ?? 1024,
    keepBytes: o.keepBytes ?? 16 * 1024 * 1024,
  };
}

/**
 * Whether a snapshot is due, given `pending` entries and `bytes` of commands applied since the last one,
 * taken `msSince` ago: by bytes at once; by entries once the interval has passed, or at once past
 * 8 x `entries` (which bounds the log however short the interval leaves it).
 */
export function snapshotDue(l: SnapshotLimits, pending: number, bytes: number, msSince: number): boolean {
  if (bytes >= l.bytes) return true;
  if (pending < l.entries) return false;
  if (l.intervalMs <= 0 || pending >= l.entries * 8) return true;
  return msSince >= l.intervalMs;
}

/**
 * The index to compact the log to after a snapshot at `index` (MemoryStorage.compact: the entries after
 * it stay): the last `keepEntries` entries up to `index`, fewer when they hold more than `keepBytes` of
 * commands, never fewer than the entry at `index` itself. `firstIndex` is the log's first stored entry,
 * `entryBytes(i)` the command bytes of the entry at `i` (0 for a configuration change). Compaction is
 * due only when the result is above `firstIndex`.
 */
export function compactionIndex(l: SnapshotLimits, index: number, firstIndex: number, entryBytes: (i: number) => number): number {
  return Math.max(index - l.keepEntries, compactionIndexByBytes(index, firstIndex, l.keepBytes, entryBytes));
}

/**
 * The lowest index, not below `firstIndex`, whose following entries up to `upTo` hold at most
 * `keepBytes`; `upTo - 1` when the entry at `upTo` alone holds more.
 */
function compactionIndexByBytes(upTo: number, firstIndex: number, keepBytes: number, entryBytes: (i: number) => number): number {
  let bytes = 0;
  let i = upTo;
  while (i > firstIndex) {
    bytes += entryBytes(i);
    if (bytes > keepBytes && i < upTo) break;
    i--;
  }
  return i;
}
