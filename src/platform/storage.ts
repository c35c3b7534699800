/**
 * Durable storage port, SQL side: an SQLite handle (files with explicit fsync are in files.ts).
 *
 * `openSqlite` uses `node:sqlite` (present on Bun 1.4, Deno 2.9 and inside the compiled binary; absent on
 * Node 20). It always runs WAL with synchronous=FULL: a committed transaction is on disk when `exec`/`run`
 * returns (one fsync per commit, so batch writes in one transaction to go faster).
 */
import { DatabaseSync } from "node:sqlite";
import { mkdirSync } from "node:fs";
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
