import { describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { gzipSync } from "node:zlib";
import { tarHeader, writeSnapshotArchive } from "./snapshot_archive.ts";
import { readSnapshotArchive, readSnapshotArchiveStreaming, SnapshotArchiveError } from "./snapshot_archive_read.ts";

const MiB = 1024 * 1024;
const enc = new TextEncoder();
const state = enc.encode(JSON.stringify({ kv: ["a", "b"], pad: "x".repeat(70_000) }));

/** Gzip members concatenated: `repeat` copies of gzip(`zeros` zero bytes) after gzip(`head`). gunzip reads them as one stream. */
function bomb(head: Uint8Array, zeros: number, repeat: number): Uint8Array {
  const z = gzipSync(new Uint8Array(zeros));
  const h = gzipSync(head);
  const out = new Uint8Array(h.length + z.length * repeat);
  out.set(h);
  for (let i = 0; i < repeat; i++) out.set(z, h.length + i * z.length);
  return out;
}

const pad = (b: Uint8Array) => {
  const out = new Uint8Array(Math.ceil(b.length / 512) * 512);
  out.set(b);
  return out;
};

/** The SnapshotArchiveError the streaming reader refuses `archive` with. */
const refusal = (archive: Uint8Array, limits = {}) =>
  readSnapshotArchiveStreaming(archive, limits).then(() => expect.unreachable("accepted"), (e: SnapshotArchiveError) => (expect(e).toBeInstanceOf(SnapshotArchiveError), e));

describe("reading snapshot archives with bounded memory", () => {
  test("the streaming reader returns what the archive holds, like the one-shot reader", async () => {
    const archive = writeSnapshotArchive(state, { index: 42, term: 3, nowMs: 1_700_000_000_123 });
    const streamed = await readSnapshotArchiveStreaming(archive);
    expect(streamed).toEqual(readSnapshotArchive(archive));
    expect(streamed.state).toEqual(state);
    expect(streamed.meta.Size).toBe(state.length);
  });

  test("garbage, truncation and damage are refused with the one-shot reader's words", async () => {
    expect((await refusal(enc.encode("hello"))).message).toStartWith("not a snapshot: the file is not gzip data");
    const archive = writeSnapshotArchive(state, { index: 1, term: 1, nowMs: 0 });
    const tar = Bun.gunzipSync(archive as Uint8Array<ArrayBuffer>);
    expect((await refusal(gzipSync(tar.subarray(0, 5000)))).message).toBe("not a snapshot: the archive is truncated");
    const flipped = tar.slice();
    flipped[512 * 3 + 10] ^= 1;
    expect((await refusal(gzipSync(flipped))).message).toBe("snapshot is damaged: the SHA-256 of state.bin does not match SHA256SUMS");
    expect((await refusal(gzipSync(tar.subarray(0, 1024)))).message).toBe("not a snapshot: state.bin is missing from the archive");
  });

  test("a gzip bomb of zeros (1 GiB) is refused at its first block, without inflating it", async () => {
    // Inflated whole, it would pass the limit and be refused as too large instead.
    const e = await refusal(bomb(new Uint8Array(0), 16 * MiB, 64));
    expect(e.message).toBe("not a snapshot: meta.json is missing from the archive");
  });

  test("a tar entry declaring more than the limit is refused at its header", async () => {
    const e = await refusal(bomb(tarHeader("state.bin", 4 * 1024 * MiB, 0), MiB, 4));
    expect([e.reason, e.message]).toEqual(["too-large", `snapshot is too large: state.bin is ${4 * 1024 * MiB} bytes, more than the limit of ${256 * MiB}`]);
    expect(() => readSnapshotArchive(bomb(tarHeader("state.bin", 4 * 1024 * MiB, 0), MiB, 4))).toThrow("snapshot is too large");
  });

  test("entries the reader skips still count: inflating stops at the limit", async () => {
    const junk = bomb(tarHeader("junk", 2 * 1024 * MiB, 0), 16 * MiB, 8);
    const e = await refusal(junk, { maxStateBytes: 32 * MiB });
    expect([e.reason, e.message]).toEqual(["too-large", `snapshot is too large: the archive decompresses to more than ${33 * MiB} bytes`]);
    expect(() => readSnapshotArchive(junk, { maxStateBytes: 32 * MiB })).toThrow(`the archive decompresses to more than ${33 * MiB} bytes`);
  });

  test("a well-formed bomb (meta.json, 240 MiB of zeros as state.bin) is refused by its checksum in constant memory", async () => {
    const size = 240 * MiB;
    const meta = enc.encode(JSON.stringify({ ID: "1-1-0", Size: size, Index: 1, Term: 1, Version: 1 }));
    const head = new Uint8Array([...tarHeader("meta.json", meta.length, 0), ...pad(meta), ...tarHeader("state.bin", size, 0)]);
    const sums = enc.encode(`${createHash("sha256").update(meta).digest("hex")}  meta.json\n${"0".repeat(64)}  state.bin\n`);
    const tail = gzipSync(new Uint8Array([...tarHeader("SHA256SUMS", sums.length, 0), ...pad(sums), ...new Uint8Array(1024)]));
    const body = bomb(head, 16 * MiB, 15);
    const archive = new Uint8Array([...body, ...tail]);
    Bun.gc(true);
    const before = process.memoryUsage().rss;
    let peak = before;
    const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 5);
    const e = await refusal(archive).finally(() => clearInterval(sampler));
    expect(e.message).toBe("snapshot is damaged: the SHA-256 of state.bin does not match SHA256SUMS");
    // Inflated 240 MiB but never held more than a few chunks of it.
    console.log(`well-formed bomb: RSS grew by ${((peak - before) / MiB).toFixed(1)} MiB while inflating ${size / MiB} MiB`);
    // Holding it would add 240 MiB; the margin absorbs other tests' garbage in the same process.
    expect((peak - before) / MiB).toBeLessThan(120);
  });
});
