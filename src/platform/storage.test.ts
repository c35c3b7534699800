import { describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openAppendFile, openSqlite, readFileIfExists, writeFileDurably } from "./storage.ts";

function tempDir(): string {
  return mkdtempSync(join(tmpdir(), "causeway-storage-"));
}

describe("openSqlite", () => {
  test("runs WAL with synchronous=FULL", () => {
    const dir = tempDir();
    try {
      const db = openSqlite(join(dir, "db", "state.db"));
      expect(db.pragma("journal_mode")).toBe("wal");
      expect(db.pragma("synchronous")).toBe(2); // 2 = FULL
      db.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("a committed transaction survives reopening; a failed one writes nothing", () => {
    const dir = tempDir();
    try {
      const path = join(dir, "state.db");
      const db = openSqlite(path);
      db.exec("CREATE TABLE kv (k TEXT PRIMARY KEY, v BLOB)");
      db.transaction(() => db.prepare("INSERT INTO kv VALUES (?, ?)").run("a", new Uint8Array([1, 2])));
      expect(() =>
        db.transaction(() => {
          db.prepare("INSERT INTO kv VALUES (?, ?)").run("b", null);
          throw new Error("boom");
        })
      ).toThrow("boom");
      db.close();
      const again = openSqlite(path);
      const rows = again.prepare("SELECT k, v FROM kv ORDER BY k").all();
      expect(rows.map((r) => r.k)).toEqual(["a"]);
      expect(new Uint8Array(rows[0]!.v as Uint8Array)).toEqual(new Uint8Array([1, 2]));
      again.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("append files", () => {
  test("append, sync, truncate and reopen", () => {
    const dir = tempDir();
    try {
      const path = join(dir, "log", "seg-1");
      const f = openAppendFile(path);
      f.append(new TextEncoder().encode("hello "));
      f.append(new TextEncoder().encode("world"));
      f.sync();
      expect(f.size()).toBe(11);
      f.truncate(5);
      f.close();
      expect(readFileSync(path, "utf8")).toBe("hello");
      const g = openAppendFile(path);
      expect(g.size()).toBe(5);
      g.append(new TextEncoder().encode("!"));
      g.close();
      expect(readFileSync(path, "utf8")).toBe("hello!");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("writeFileDurably replaces the content; readFileIfExists tells absence", () => {
    const dir = tempDir();
    try {
      const path = join(dir, "node-id");
      expect(readFileIfExists(path)).toBeUndefined();
      writeFileDurably(path, "one");
      writeFileDurably(path, "two");
      expect(new TextDecoder().decode(readFileIfExists(path))).toBe("two");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
