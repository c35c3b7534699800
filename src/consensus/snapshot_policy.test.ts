import { describe, expect, test } from "bun:test";
import { compactionIndex, snapshotDue, snapshotLimits, type SnapshotLimits } from "./snapshot_policy.ts";

const limits = (l: Partial<SnapshotLimits> = {}): SnapshotLimits => ({ entries: 100, intervalMs: 0, bytes: 1000, keepEntries: 10, keepBytes: 50, ...l });

describe("snapshotLimits", () => {
  test("fills in ConsensusOptions' documented defaults and keeps what is set", () => {
    const o = { id: "n1" } as Parameters<typeof snapshotLimits>[0];
    expect(snapshotLimits(o)).toEqual({ entries: 8192, intervalMs: 0, bytes: 64 * 1024 * 1024, keepEntries: 1024, keepBytes: 16 * 1024 * 1024 });
    expect(snapshotLimits({ ...o, snapshotEntries: 5, snapshotIntervalMs: 7, snapshotBytes: 9, keepEntries: 2, keepBytes: 3 })).toEqual({
      entries: 5, intervalMs: 7, bytes: 9, keepEntries: 2, keepBytes: 3,
    });
  });
});

describe("snapshotDue", () => {
  test("without an interval: by entries or by bytes", () => {
    const l = limits();
    expect(snapshotDue(l, 99, 999, 0)).toBe(false);
    expect(snapshotDue(l, 100, 0, 0)).toBe(true);
    expect(snapshotDue(l, 1, 1000, 0)).toBe(true);
  });

  test("with an interval: entries wait for it, up to 8 x entries; bytes never wait", () => {
    const l = limits({ intervalMs: 120_000 });
    expect(snapshotDue(l, 100, 0, 119_999)).toBe(false);
    expect(snapshotDue(l, 100, 0, 120_000)).toBe(true);
    expect(snapshotDue(l, 799, 0, 0)).toBe(false);
    expect(snapshotDue(l, 800, 0, 0)).toBe(true);
    expect(snapshotDue(l, 0, 1000, 0)).toBe(true);
    expect(snapshotDue(l, 99, 999, 1e9)).toBe(false);
  });
});

describe("compactionIndex", () => {
  const bytesOf = (sizes: Record<number, number>, fallback = 1) => (i: number) => sizes[i] ?? fallback;

  // The result is what MemoryStorage.compact takes: entries after it stay.
  test("keeps keepEntries entries up to the snapshot's when they are small", () => {
    expect(compactionIndex(limits(), 100, 1, bytesOf({}))).toBe(90);
  });

  test("keeps fewer when they hold more than keepBytes", () => {
    // Entries of 10 bytes: 96..100 make keepBytes (50); 95 would pass it.
    expect(compactionIndex(limits(), 100, 1, bytesOf({}, 10))).toBe(95);
  });

  test("always keeps the snapshot's own entry, however large", () => {
    expect(compactionIndex(limits(), 100, 1, bytesOf({ 100: 10_000 }))).toBe(99);
  });

  test("configuration changes (0 bytes) cost nothing; never below the log's first entry", () => {
    expect(compactionIndex(limits({ keepEntries: 1000 }), 100, 40, bytesOf({}, 0))).toBe(40);
    expect(compactionIndex(limits({ keepEntries: 1000 }), 100, 1, bytesOf({}, 0))).toBe(1);
  });
});
