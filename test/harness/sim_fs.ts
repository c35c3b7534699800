/**
 * A simulated FileSystem held in memory for deterministic simulation and crash tests.
 *
 * Every file has durable bytes (`durable` = a length) and an unsynced tail above it. `DurableFile.sync`
 * resolves on a microtask (no timers) and then makes the bytes appended before the call durable.
 * `crash(rng)` models a machine crash: each file keeps its durable bytes plus, chosen by the Rng, none,
 * all or a prefix of its unsynced tail, and sometimes a torn last write (the last surviving unsynced
 * bytes garbled); what survives is then durable.
 *
 * Directory entries: a file created by `openAppend`, or removed by `remove`, after the start of the last
 * completed `syncDir` of its directory has a non-durable entry: on `crash` the Rng decides, per entry,
 * whether a creation is lost (the file disappears with all its bytes, synced or not) and whether a removal
 * is undone (the file comes back with the bytes it had, subject to the tail rules above). A name removed
 * and created again comes back as the old file only if the new creation is lost. `writeDurably` is atomic
 * and durable at once, its own entry included, but (conservatively) does not make other entries of the
 * directory durable. Directories themselves (`mkdirp`) are durable at once.
 * Handles opened before a crash throw on use; a `sync` or `syncDir` in flight at the crash rejects.
 */
import type { DurableFile, FileSystem } from "../../src/platform/files.ts";
import type { Rng } from "../../src/platform/rng.ts";
import { concatBytes } from "../../src/lib/index.ts";

interface SimFile {
  buf: Uint8Array;
  length: number;
  durable: number;
  /** Operation number of the creation while its directory entry is not durable; undefined once it is. */
  createdOp: number | undefined;
}

export interface SimCrashReport {
  /** Per file that lost or tore unsynced bytes: kept length and whether its tail was garbled. */
  readonly files: readonly { path: string; unsynced: number; kept: number; torn: boolean }[];
  /** Non-durable directory entries that the crash reverted: creations lost, removals undone. */
  readonly entries: readonly { path: string; change: "creation lost" | "removal undone" }[];
}

export interface SimFileSystem extends FileSystem {
  /** Simulates a machine crash (see the module comment). Open handles become unusable. */
  crash(rng: Rng): SimCrashReport;
  /** Flips every bit of the byte at `offset` of `path` (synced or not). Throws if out of range. */
  corrupt(path: string, offset: number): void;
  /** Number of completed `DurableFile.sync`/`truncate` calls (fsyncs), `writeDurably` calls and `syncDir` calls. */
  stats(): { fsyncs: number; durableWrites: number; dirSyncs: number };
  /** Synced bytes of a file (they survive a crash if the file's directory entry does; see `entryDurable`). */
  durableBytes(path: string): Uint8Array | undefined;
  /** Whether `path` exists with a durable directory entry (false when missing or created since the last `syncDir`). */
  entryDurable(path: string): boolean;
}

function norm(path: string): string {
  return path.replace(/\/+/g, "/").replace(/\/$/, "");
}

function parent(path: string): string {
  const i = path.lastIndexOf("/");
  return i <= 0 ? (i === 0 ? "/" : "") : path.slice(0, i);
}

