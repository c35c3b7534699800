/**
 * Recovery of the durable Raft log: replays segment files in order into memory and picks the snapshot.
 *
 * Replay model: entries form a contiguous run `[start, start + entries.length)`. A batch whose first
 * index is at or below the last index replaces the suffix (log conflict). A snapshot marker at index S
 * keeps the entries after S only if the entry at S has the snapshot's term (Raft paper §7: otherwise
 * the whole log is discarded). Errors in synced data throw {@link LogCorruptionError}; a torn tail of the
 * last segment is reported in `tornAt` for the caller to truncate (after a warning is logged here).
 *
 * Segment chain: the log is the longest run of consecutive sequence numbers that ends at the last segment.
 * Segments before a gap in the sequence are leftovers of a compaction whose removals were not yet durable
 * when the machine crashed (removals come back in any subset, see FileSystem.syncDir); they are ignored,
 * reported in `staleSegments` (with a warning) for the caller to delete, and never read. A gap cannot come
 * from a lost creation: the store makes a segment's directory entry durable before it creates the next
 * one. If the chain does not reach back to the snapshot, recovery still throws {@link LogCorruptionError}.
 */
import type { Entry, HardState, Snapshot } from "../raft/index.ts";
import { EMPTY_HARD_STATE, EMPTY_SNAPSHOT } from "../raft/index.ts";
import type { FileSystem, Logger } from "../platform/index.ts";
import { LogCorruptionError } from "./ports.ts";
import { decodeRecord, decodeSnapshotFile, parseSegmentName, parseSnapshotName, scanFrames } from "./log_format.ts";

export interface SegmentInfo {
  readonly seq: number;
  readonly firstIndex: number;
  readonly name: string;
}

export interface SnapshotFileInfo {
  readonly name: string;
  readonly term: number;
  readonly index: number;
}

export interface ReplayResult {
  readonly hardState: HardState;
  readonly snapshot: Snapshot;
  /** Name of the snapshot file `snapshot` came from (undefined when there is none). */
  readonly snapshotFile: string | undefined;
  /** Entries after `snapshot.index`, contiguous. */
  readonly entries: Entry[];
  readonly segments: SegmentInfo[];
  /** Snapshot files in the directory, oldest first. */
  readonly snapshotFiles: SnapshotFileInfo[];
  /** Where the last segment's valid records end when it has a torn tail to cut. */
  readonly tornAt: number | undefined;
  /** Segment files before a gap in the sequence numbers: compaction leftovers, not replayed. */
  readonly staleSegments: string[];
}

