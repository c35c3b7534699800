import { describe, expect, test } from "bun:test";
import { seededRng } from "../../src/platform/rng.ts";
import { simFileSystem } from "./sim_fs.ts";

const b = (...x: number[]) => Uint8Array.from(x);

describe("simFileSystem", () => {
  test("append, read, list, remove", () => {
    const fs = simFileSystem();
    const f = fs.openAppend("/d/a.log");
    f.append(b(1, 2));
    f.append(b(3));
    expect(f.size()).toBe(3);
    expect(fs.read("/d/a.log")).toEqual(b(1, 2, 3));
    fs.openAppend("/d/sub/x").close();
    expect(fs.list("/d")).toEqual(["a.log"]);
    expect(fs.list("/nope")).toEqual([]);
    fs.remove("/d/a.log");
    expect(fs.read("/d/a.log")).toBeUndefined();
  });

  test("sync makes bytes durable; crash keeps them plus none, all or a prefix of the tail, maybe torn", async () => {
    const kinds = new Set<string>();
    for (let seed = 1; seed <= 100; seed++) {
      const fs = simFileSystem();
      const f = fs.openAppend("/d/a");
      await fs.syncDir("/d");
      f.append(b(1, 2, 3, 4));
      await f.sync();
      f.append(new Uint8Array(20).fill(7));
      const r = fs.crash(seededRng(seed)).files[0]!;
      const after = fs.read("/d/a")!;
      expect(after.subarray(0, 4)).toEqual(b(1, 2, 3, 4));
      expect(after.length).toBe(4 + r.kept);
      if (!r.torn) expect(after.subarray(4).every((x) => x === 7)).toBe(true);
      else expect(after.subarray(4).every((x) => x === 7)).toBe(false);
      kinds.add(r.kept === 0 ? "none" : r.kept === 20 ? "all" : "prefix");
      if (r.torn) kinds.add("torn");
      expect(() => f.append(b(1))).toThrow(/after a crash/);
    }
    expect([...kinds].sort()).toEqual(["all", "none", "prefix", "torn"]);
  });

  test("a sync in flight at a crash rejects; truncate is durable; writeDurably is atomic", async () => {
    const fs = simFileSystem();
    const f = fs.openAppend("/d/a");
    await fs.syncDir("/d");
    f.append(b(1, 2, 3));
    const p = f.sync();
    const q = fs.syncDir("/d").then(() => "resolved", (err) => String(err));
    fs.crash(seededRng(1));
    await expect(p).rejects.toThrow(/after a crash/);
    expect(await q).toMatch(/syncDir \/d interrupted by a crash/);
    const g = fs.openAppend("/d/a");
    g.append(b(9, 9, 9, 9));
    await g.truncate(2);
    fs.crash(seededRng(2));
    expect(fs.read("/d/a")!.length).toBe(2);
    await fs.writeDurably("/d/s", "hello");
    fs.crash(seededRng(3));
    expect(new TextDecoder().decode(fs.read("/d/s"))).toBe("hello");
    expect(fs.stats().durableWrites).toBe(1);
    expect(fs.entryDurable("/d/s")).toBe(true);
    await expect(fs.syncDir("/nope")).rejects.toThrow(/no such directory/);
  });

  test("directory entries: creations and removals not covered by a syncDir may be reverted by a crash", async () => {
    const outcomes = new Set<string>();
    for (let seed = 1; seed <= 60; seed++) {
      const fs = simFileSystem();
      const old = fs.openAppend("/d/old");
      old.append(b(1, 2));
      await old.sync();
      fs.openAppend("/d/gone").close();
      await fs.syncDir("/d");
      expect([fs.entryDurable("/d/old"), fs.entryDurable("/d/gone")]).toEqual([true, true]);
      const f = fs.openAppend("/d/new");
      f.append(b(3));
      await f.sync(); // the bytes are durable, the name is not
      fs.remove("/d/gone");
      fs.openAppend("/e/other").close(); // another directory: not covered by syncDir("/d")
      expect(fs.entryDurable("/d/new")).toBe(false);
      const r = fs.crash(seededRng(seed));
      expect(fs.read("/d/old")).toEqual(b(1, 2)); // durable entries are untouched
      const hasNew = fs.read("/d/new") !== undefined;
      const hasGone = fs.read("/d/gone") !== undefined;
      if (hasNew) expect(fs.read("/d/new")).toEqual(b(3));
      expect(r.entries.some((x) => x.path === "/d/new" && x.change === "creation lost")).toBe(!hasNew);
      expect(r.entries.some((x) => x.path === "/d/gone" && x.change === "removal undone")).toBe(hasGone);
      outcomes.add(`new=${hasNew} gone=${hasGone}`);
      // After a crash, whatever is there is durable.
      expect(fs.crash(seededRng(seed + 1000)).entries).toEqual([]);
    }
    expect(outcomes.size).toBe(4);
  });

  test("syncDir covers only the directory's entries made before it started", async () => {
    for (let seed = 1; seed <= 20; seed++) {
      const fs = simFileSystem();
      fs.openAppend("/d/a").close();
      fs.openAppend("/d/sub/x").close();
      const p = fs.syncDir("/d");
      fs.openAppend("/d/b").close(); // made while the syncDir is in flight
      await p;
      expect([fs.entryDurable("/d/a"), fs.entryDurable("/d/b"), fs.entryDurable("/d/sub/x")]).toEqual([true, false, false]);
      fs.remove("/d/b"); // never durable: nothing can come back
      const r = fs.crash(seededRng(seed));
      expect(fs.read("/d/a")).toBeDefined();
      expect(fs.read("/d/b")).toBeUndefined();
      expect(r.entries.every((x) => x.path === "/d/sub/x")).toBe(true);
    }
    expect(simFileSystem().stats().dirSyncs).toBe(0);
  });

  test("a name removed and created again comes back as the old file only if the new creation is lost", async () => {
    const seen = new Set<string>();
    for (let seed = 1; seed <= 40; seed++) {
      const fs = simFileSystem();
      const f = fs.openAppend("/d/x");
      f.append(b(1));
      await f.sync();
      await fs.syncDir("/d");
      fs.remove("/d/x");
      const g = fs.openAppend("/d/x");
      g.append(b(2));
      await g.sync();
      fs.crash(seededRng(seed));
      const got = fs.read("/d/x");
      seen.add(got === undefined ? "none" : String(got[0]));
    }
    expect([...seen].sort()).toEqual(["1", "2", "none"]);
  });

  test("corrupt flips a byte", async () => {
    const fs = simFileSystem();
    const f = fs.openAppend("/a");
    f.append(b(0, 0));
    await f.sync();
    fs.corrupt("/a", 1);
    expect(fs.read("/a")).toEqual(b(0, 255));
    expect(() => fs.corrupt("/a", 5)).toThrow();
  });
});