export function simFileSystem(): SimFileSystem {
  const files = new Map<string, SimFile>();
  /** Files removed while their entry was durable, until a `syncDir` or a crash settles the removal. */
  const removed = new Map<string, { file: SimFile; op: number }>();
  const dirs = new Set<string>();
  let epoch = 0;
  let ops = 0; // counts creations and removals, so a syncDir covers exactly those made before it started
  let fsyncs = 0;
  let durableWrites = 0;
  let dirSyncs = 0;

  const mkdirp = (dir: string) => {
    for (let d = norm(dir); d !== "" && d !== "/" && !dirs.has(d); d = parent(d)) dirs.add(d);
  };

  const grow = (f: SimFile, need: number) => {
    if (need <= f.buf.length) return;
    const next = new Uint8Array(Math.max(need, f.buf.length * 2, 256));
    next.set(f.buf.subarray(0, f.length));
    f.buf = next;
  };

  const get = (path: string): SimFile => {
    const f = files.get(path);
    if (!f) throw new Error(`simfs: ${path} was removed`);
    return f;
  };

  return {
    mkdirp,
    list(dir) {
      const d = norm(dir) + "/";
      const out: string[] = [];
      for (const p of files.keys()) if (p.startsWith(d) && !p.slice(d.length).includes("/")) out.push(p.slice(d.length));
      return out.sort();
    },
    read(path) {
      const f = files.get(norm(path));
      return f ? f.buf.slice(0, f.length) : undefined;
    },
    async readLater(path) {
      await Promise.resolve();
      const f = files.get(norm(path));
      return f ? f.buf.slice(0, f.length) : undefined;
    },
    openAppend(rawPath) {
      const path = norm(rawPath);
      mkdirp(parent(path));
      if (!files.has(path)) files.set(path, { buf: new Uint8Array(0), length: 0, durable: 0, createdOp: ++ops });
      const myEpoch = epoch;
      let closed = false;
      const check = () => {
        if (myEpoch !== epoch) throw new Error(`simfs: handle for ${path} used after a crash`);
        if (closed) throw new Error(`simfs: handle for ${path} used after close`);
      };
      const handle: DurableFile = {
        path: rawPath,
        size: () => (check(), get(path).length),
        append(data) {
          check();
          const f = get(path);
          grow(f, f.length + data.length);
          f.buf.set(data, f.length);
          f.length += data.length;
        },
        async sync() {
          check();
          const mark = get(path).length;
          await Promise.resolve();
          check();
          const f = get(path);
          f.durable = Math.max(f.durable, Math.min(mark, f.length));
          fsyncs++;
        },
        async truncate(length) {
          check();
          await Promise.resolve();
          check();
          const f = get(path);
          if (length > f.length) throw new Error(`simfs: truncate ${path} to ${length} beyond size ${f.length}`);
          f.length = length;
          f.durable = length;
          fsyncs++;
        },
        close() {
          check();
          closed = true;
        },
      };
      return handle;
    },
    async writeDurably(rawPath, data) {
      const path = norm(rawPath);
      const bytes = typeof data === "string" ? new TextEncoder().encode(data) : data instanceof Uint8Array ? data.slice() : concatBytes(data);
      await Promise.resolve();
      mkdirp(parent(path));
      files.set(path, { buf: bytes, length: bytes.length, durable: bytes.length, createdOp: undefined });
      removed.delete(path); // the rename over it is durable
      durableWrites++;
    },
    remove(rawPath) {
      const path = norm(rawPath);
      const f = files.get(path);
      if (!f) return;
      files.delete(path);
      // Removing a file whose creation is not durable yet leaves nothing to come back (but an older
      // removed file of that name, if any, still may).
      if (f.createdOp === undefined) removed.set(path, { file: f, op: ++ops });
    },
    async syncDir(rawDir) {
      const dir = rawDir === "." ? "" : norm(rawDir);
      if (dir !== "" && !dirs.has(dir)) throw new Error(`simfs: syncDir ${rawDir}: no such directory`);
      const myEpoch = epoch;
      const mark = ops;
      await Promise.resolve();
      if (myEpoch !== epoch) throw new Error(`simfs: syncDir ${rawDir} interrupted by a crash`);
      for (const [p, f] of files) if (parent(p) === dir && f.createdOp !== undefined && f.createdOp <= mark) f.createdOp = undefined;
      for (const [p, r] of removed) if (parent(p) === dir && r.op <= mark) removed.delete(p);
      dirSyncs++;
    },
    crash(rng) {
      epoch++;
      const byPath = <T>(m: Map<string, T>) => [...m].sort(([a], [b]) => (a < b ? -1 : 1));
      const entries: { path: string; change: "creation lost" | "removal undone" }[] = [];
      for (const [path, f] of byPath(files)) {
        if (f.createdOp === undefined) continue;
        if (rng.int(2) === 0) {
          files.delete(path);
          entries.push({ path, change: "creation lost" });
        } else f.createdOp = undefined;
      }
      for (const [path, r] of byPath(removed)) {
        if (files.has(path) || rng.int(2) === 0) continue;
        files.set(path, r.file);
        entries.push({ path, change: "removal undone" });
      }
      removed.clear();
      const report: { path: string; unsynced: number; kept: number; torn: boolean }[] = [];
      for (const [path, f] of byPath(files)) {
        const unsynced = f.length - f.durable;
        if (unsynced === 0) continue;
        const mode = rng.int(3);
        const keep = mode === 0 ? 0 : mode === 1 ? unsynced : rng.int(unsynced + 1);
        f.length = f.durable + keep;
        let torn = false;
        if (keep > 0 && rng.int(3) === 0) {
          torn = true;
          const n = 1 + rng.int(Math.min(keep, 16));
          const garbage = rng.bytes(n);
          for (let i = 0; i < n; i++) f.buf[f.length - n + i] ^= garbage[i]! | 1;
        }
        f.durable = f.length; // what survived a crash is on the disk now
        report.push({ path, unsynced, kept: keep, torn });
      }
      return { files: report, entries };
    },
    corrupt(rawPath, offset) {
      const f = files.get(norm(rawPath));
      if (!f || offset < 0 || offset >= f.length) throw new Error(`simfs: cannot corrupt ${rawPath} at ${offset}`);
      f.buf[offset] ^= 0xff;
    },
    stats: () => ({ fsyncs, durableWrites, dirSyncs }),
    durableBytes(path) {
      const f = files.get(norm(path));
      return f ? f.buf.slice(0, f.durable) : undefined;
    },
    entryDurable(path) {
      const f = files.get(norm(path));
      return f !== undefined && f.createdOp === undefined;
    },
  };
}
