import { describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { nodeFileSystem, readFileIfExists, writeFileDurably } from "./files.ts";
import { openSqlite } from "./storage.ts";

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

describe("files", () => {
  test("append, sync, truncate and reopen", async () => {
    const dir = tempDir();
    const fs = nodeFileSystem();
    try {
      const path = join(dir, "log", "seg-1");
      const f = fs.openAppend(path);
      f.append(new TextEncoder().encode("hello "));
      f.append(new TextEncoder().encode("world"));
      await f.sync();
      expect(f.size()).toBe(11);
      await f.truncate(5);
      f.close();
      expect(readFileSync(path, "utf8")).toBe("hello");
      const g = fs.openAppend(path);
      expect(g.size()).toBe(5);
      g.append(new TextEncoder().encode("!"));
      g.close();
      expect(readFileSync(path, "utf8")).toBe("hello!");
      expect(fs.list(join(dir, "log"))).toEqual(["seg-1"]);
      expect(fs.list(join(dir, "missing"))).toEqual([]);
      fs.remove(path);
      expect(fs.read(path)).toBeUndefined();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("syncDir fsyncs an existing directory and rejects a missing one", async () => {
    const dir = tempDir();
    const fs = nodeFileSystem();
    try {
      const f = fs.openAppend(join(dir, "log", "seg-1"));
      f.append(new TextEncoder().encode("x"));
      await f.sync();
      f.close();
      await fs.syncDir(join(dir, "log"));
      fs.remove(join(dir, "log", "seg-1"));
      await fs.syncDir(join(dir, "log"));
      expect(fs.list(join(dir, "log"))).toEqual([]);
      await expect(fs.syncDir(join(dir, "missing"))).rejects.toThrow(/ENOENT|no such file/i);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("writeDurably replaces the content; read tells absence", async () => {
    const dir = tempDir();
    const fs = nodeFileSystem();
    try {
      const path = join(dir, "node-id");
      expect(readFileIfExists(path)).toBeUndefined();
      await fs.writeDurably(path, "one");
      writeFileDurably(path, "two");
      expect(new TextDecoder().decode(fs.read(path))).toBe("two");
      expect(fs.list(dir)).toEqual(["node-id"]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
