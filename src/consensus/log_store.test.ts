import { afterAll, describe, expect, test } from "bun:test";
import { appendFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Entry, HardState, Snapshot } from "../raft/index.ts";
import type { FileSystem } from "../platform/index.ts";
import { memoryLogger, nodeFileSystem, silentLogger } from "../platform/index.ts";
import { simFileSystem } from "../../test/harness/sim_fs.ts";
import { LogCorruptionError } from "./ports.ts";
import { openLogStore } from "./log_store.ts";
import { frameBatch, frameHeader, scanFrames } from "./log_format.ts";

const tmpDirs: string[] = [];
afterAll(() => tmpDirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

interface Env {
  fs: FileSystem;
  dir: string;
  /** Appends raw bytes to a file, as a crash leftover would. */
  appendRaw(name: string, bytes: Uint8Array): void;
  /** Flips a byte of a file. */
  flip(name: string, offset: number): void;
}

const envs: [string, () => Env][] = [
  ["simfs", () => {
    const fs = simFileSystem();
    return {
      fs, dir: "/data/raft",
      appendRaw: (name, bytes) => fs.openAppend(`/data/raft/${name}`).append(bytes),
      flip: (name, offset) => fs.corrupt(`/data/raft/${name}`, offset),
    };
  }],
  ["nodefs", () => {
    const dir = mkdtempSync(join(tmpdir(), "causeway-log-"));
    tmpDirs.push(dir);
    return {
      fs: nodeFileSystem(), dir,
      appendRaw: (name, bytes) => appendFileSync(join(dir, name), bytes),
      flip: (name, offset) => {
        const b = readFileSync(join(dir, name));
        b[offset]! ^= 0xff;
        writeFileSync(join(dir, name), b);
      },
    };
  }],
];

const ent = (index: number, term: number, size = 8): Entry => ({ type: "Normal", index, term, data: new Uint8Array(size).fill(index & 0xff) });
const range = (from: number, to: number, term: number, size?: number) => Array.from({ length: to - from + 1 }, (_, i) => ent(from + i, term, size));
const hs = (term: number, commit: number, vote = "n1"): HardState => ({ term, vote, commit });
const snapMeta = (index: number, term: number): Snapshot => ({
  index, term, confState: { voters: ["n1", "n2", "n3"], learners: [], votersOutgoing: [], learnersNext: [], autoLeave: false },
});
const segs = (e: Env) => e.fs.list(e.dir).filter((n) => n.endsWith(".log"));

for (const [envName, mk] of envs) {
  describe(`log store on ${envName}`, () => {
    const open = (e: Env, segmentBytes?: number, logger = silentLogger()) => openLogStore({ fs: e.fs, dir: e.dir, logger, segmentBytes });

    test("append, sync, recover round trip; hard state updates", async () => {
      const e = mk();
      const s = open(e);
      expect(s.recover()).toEqual({ hardState: { term: 0, vote: "", commit: 0 }, snapshot: expect.objectContaining({ index: 0 }), entries: [] });
      s.save(hs(1, 0), range(1, 5, 1));
      s.save(hs(2, 3, "n2"), []);
      s.save(undefined, [{ type: "ConfChange", index: 6, term: 2, change: { transition: "Auto", changes: [{ type: "AddNode", nodeId: "n4" }], context: Uint8Array.of(1) } }]);
      await s.sync();
      s.close();
      const r = open(e).recover();
      expect(r.hardState).toEqual(hs(2, 3, "n2"));
      expect(r.entries.map((x) => x.index)).toEqual([1, 2, 3, 4, 5, 6]);
      expect(r.entries[5]).toEqual({ type: "ConfChange", index: 6, term: 2, change: { transition: "Auto", changes: [{ type: "AddNode", nodeId: "n4" }], context: Uint8Array.of(1) } });
      expect(r.entries[2]).toEqual(ent(3, 1));
    });

    test("conflicts (suffix replaced) survive restart", async () => {
      const e = mk();
      const s = open(e);
      s.recover();
      s.save(hs(1, 0), range(1, 10, 1));
      s.save(hs(2, 0), range(6, 8, 2));
      await s.sync();
      s.close();
      const s2 = open(e);
      const r = s2.recover();
      expect(r.entries.map((x) => `${x.index}/${x.term}`)).toEqual(["1/1", "2/1", "3/1", "4/1", "5/1", "6/2", "7/2", "8/2"]);
      s2.save(undefined, range(9, 9, 2));
      expect(() => s2.save(undefined, range(12, 12, 2))).toThrow(/gap/);
      await s2.sync();
      s2.close();
      expect(open(e).recover().entries.length).toBe(9);
    });

    test("torn tail is truncated with a warning and later appends work", async () => {
      const e = mk();
      const s = open(e);
      s.recover();
      s.save(hs(1, 1), range(1, 3, 1));
      await s.sync();
      s.close();
      const name = segs(e)[0]!;
      e.appendRaw(name, Uint8Array.of(200, 0, 0, 0, 1, 2, 3, 4, 2, 9, 9)); // a partial record
      const log = memoryLogger();
      const s2 = open(e, undefined, log);
      expect(s2.recover().entries.length).toBe(3);
      expect(log.lines.some((l) => l.includes("[WARN]") && l.includes("torn tail") && l.includes(name) && /offset=\d+/.test(l))).toBe(true);
      s2.save(undefined, range(4, 6, 1));
      await s2.sync();
      s2.close();
      const log3 = memoryLogger();
      expect(open(e, undefined, log3).recover().entries.map((x) => x.index)).toEqual([1, 2, 3, 4, 5, 6]);
      expect(log3.lines.filter((l) => l.includes("[WARN]"))).toEqual([]);
    });

    test("a bad checksum followed by valid records refuses to start, naming file and index", async () => {
      const e = mk();
      const s = open(e);
      s.recover();
      s.save(hs(1, 0), range(1, 3, 1));
      s.save(undefined, range(4, 6, 1, 100));
      s.save(undefined, range(7, 9, 1));
      await s.sync();
      s.close();
      const name = segs(e)[0]!;
      const size = e.fs.read(`${e.dir}/${name}`)!.length;
      e.flip(name, size - 200); // inside the 4..6 batch
      let err: unknown;
      try {
        open(e).recover();
      } catch (x) {
        err = x;
      }
      expect(err).toBeInstanceOf(LogCorruptionError);
      expect((err as LogCorruptionError).file).toBe(name);
      expect((err as LogCorruptionError).index).toBe(4);
      expect(String(err)).toMatch(/checksum mismatch at offset \d+, followed by a valid record/);
    });

    test("a torn record whose entry data embeds a valid frame is a torn tail, not corruption", async () => {
      // Client data that looks like a log record (a batch claiming entry 4 at term 9), padded on both sides.
      const evil = frameBatch(hs(9, 9), [ent(4, 9)]);
      const data = new Uint8Array(40 + evil.length + 40).fill(0x5a);
      data.set(evil, 40);
      const record = frameBatch(hs(1, 3), [{ type: "Normal", index: 4, term: 1, data }]);
      const at = record.length - 40 - evil.length; // where the embedded frame starts inside the record
      expect(scanFrames(record.subarray(at, at + evil.length)).frames.length).toBe(1);
      const tears: [string, Uint8Array][] = [
        ["cut after the embedded frame", record.subarray(0, at + evil.length + 10)],
        ["complete but last bytes garbled", record.map((b, i) => (i >= record.length - 3 ? b ^ 0xa5 : b))],
      ];
      for (const [how, torn] of tears) {
        const e = mk();
        const s = open(e);
        s.recover();
        s.save(hs(1, 2), range(1, 3, 1));
        await s.sync();
        s.close();
        const name = segs(e)[0]!;
        const size = e.fs.read(`${e.dir}/${name}`)!.length;
        e.appendRaw(name, torn); // what a crash in the middle of writing the record may leave
        const log = memoryLogger();
        const s2 = open(e, undefined, log);
        const r = s2.recover();
        expect({ how, entries: r.entries.map((x) => x.index), hs: r.hardState }).toEqual({ how, entries: [1, 2, 3], hs: hs(1, 2) });
        expect(log.lines.some((l) => l.includes("[WARN]") && l.includes("torn tail") && l.includes(`offset=${size}`))).toBe(true);
        s2.save(hs(1, 3), [{ type: "Normal", index: 4, term: 1, data }]);
        await s2.sync();
        s2.close();
        const r3 = open(e).recover();
        expect(r3.entries.map((x) => x.index)).toEqual([1, 2, 3, 4]);
        expect(r3.entries[3]).toEqual({ type: "Normal", index: 4, term: 1, data });
      }
    });

    test("segment rotation, recovery across segments, compaction after a snapshot", async () => {
      const e = mk();
      const s = open(e, 2048);
      s.recover();
      for (let i = 1; i <= 200; i += 10) {
        s.save(hs(1, i), range(i, i + 9, 1, 50));
        await s.sync();
      }
      expect(segs(e).length).toBeGreaterThan(4);
      await s.saveSnapshot(snapMeta(150, 1), Uint8Array.of(1, 2, 3));
      const before = segs(e).length;
      s.compact(150);
      expect(segs(e).length).toBeLessThan(before);
      s.close();
      const s2 = open(e, 2048);
      const r = s2.recover();
      expect(r.snapshot).toEqual(snapMeta(150, 1));
      expect(r.entries.map((x) => x.index)).toEqual(Array.from({ length: 50 }, (_, i) => 151 + i));
      expect(r.hardState).toEqual(hs(1, 191));
      expect(s2.loadSnapshot()).toEqual({ meta: snapMeta(150, 1), data: Uint8Array.of(1, 2, 3) });
    });

    test("snapshots: newest two kept, entries before the snapshot not returned, mismatching log dropped", async () => {
      const e = mk();
      const s = open(e);
      expect(s.recover().snapshot.index).toBe(0);
      expect(s.loadSnapshot()).toBeUndefined();
      s.save(hs(3, 20), range(1, 20, 3));
      await s.sync();
      for (const i of [5, 10, 15]) await s.saveSnapshot(snapMeta(i, 3), Uint8Array.of(i));
      expect(e.fs.list(e.dir).filter((n) => n.endsWith(".snap")).length).toBe(2);
      s.close();
      const s2 = open(e);
      const r = s2.recover();
      expect(r.snapshot.index).toBe(15);
      expect(r.entries.map((x) => x.index)).toEqual([16, 17, 18, 19, 20]);
      expect(s2.loadSnapshot()!.data).toEqual(Uint8Array.of(15));
      // A snapshot from a newer leader that disagrees with our log discards the log (Raft §7).
      await s2.saveSnapshot(snapMeta(18, 4), Uint8Array.of(18));
      s2.save(undefined, range(19, 19, 4));
      await s2.sync();
      s2.close();
      const r3 = open(e).recover();
      expect(r3.entries.map((x) => `${x.index}/${x.term}`)).toEqual(["19/4"]);
    });

    test("a damaged newest snapshot falls back to the older one when the log covers the gap", async () => {
      const e = mk();
      const s = open(e);
      s.recover();
      s.save(hs(1, 20), range(1, 20, 1));
      await s.sync();
      await s.saveSnapshot(snapMeta(5, 1), Uint8Array.of(5));
      await s.saveSnapshot(snapMeta(10, 1), Uint8Array.of(10));
      s.close();
      const newest = e.fs.list(e.dir).filter((n) => n.endsWith(".snap")).at(-1)!;
      e.flip(newest, 20);
      const log = memoryLogger();
      const s2 = open(e, undefined, log);
      const r = s2.recover();
      expect(r.snapshot.index).toBe(5);
      expect(r.entries[0]!.index).toBe(6);
      expect(s2.loadSnapshot()!.data).toEqual(Uint8Array.of(5));
      expect(log.lines.some((l) => l.includes("snapshot file unusable") && l.includes(newest))).toBe(true);
    });

    test("a bad checksum in the very last record is a torn tail; in a sealed segment it is corruption", async () => {
      const e = mk();
      const s = open(e, 512);
      s.recover();
      for (let i = 1; i <= 60; i += 5) {
        s.save(hs(1, 0), range(i, i + 4, 1, 20));
        await s.sync();
      }
      s.close();
      const names = segs(e);
      expect(names.length).toBeGreaterThan(2);
      const lastName = names.at(-1)!;
      e.flip(lastName, e.fs.read(`${e.dir}/${lastName}`)!.length - 3);
      const log = memoryLogger();
      const r = open(e, 512, log).recover();
      expect(r.entries.at(-1)!.index).toBe(55);
      expect(log.lines.some((l) => l.includes("torn tail") && l.includes(lastName))).toBe(true);
      e.flip(names[0]!, e.fs.read(`${e.dir}/${names[0]!}`)!.length - 3);
      expect(() => open(e, 512).recover()).toThrow(LogCorruptionError);
      expect(() => open(e, 512).recover()).toThrow(new RegExp(`${names[0]!}.*sealed`));
    });

    test("save and sync contracts: recover first, no writes at or below the snapshot", async () => {
      const e = mk();
      const s = open(e);
      expect(() => s.save(undefined, [ent(1, 1)])).toThrow(/recover\(\) must be called first/);
      s.recover();
      s.save(undefined, range(1, 5, 1));
      await s.saveSnapshot(snapMeta(3, 1), new Uint8Array(0));
      expect(() => s.save(undefined, [ent(3, 2)])).toThrow(/at or below the snapshot/);
      await s.sync();
      const f = s.stats().fsyncs;
      await s.sync(); // nothing new: no fsync
      expect(s.stats().fsyncs).toBe(f);
    });

    test("group commit: many concurrent syncs share few fsyncs", async () => {
      const e = mk();
      const s = open(e);
      s.recover();
      const waits: Promise<void>[] = [];
      for (let i = 1; i <= 100; i++) {
        s.save(hs(1, i - 1), [ent(i, 1)]);
        waits.push(s.sync());
      }
      await Promise.all(waits);
      expect(s.stats().fsyncs).toBeLessThanOrEqual(3);
      expect(s.stats().bytesWritten).toBeGreaterThan(100 * 8);
      await s.sync();
      expect(s.stats().fsyncs).toBeLessThanOrEqual(3);
      s.close();
      expect(open(e).recover().entries.length).toBe(100);
    });
  });
}

describe("scanFrames: torn vs corrupt looks only where the record chain points", () => {
  const cat = (...parts: Uint8Array[]) => {
    const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
    let off = 0;
    for (const p of parts) (out.set(p, off), (off += p.length));
    return out;
  };
  const head = frameHeader(1, 1);

  test("a damaged payload followed by a valid record at its chained end is corruption", () => {
    const mid = frameBatch(hs(1, 0), range(1, 3, 1));
    const buf = cat(head, mid, frameBatch(undefined, range(4, 4, 1)));
    buf[head.length + 12]! ^= 0xff;
    const r = scanFrames(buf);
    expect(r.frames.length).toBe(1);
    expect(r.bad).toEqual({ offset: head.length, reason: "checksum mismatch", validAfter: head.length + mid.length });
  });

  test("a valid frame anywhere else after the bad one is not looked at", () => {
    const evil = frameBatch(undefined, range(9, 9, 9));
    const data = cat(new Uint8Array(7).fill(1), evil, new Uint8Array(5).fill(2));
    const rec = frameBatch(undefined, [{ type: "Normal", index: 2, term: 1, data }]);
    // Torn in the middle (length runs past the end), and with an implausible (zero) length field.
    const cut = cat(head, rec.subarray(0, rec.length - 3));
    expect(scanFrames(cut).bad).toEqual({ offset: head.length, reason: expect.stringMatching(/runs past the end/), validAfter: undefined });
    const zeroed = cat(head, rec);
    zeroed.fill(0, head.length, head.length + 4);
    expect(scanFrames(zeroed).bad).toEqual({ offset: head.length, reason: "bad record length 0", validAfter: undefined });
    // A plausible length that points into garbage: still a tail.
    const garbled = cat(head, rec, Uint8Array.of(1, 2, 3));
    garbled[head.length + rec.length - 1]! ^= 0xff;
    expect(scanFrames(garbled).bad).toEqual({ offset: head.length, reason: "checksum mismatch", validAfter: undefined });
  });
});
