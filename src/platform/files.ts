/**
 * File port for durable data (Raft log segments, snapshots, node-id): append-only files with an
 * explicit, asynchronous fsync, whole-file atomic replacement, and an fsync of a directory. The node
 * implementation uses node:fs; test/harness has a simulated one that can crash, losing unsynced writes,
 * tearing the last one, and losing directory entries (creations and removals) that were not synced.
 *
 * Durability of names: `DurableFile.sync` makes a file's bytes durable, not its directory entry. A file
 * created by `openAppend`, or removed by `remove`, may after a power loss be missing (or be back) until
 * `syncDir` of its directory has resolved (fsync(2) on Linux: "Calling fsync() does not necessarily
 * ensure that the entry in the directory containing the file has also reached disk. For that an explicit
 * fsync() on a file descriptor for the directory is also needed.").
 */
import {
  chmodSync, close, closeSync, fsync, fsyncSync, ftruncate, fstatSync, mkdirSync, open, openSync, readdirSync, readFileSync, renameSync,
  rmSync, writeFileSync, writeSync,
} from "node:fs";
import { open as openFile, readFile, rename } from "node:fs/promises";
import { dirname } from "node:path";

/**
 * An append-only file. `append` hands bytes to the OS at once (a process crash loses nothing; a machine
 * crash may lose what was not synced); `sync` makes everything appended before the call durable.
 * The opener owns the handle and must `close` it.
 */
export interface DurableFile {
  readonly path: string;
  /** Bytes in the file, including appended but unsynced ones. */
  size(): number;
  append(data: Uint8Array): void;
  /** fsync; resolves when everything appended before the call is durable. */
  sync(): Promise<void>;
  /** Cuts the file to `length` bytes and makes that durable (used to drop a torn tail). */
  truncate(length: number): Promise<void>;
  close(): void;
}

export interface FileSystem {
  /** Creates a directory and its parents; no error if it exists. */
  mkdirp(dir: string): void;
  /** File names (not paths) in `dir`, sorted; empty if `dir` does not exist. */
  list(dir: string): string[];
  /** A whole file, or undefined when it does not exist. */
  read(path: string): Uint8Array | undefined;
  /** `read` without blocking the event loop while a large file is read. */
  readLater(path: string): Promise<Uint8Array | undefined>;
  /**
   * Opens (creating if needed) a file for appending. A newly created file's directory entry is durable
   * only once a later `syncDir` of its directory resolves.
   */
  openAppend(path: string): DurableFile;
  /**
   * Replaces `path` atomically and durably: a crash leaves either the old content or the new one.
   * (Temp file, fsync, rename, fsync of the directory.) `data` may come in parts, written in order
   * without joining them. The I/O is asynchronous: the event loop keeps running while a large file is
   * written. Two calls for the same path must not overlap (they share the temp file).
   */
  writeDurably(path: string, data: Uint8Array | string | readonly Uint8Array[]): Promise<void>;
  /** Removes a file; no error if it is missing. The removal is durable once a later `syncDir` of its directory resolves. */
  remove(path: string): void;
  /**
   * fsyncs the directory `dir`: resolves when every creation and removal of an entry in `dir` made before
   * the call is durable. Rejects when `dir` does not exist or the fsync fails; resolves without doing
   * anything on platforms that cannot fsync a directory (as `writeFileDurably` does).
   */
  syncDir(dir: string): Promise<void>;
}

/** The real file system through node:fs (Bun, Deno, Node). */
export function nodeFileSystem(): FileSystem {
  return {
    mkdirp: (dir) => void mkdirSync(dir, { recursive: true }),
    list(dir) {
      try {
        return readdirSync(dir).sort();
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === "ENOENT") return [];
        throw err;
      }
    },
    read: readFileIfExists,
    async readLater(path) {
      try {
        const b = await readFile(path);
        return b.byteLength >= 65536 ? new Uint8Array(b.buffer, b.byteOffset, b.byteLength) : new Uint8Array(b);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === "ENOENT") return undefined;
        throw err;
      }
    },
    openAppend(path) {
      mkdirSync(dirname(path), { recursive: true });
      const fd = openSync(path, "a+");
      let size = fstatSync(fd).size;
      return {
        path,
        size: () => size,
        append(data) {
          let off = 0;
          while (off < data.length) off += writeSync(fd, data, off, data.length - off);
          size += data.length;
        },
        sync: () => new Promise<void>((resolve, reject) => fsync(fd, (err) => (err ? reject(err) : resolve()))),
        truncate: (length) =>
          new Promise<void>((resolve, reject) =>
            ftruncate(fd, length, (err) => {
              if (err) return reject(err);
              size = length;
              fsync(fd, (e2) => (e2 ? reject(e2) : resolve()));
            }),
          ),
        close: () => closeSync(fd),
      };
    },
    writeDurably: writeFileDurablyAsync,
    remove: (path) => rmSync(path, { force: true }),
    syncDir,
  };
}

