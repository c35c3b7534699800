/**
 * The durable Raft log store: checksummed segment files with group-committed fsync, plus snapshot files.
 *
 * Directory layout: `wal-<seq>-<firstIndex>.log` segments (format in log_format.ts) and
 * `snap-<term>-<index>.snap` snapshot files (written with `writeDurably`; the newest two are kept).
 *
 * Writes: `save` frames one record per call (hard state and entries together, so a save is atomic on
 * replay) and hands it to the OS at once; `sync` fsyncs. Concurrent `sync` calls made while an fsync is
 * in flight share the next one, so N concurrent callers cost at most two fsyncs.
 *
 * Rotation: once the current segment reaches `segmentBytes`, the next save opens a new segment whose
 * first records repeat the hard state and the snapshot marker (so older segments can be deleted). Bytes
 * for the new segment are held in memory until the old segment is fsynced; hence a segment other than the
 * last is always completely synced, and damage in it is corruption, never a torn tail.
 *
 * Recovery makes the recovered tail durable (fsync, or truncation of a torn tail) before any later
 * `sync` resolves; recovered data may have been only in the page cache if just the process restarted.
 *
 * Directory entries (see FileSystem.syncDir): a segment file's name is durable only after an fsync of the
 * directory. Rotation creates the new segment only after the old one is fsynced, then fsyncs the directory,
 * and only then writes to the new segment; recovery fsyncs the directory (and, for a fresh log, its parent)
 * after creating or removing anything. Both happen behind the gate that every `sync` waits for, so no
 * `sync` covering a record of a segment resolves before that segment's name is durable, and a segment is
 * never created before its predecessor's name is durable (so a crash cannot leave a gap in the sequence).
 * Removals (compaction, old snapshot files) are followed by a directory fsync issued at once; until it
 * completes a crash may bring any subset of the removed files back: replay ignores segments before a gap
 * in the sequence (see log_replay.ts), recovery deletes them again, and a stale snapshot file is harmless.
 *
 * Snapshot file failing its checksum at recovery: an older kept snapshot is used if the log still holds
 * the entries between them; otherwise recovery throws LogCorruptionError naming the snapshot file.
 */
import type { Entry, HardState, Snapshot } from "../raft/index.ts";
import { EMPTY_HARD_STATE, EMPTY_SNAPSHOT } from "../raft/index.ts";
import type { DurableFile, FileSystem, Logger } from "../platform/index.ts";
import type { LogStore, RecoveredLog } from "./ports.ts";
import { LogCorruptionError } from "./ports.ts";
import { crc32cUpdate } from "./crc32c.ts";
import { decodeSnapshotFile, encodeSnapshotFile, frameBatch, frameHeader, frameSnapshot, segmentName, snapshotFileHead, snapshotName } from "./log_format.ts";
import { replayLog } from "./log_replay.ts";
import type { SegmentInfo } from "./log_replay.ts";

/** Bytes checksummed between pauses while a snapshot file is prepared (about 2 ms of crc32c here). */
const CRC_SLICE_BYTES = 4 * 1024 * 1024;

export interface LogStoreOptions {
  readonly fs: FileSystem;
  readonly dir: string;
  readonly logger: Logger;
  /** Segment size that triggers rotation; default 64 MiB. */
  readonly segmentBytes?: number;
}

export interface LogStoreStats {
  /** fsyncs issued (segment syncs and truncations; snapshot files and directories not counted). */
  readonly fsyncs: number;
  /** Directory fsyncs issued (`FileSystem.syncDir`). */
  readonly dirSyncs: number;
  /** Bytes handed to segment files since open. */
  readonly bytesWritten: number;
  readonly segments: number;
}

/** A {@link LogStore} with counters for benchmarks and tests. */
export interface DurableLogStore extends LogStore {
  stats(): LogStoreStats;
}

interface Segment extends SegmentInfo {
  /** Store byte count (bytesWritten) once its opening records were written; durable past it = safe to compact before. */
  readonly openMark: number;
}

