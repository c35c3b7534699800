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
    f.append(b(1, 2, 3));
    const p = f.sync();
    fs.crash(seededRng(1));
    await expect(p).rejects.toThrow(/after a crash/);
    const g = fs.openAppend("/d/a");
    g.append(b(9, 9, 9, 9));
    await g.truncate(2);
    fs.crash(seededRng(2));
    expect(fs.read("/d/a")!.length).toBe(2);
    await fs.writeDurably("/d/s", "hello");
    fs.crash(seededRng(3));
    expect(new TextDecoder().decode(fs.read("/d/s"))).toBe("hello");
    expect(fs.stats().durableWrites).toBe(1);
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
