/**
 * Durable storage port: an SQLite handle and append-only files with explicit fsync.
 *
 * `openSqlite` uses `node:sqlite` (present on Bun 1.4, Deno 2.9 and inside the compiled binary; absent on
 * Node 20). It always runs WAL with synchronous=FULL: a committed transaction is on disk when `exec`/`run`
 * returns (one fsync per commit, so batch writes in one transaction to go faster).
 */
import { DatabaseSync } from "node:sqlite";
import { closeSync, fsyncSync, mkdirSync, openSync, renameSync, writeFileSync, writeSync, readFileSync, ftruncateSync, fstatSync } from "node:fs";
import { dirname } from "node:path";

/** One SQL statement prepared for reuse. Parameters bind positionally. */
export interface SqliteStatement {
  run(...params: SqlValue[]): { changes: number; lastInsertRowid: number | bigint };
  get(...params: SqlValue[]): Record<string, SqlValue> | undefined;
  all(...params: SqlValue[]): Record<string, SqlValue>[];
}

export type SqlValue = null | number | bigint | string | Uint8Array;

export interface SqliteHandle {
  /** Runs one or more statements without results. */
  exec(sql: string): void;
  prepare(sql: string): SqliteStatement;
  /** Runs fn inside BEGIN IMMEDIATE ... COMMIT (one fsync); rolls back and rethrows if fn throws. */
  transaction<T>(fn: () => T): T;
  /** Reads a PRAGMA's current value, e.g. pragma("journal_mode") -> "wal". */
  pragma(name: string): SqlValue;
  close(): void;
}

/** Opens (creating if needed) an SQLite database file in WAL mode with synchronous=FULL. */
export function openSqlite(path: string): SqliteHandle {
  if (path !== ":memory:") mkdirSync(dirname(path), { recursive: true });
  const db = new DatabaseSync(path);
  db.exec("PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL; PRAGMA foreign_keys=ON;");
  let depth = 0;
  return {
    exec: (sql) => db.exec(sql),
    prepare: (sql) => db.prepare(sql) as unknown as SqliteStatement,
    transaction(fn) {
      if (depth > 0) return fn();
      db.exec("BEGIN IMMEDIATE");
      depth++;
      try {
        const result = fn();
        db.exec("COMMIT");
        return result;
      } catch (err) {
        db.exec("ROLLBACK");
        throw err;
      } finally {
        depth--;
      }
    },
    pragma(name) {
      if (!/^[a-z_]+$/.test(name)) throw new Error(`pragma: bad name ${name}`);
      const row = db.prepare(`PRAGMA ${name}`).get() as Record<string, SqlValue> | undefined;
      return row ? Object.values(row)[0]! : null;
    },
    close: () => db.close(),
  };
}

/**
 * An append-only file. `append` writes through to the OS immediately (a crash of the process loses nothing,
 * a crash of the machine may lose what was not synced); `sync` makes everything appended so far durable.
 * The caller owns the handle and must `close` it.
 */
export interface AppendFile {
  readonly path: string;
  /** Bytes in the file, including appended but unsynced ones. */
  size(): number;
  append(data: Uint8Array): void;
  /** fsync: durable once this returns. */
  sync(): void;
  /** Cuts the file to `length` bytes and syncs (used to drop a torn tail). */
  truncate(length: number): void;
  close(): void;
}

export function openAppendFile(path: string): AppendFile {
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
    sync: () => fsyncSync(fd),
    truncate(length) {
      ftruncateSync(fd, length);
      fsyncSync(fd);
      size = length;
    },
    close: () => closeSync(fd),
  };
}

/** Reads a whole file, or undefined when it does not exist. */
export function readFileIfExists(path: string): Uint8Array | undefined {
  try {
    return new Uint8Array(readFileSync(path));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw err;
  }
}

/**
 * Replaces `path` atomically and durably: writes a sibling temp file, fsyncs it, renames it over `path`
 * and fsyncs the directory, so a crash leaves either the old or the new content, never a mix.
 */
export function writeFileDurably(path: string, data: Uint8Array | string): void {
  const dir = dirname(path);
  mkdirSync(dir, { recursive: true });
  const tmp = `${path}.tmp`;
  writeFileSync(tmp, data);
  const fd = openSync(tmp, "r+");
  try { fsyncSync(fd); } finally { closeSync(fd); }
  renameSync(tmp, path);
  syncDirectory(dir);
}

function syncDirectory(dir: string): void {
  let fd: number | undefined;
  try {
    fd = openSync(dir, "r");
    fsyncSync(fd);
  } catch {
    // Some platforms cannot fsync a directory; the rename is still atomic there.
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}