const KEEP_SNAPSHOTS = 2;

/** Opens the log store in `dir` (created if missing). Call `recover()` before anything else. */
export function openLogStore(opts: LogStoreOptions): DurableLogStore {
  const { fs, dir, logger } = opts;
  const segmentBytes = opts.segmentBytes ?? 64 * 1024 * 1024;
  const path = (name: string) => `${dir}/${name}`;

  let recovered = false;
  let closed = false;
  let failed: Error | undefined;
  let segments: Segment[] = [];
  let file: DurableFile | undefined; // current segment's handle
  let curSize = 0;
  let held: Uint8Array[] = []; // bytes waiting for `gate` (old segment fsync or tail truncation)
  let gate: Promise<void> | undefined;
  let hardState: HardState = EMPTY_HARD_STATE;
  let snapshot: Snapshot = EMPTY_SNAPSHOT; // latest marker recorded (maybe not yet durable)
  let durableSnapshot: Snapshot = EMPTY_SNAPSHOT;
  let snapshotFile: string | undefined;
  let start = 1; // index of terms[0]
  let terms: number[] = [];
  let fsyncs = 0;
  let dirSyncs = 0;
  let bytesWritten = 0;
  let durableMark = 0;
  let inflight: Promise<void> | undefined;
  let inflightMark = 0;
  let queued: Promise<void> | undefined;

  const usable = () => {
    if (!recovered) throw new Error("log store: recover() must be called first");
    if (closed) throw new Error("log store: closed");
    if (failed) throw failed;
  };
  const fail = (err: unknown): never => {
    failed ??= err instanceof Error ? err : new Error(String(err));
    throw failed;
  };
  const syncDir = async (d = dir) => {
    await fs.syncDir(d);
    dirSyncs++;
  };
  /** After removing files: fsync the directory now; a failure fails the store (like a failed fsync). */
  const syncRemovals = () => {
    void syncDir().catch((err) => {
      if (!closed) failed ??= err instanceof Error ? err : new Error(String(err));
    });
  };
  const lastIndex = () => start + terms.length - 1;

  const append = (bytes: Uint8Array) => {
    bytesWritten += bytes.length;
    curSize += bytes.length;
    if (gate || !file) held.push(bytes);
    else file.append(bytes);
  };
  const flushHeld = (f: DurableFile) => {
    if (held.length === 0) return;
    const total = held.reduce((n, b) => n + b.length, 0);
    const all = new Uint8Array(total);
    let off = 0;
    for (const b of held) (all.set(b, off), (off += b.length));
    held = [];
    f.append(all);
  };
  const setGate = (work: () => Promise<DurableFile>) => {
    gate = work().then(
      (f) => {
        gate = undefined;
        file = f;
        try {
          flushHeld(f);
        } catch (err) {
          failed ??= err instanceof Error ? err : new Error(String(err));
        }
      },
      (err) => {
        gate = undefined;
        failed ??= err instanceof Error ? err : new Error(String(err));
      },
    );
  };
  const writeOpening = (seq: number, firstIndex: number) => {
    append(frameHeader(seq, firstIndex));
    append(frameBatch(hardState, []));
    if (snapshot.index > 0) append(frameSnapshot(snapshot));
  };
  const newSegment = (seq: number, firstIndex: number): Segment => {
    const seg = { seq, firstIndex, name: segmentName(seq, firstIndex), openMark: 0 };
    curSize = 0;
    writeOpening(seq, firstIndex);
    const withMark = { ...seg, openMark: bytesWritten };
    segments.push(withMark);
    return withMark;
  };

  const rotate = (firstIndex: number) => {
    const old = file!;
    file = undefined;
    const seg = newSegment(segments[segments.length - 1]!.seq + 1, firstIndex);
    setGate(async () => {
      await old.sync();
      fsyncs++;
      old.close();
      const f = fs.openAppend(path(seg.name));
      await syncDir(); // the new name is durable before anything is written to or synced in it
      return f;
    });
  };

  const round = (): Promise<void> => {
    const mark = bytesWritten;
    inflightMark = mark;
    const p = (async () => {
      while (gate) await gate;
      if (failed) throw failed;
      await file!.sync();
      fsyncs++;
      if (mark > durableMark) durableMark = mark;
    })().catch(fail);
    inflight = p;
    void p.finally(() => {
      if (inflight === p) inflight = undefined;
    }).catch(() => {});
    return p;
  };

  const store: DurableLogStore = {
    recover(): RecoveredLog {
      if (recovered) throw new Error("log store: recover() called twice");
      fs.mkdirp(dir);
      const r = replayLog(fs, dir, logger);
      recovered = true;
      hardState = r.hardState;
      snapshot = durableSnapshot = r.snapshot;
      snapshotFile = r.snapshotFile;
      start = r.snapshot.index + 1;
      terms = r.entries.map((e) => e.term);
      segments = r.segments.map((s) => ({ ...s, openMark: 0 }));
      for (const name of r.staleSegments) fs.remove(path(name));
      // Every branch ends with an fsync of the directory: creations and removals made here or by an earlier
      // process (a process restart keeps the page cache) become durable before any later sync() resolves.
      const last = segments[segments.length - 1];
      if (!last) {
        const seg = newSegment(1, lastIndex() + 1);
        setGate(async () => {
          const f = fs.openAppend(path(seg.name));
          await syncDir();
          // A fresh log: the directory itself may have just been created by mkdirp.
          const d = dir.replace(/\/+$/, "");
          const up = d.lastIndexOf("/");
          await syncDir(up > 0 ? d.slice(0, up) : up === 0 ? "/" : ".");
          return f;
        });
      } else if (r.tornAt === 0) {
        // Not even the header survived: start the segment afresh.
        fs.remove(path(last.name));
        segments.pop();
        const seg = newSegment(last.seq, last.firstIndex);
        setGate(async () => {
          const f = fs.openAppend(path(seg.name));
          await syncDir();
          return f;
        });
      } else {
        const f = fs.openAppend(path(last.name));
        curSize = r.tornAt ?? f.size();
        const at = r.tornAt;
        setGate(async () => {
          if (at !== undefined) {
            await f.truncate(at); // truncate() fsyncs too
          } else {
            // The tail may sit only in the page cache (a process restart): make what we return durable
            // before anything written after it (every later sync() waits for this).
            await f.sync();
          }
          fsyncs++;
          await syncDir();
          return f;
        });
      }
      return { hardState: r.hardState, snapshot: r.snapshot, entries: r.entries };
    },

    save(hs, entries) {
      usable();
      let first = lastIndex() + 1;
      if (entries.length > 0) {
        first = entries[0]!.index;
        if (first <= snapshot.index) throw new Error(`log store: entry ${first} is at or below the snapshot index ${snapshot.index}`);
        if (first > lastIndex() + 1) throw new Error(`log store: entry ${first} leaves a gap after ${lastIndex()}`);
        for (let i = 1; i < entries.length; i++) {
          if (entries[i]!.index !== first + i) throw new Error(`log store: entries not contiguous at ${entries[i]!.index}`);
        }
      } else if (!hs) return;
      // Named after the next index even when this batch conflicts (starts lower): the name then holds if the
      // batch is lost in a crash and recovery restarts the empty segment (replay lets a batch start lower).
      if (!gate && file && curSize >= segmentBytes) rotate(lastIndex() + 1);
      append(frameBatch(hs, entries));
      if (hs) hardState = hs;
      if (entries.length > 0) {
        terms.length = first - start;
        for (const e of entries) terms.push(e.term);
      }
    },

    sync() {
      try {
        usable();
      } catch (err) {
        return Promise.reject(err);
      }
      const mark = bytesWritten;
      if (mark <= durableMark && !gate) return Promise.resolve();
      if (inflight && inflightMark >= mark) return inflight;
      if (queued) return queued;
      if (!inflight) return round();
      const q = inflight.then(() => {}, () => {}).then(() => {
        queued = undefined;
        return round();
      });
      queued = q;
      return q;
    },

    async saveSnapshot(meta, data) {
      usable();
      if (meta.index < snapshot.index) throw new Error(`log store: snapshot ${meta.index} is older than ${snapshot.index}`);
      await fs.writeDurably(path(snapshotName(meta)), encodeSnapshotFile(meta, data));
      await store.recordSnapshot(meta);
    },

    async writeSnapshot(meta, parts, pause) {
      usable();
      let crc = 0;
      let sincePause = 0;
      for (const part of parts) {
        crc = crc32cUpdate(crc, part);
        sincePause += part.length;
        if (pause && sincePause >= CRC_SLICE_BYTES) {
          sincePause = 0;
          await pause();
        }
      }
      await fs.writeDurably(path(snapshotName(meta)), [snapshotFileHead(meta, crc), ...parts]);
    },

    async recordSnapshot(meta) {
      usable();
      if (meta.index < snapshot.index) throw new Error(`log store: snapshot ${meta.index} is older than ${snapshot.index}`);
      const name = snapshotName(meta);
      append(frameSnapshot(meta));
      snapshot = meta;
      if (meta.index >= start) {
        // Raft paper §7: keep the entries after the snapshot only if the log agrees with it at its index.
        const at = meta.index <= lastIndex() ? terms[meta.index - start] : undefined;
        terms = at === meta.term ? terms.slice(meta.index + 1 - start) : [];
        start = meta.index + 1;
      }
      await store.sync();
      if (meta.index >= durableSnapshot.index) {
        durableSnapshot = meta;
        snapshotFile = name;
      }
      const snaps = fs.list(dir).filter((n) => n.startsWith("snap-") && n.endsWith(".snap") && n !== snapshotFile);
      const older = snaps.filter((n) => n < snapshotFile!).sort();
      const drop = older.slice(0, Math.max(0, older.length - (KEEP_SNAPSHOTS - 1)));
      for (const n of drop) fs.remove(path(n));
      if (drop.length > 0) syncRemovals();
    },

    loadSnapshot() {
      usable();
      if (!snapshotFile) return undefined;
      const got = decodeSnapshotFile(fs.read(path(snapshotFile)) ?? new Uint8Array(0));
      if (typeof got === "string") throw new LogCorruptionError(snapshotFile, durableSnapshot.index, got);
      return got;
    },

    async readSnapshot() {
      usable();
      if (!snapshotFile) return undefined;
      const [name, index] = [snapshotFile, durableSnapshot.index];
      const got = decodeSnapshotFile((await fs.readLater(path(name))) ?? new Uint8Array(0));
      if (typeof got === "string") throw new LogCorruptionError(name, index, got);
      return got;
    },

    compact(index) {
      usable();
      const upTo = Math.min(index, durableSnapshot.index);
      let drop = 0;
      while (drop < segments.length - 1) {
        const next = segments[drop + 1]!;
        const nextIsCurrent = drop + 1 === segments.length - 1;
        if (next.firstIndex - 1 > upTo) break;
        if (nextIsCurrent && (gate !== undefined || durableMark < next.openMark)) break;
        drop++;
      }
      for (const seg of segments.slice(0, drop)) fs.remove(path(seg.name)); // oldest first
      segments = segments.slice(drop);
      if (drop > 0) syncRemovals();
    },

    close() {
      if (closed) return;
      closed = true;
      try {
        file?.close();
      } catch {
        // A handle invalidated by a crash (simulation) or already closed.
      }
    },

    stats: () => ({ fsyncs, dirSyncs, bytesWritten, segments: segments.length }),
  };
  return store;
}
