import { describe, expect, test } from "bun:test";
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gunzipSync, gzipSync } from "node:zlib";
import { writeSnapshotArchive, writeSnapshotArchiveAsync } from "./snapshot_archive.ts";
import { readSnapshotArchive } from "./snapshot_archive_read.ts";

const state = new TextEncoder().encode(JSON.stringify({ kv: ["a", "b"], pad: "x".repeat(700) }));

describe("snapshot archive", () => {
  test("round-trips the state with its meta", () => {
    const archive = writeSnapshotArchive(state, { index: 42, term: 3, nowMs: 1_700_000_000_123 });
    const { meta, state: back } = readSnapshotArchive(archive);
    expect(meta).toEqual({ ID: "3-42-1700000000123", Size: state.length, Index: 42, Term: 3, Version: 1 });
    expect(back).toEqual(state);
  });

  test("the asynchronous writer gives the same tar, compressed off the event loop", async () => {
    const big = new Uint8Array(3_000_001).map((_, i) => (i * 31) & 0xff);
    for (const s of [state, big]) {
      const o = { index: 7, term: 2, nowMs: 1_700_000_000_000 };
      const archive = await writeSnapshotArchiveAsync([s.subarray(0, 1000), s.subarray(1000)], o, () => Promise.resolve());
      expect(gunzipSync(archive)).toEqual(gunzipSync(writeSnapshotArchive(s, o)));
      expect(readSnapshotArchive(archive).state).toEqual(s);
    }
  });

  test("is a gzipped tar that tar and sha256sum accept", () => {
    const dir = mkdtempSync(join(tmpdir(), "causeway-snap-"));
    try {
      writeFileSync(join(dir, "s.snap"), writeSnapshotArchive(state, { index: 1, term: 1, nowMs: 0 }));
      expect(execFileSync("tar", ["tzf", "s.snap"], { cwd: dir }).toString().split("\n").filter(Boolean)).toEqual(["meta.json", "state.bin", "SHA256SUMS"]);
      execFileSync("tar", ["xzf", "s.snap"], { cwd: dir });
      expect(execFileSync("sha256sum", ["-c", "SHA256SUMS"], { cwd: dir }).toString()).toContain("state.bin: OK");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("refuses garbage, truncation and a changed byte, saying why", () => {
    expect(() => readSnapshotArchive(new TextEncoder().encode("hello"))).toThrow("not gzip data");
    const archive = writeSnapshotArchive(state, { index: 1, term: 1, nowMs: 0 });
    const tar = new Uint8Array(gunzipSync(archive));
    expect(() => readSnapshotArchive(new Uint8Array(gzipSync(tar.subarray(0, 1800))))).toThrow("truncated");
    const flipped = tar.slice();
    flipped[512 * 3 + 10] ^= 1; // a byte of state.bin's data (its header is the third block)
    expect(() => readSnapshotArchive(new Uint8Array(gzipSync(flipped)))).toThrow("the SHA-256 of state.bin does not match");
  });
});