/** Lists and replays `dir`. Throws {@link LogCorruptionError} on damaged synced data. */
export function replayLog(fs: FileSystem, dir: string, logger: Logger): ReplayResult {
  const names = fs.list(dir);
  const segments: SegmentInfo[] = [];
  const snapshotFiles: SnapshotFileInfo[] = [];
  for (const name of names) {
    const s = parseSegmentName(name);
    if (s) segments.push({ ...s, name });
    const p = parseSnapshotName(name);
    if (p) snapshotFiles.push({ ...p, name });
  }
  segments.sort((a, b) => a.seq - b.seq);
  let chain = segments.length - 1;
  while (chain > 0 && segments[chain - 1]!.seq === segments[chain]!.seq - 1) chain--;
  const staleSegments = segments.splice(0, Math.max(0, chain)).map((s) => s.name);
  if (staleSegments.length > 0) {
    logger.warn("raft log: ignoring segments before a gap in the sequence (compaction leftovers)", {
      dir, files: staleSegments.join(","), firstKept: segments[0]!.name,
    });
  }
  snapshotFiles.sort((a, b) => a.index - b.index || a.term - b.term);

  let hardState = EMPTY_HARD_STATE;
  let marker = EMPTY_SNAPSHOT;
  let start = segments.length ? segments[0]!.firstIndex : 1;
  let entries: Entry[] = [];
  let tornAt: number | undefined;
  const next = () => start + entries.length;

  for (let i = 0; i < segments.length; i++) {
    const seg = segments[i]!;
    const last = i === segments.length - 1;
    const buf = fs.read(`${dir}/${seg.name}`) ?? new Uint8Array(0);
    const scan = scanFrames(buf);
    for (let f = 0; f < scan.frames.length; f++) {
      const fr = scan.frames[f]!;
      let rec;
      try {
        rec = decodeRecord(buf, fr.start, fr.end);
      } catch (err) {
        throw new LogCorruptionError(seg.name, next(), `record at offset ${fr.offset} has a valid checksum but does not decode: ${String(err)}`);
      }
      if (f === 0 && (rec.kind !== "header" || rec.seq !== seg.seq || rec.firstIndex !== seg.firstIndex)) {
        throw new LogCorruptionError(seg.name, next(), "segment does not start with its own header");
      }
      if (rec.kind === "batch") {
        if (rec.hardState) hardState = rec.hardState;
        const first = rec.entries[0]?.index;
        if (first === undefined) continue;
        if (first > next()) {
          throw new LogCorruptionError(seg.name, next(), `gap: record at offset ${fr.offset} starts at index ${first}`);
        }
        if (first < start) {
          start = first;
          entries = [];
        } else {
          entries.length = first - start;
        }
        for (const e of rec.entries) entries.push(e);
      } else if (rec.kind === "snapshot") {
        const m = rec.meta;
        marker = m;
        const at = m.index >= start && m.index < next() ? entries[m.index - start]! : undefined;
        if (m.index >= next() || (at && at.term !== m.term)) {
          start = m.index + 1;
          entries = [];
        }
      }
    }
    if (scan.frames.length === 0 && !scan.bad) {
      // An empty file: the segment was created but not even its header reached the disk.
      if (!last) throw new LogCorruptionError(seg.name, next(), "sealed segment is empty");
      tornAt = 0;
    }
    if (scan.bad) {
      const { offset, reason, validAfter } = scan.bad;
      if (validAfter !== undefined) {
        throw new LogCorruptionError(seg.name, next(), `${reason} at offset ${offset}, followed by a valid record at offset ${validAfter}`);
      }
      if (!last) throw new LogCorruptionError(seg.name, next(), `${reason} at offset ${offset} in a sealed (synced) segment`);
      logger.warn("raft log: dropping torn tail of the last segment", { file: `${dir}/${seg.name}`, offset, bytes: buf.length - offset, reason });
      tornAt = offset;
    }
  }

  // Pick the snapshot: the newest marker's file, or an older valid one if the log covers the gap.
  let snapshot = EMPTY_SNAPSHOT;
  let snapshotFile: string | undefined;
  if (marker.index > 0) {
    const wanted = snapshotFiles.find((s) => s.index === marker.index && s.term === marker.term);
    const why = wanted ? checkSnapshotFile(fs, dir, wanted.name) : "file is missing";
    if (why === undefined) {
      snapshot = marker;
      snapshotFile = wanted!.name;
    } else {
      const fileName = wanted?.name ?? `snap for index ${marker.index}`;
      logger.warn("raft log: snapshot file unusable, trying an older one", { file: fileName, reason: why });
      for (const older of [...snapshotFiles].reverse()) {
        if (older.index >= marker.index) continue;
        const covered = older.index >= start - 1 && next() > marker.index &&
          (older.index < start || entries[older.index - start]!.term === older.term);
        if (!covered) continue;
        const got = decodeSnapshotFile(fs.read(`${dir}/${older.name}`) ?? new Uint8Array(0));
        if (typeof got === "string") continue;
        snapshot = got.meta;
        snapshotFile = older.name;
        break;
      }
      if (!snapshotFile) {
        throw new LogCorruptionError(fileName, marker.index, `snapshot ${why}, and no older snapshot plus log entries cover the gap`);
      }
    }
  }
  if (snapshot.index < start - 1) {
    throw new LogCorruptionError(segments[0]?.name ?? dir, snapshot.index + 1, `log starts at index ${start} but the snapshot covers only up to ${snapshot.index}`);
  }
  const out = snapshot.index >= start ? entries.slice(snapshot.index + 1 - start) : entries;
  return { hardState, snapshot, snapshotFile, entries: out, segments, snapshotFiles, tornAt, staleSegments };
}

/** Undefined when the snapshot file is intact, else why not. */
export function checkSnapshotFile(fs: FileSystem, dir: string, name: string): string | undefined {
  const buf = fs.read(`${dir}/${name}`);
  if (!buf) return "file is missing";
  const got = decodeSnapshotFile(buf);
  return typeof got === "string" ? got : undefined;
}