/**
 * Errors meaning "this platform cannot open or fsync a directory" (Windows: EISDIR/EPERM/EACCES on open;
 * some file systems: EINVAL/ENOTSUP on fsync), as opposed to a missing directory or an I/O error.
 */
function cannotSyncDir(err: unknown): boolean {
  const code = (err as NodeJS.ErrnoException).code;
  return code === "EISDIR" || code === "EPERM" || code === "EACCES" || code === "EINVAL" || code === "ENOTSUP" ||
    code === "EOPNOTSUPP" || code === "EBADF";
}

/** writeFileDurably without blocking the event loop on the writes and fsyncs (FileSystem.writeDurably). */
async function writeFileDurablyAsync(path: string, data: Uint8Array | string | readonly Uint8Array[]): Promise<void> {
  const dir = dirname(path);
  mkdirSync(dir, { recursive: true });
  const tmp = `${path}.tmp`;
  const handle = await openFile(tmp, "w");
  try {
    const parts = typeof data === "string" ? [new TextEncoder().encode(data)] : data instanceof Uint8Array ? [data] : data;
    for (const part of parts) {
      for (let at = 0; at < part.length;) at += (await handle.write(part, at, part.length - at)).bytesWritten;
    }
    await handle.sync();
  } finally {
    await handle.close();
  }
  await rename(tmp, path);
  await syncDir(dir);
}

/** fsyncs the directory `dir` (FileSystem.syncDir). */
function syncDir(dir: string): Promise<void> {
  return new Promise<void>((resolve, reject) =>
    open(dir, "r", (err, fd) => {
      if (err) return cannotSyncDir(err) ? resolve() : reject(err);
      fsync(fd, (e2) => close(fd, () => (e2 && !cannotSyncDir(e2) ? reject(e2) : resolve())));
    })
  );
}

/** fsyncs a directory synchronously; see {@link cannotSyncDir} for the errors that are tolerated. */
function fsyncDirSync(dir: string): void {
  let dfd: number | undefined;
  try {
    dfd = openSync(dir, "r");
    fsyncSync(dfd);
  } catch (err) {
    if (!cannotSyncDir(err)) throw err;
  } finally {
    if (dfd !== undefined) closeSync(dfd);
  }
}

/** Reads a whole file, or undefined when it does not exist. */
export function readFileIfExists(path: string): Uint8Array | undefined {
  try {
    const b = readFileSync(path);
    // A large file has a buffer of its own (never Node's shared pool): wrap it instead of copying
    // (an 80 MB snapshot copy took 0.4-0.5 s of a restart); small ones are copied out of the pool.
    return b.byteLength >= 65536 ? new Uint8Array(b.buffer, b.byteOffset, b.byteLength) : new Uint8Array(b);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw err;
  }
}

/**
 * Replaces `path` atomically and durably (synchronously): writes a sibling temp file, fsyncs it,
 * renames it over `path` and fsyncs the directory, so a crash leaves the old or the new content.
 * `mode` (e.g. 0o600 for secrets) is set on the temp file before any data is written to it.
 */
export function writeFileDurably(path: string, data: Uint8Array | string, mode?: number): void {
  const dir = dirname(path);
  mkdirSync(dir, { recursive: true });
  const tmp = `${path}.tmp`;
  if (mode !== undefined) {
    closeSync(openSync(tmp, "w", mode));
    chmodSync(tmp, mode); // the temp file may be left over from a crash, with other permissions
  }
  writeFileSync(tmp, data);
  const fd = openSync(tmp, "r+");
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(tmp, path);
  fsyncDirSync(dir); // a no-op where directories cannot be fsynced; the rename is still atomic there
}
