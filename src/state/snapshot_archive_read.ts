/**
 * Reading a snapshot archive (snapshot_archive.ts) with bounded memory.
 *
 * Limits: state.bin may hold at most MAX_SNAPSHOT_STATE_BYTES (256 MiB: the store restores it in memory,
 * and 8 times the 30 MB snapshots we test restores with), meta.json and SHA256SUMS at most 64 KiB each,
 * and the whole decompressed tar at most the state limit plus 1 MiB. A tar header that declares more is
 * refused at once; otherwise the decompressed bytes are counted as they arrive and decompression stops
 * as soon as the count passes the limit. Other entries are skipped, not kept.
 *
 * `readSnapshotArchiveStreaming` (what a server restore uses) reads the archive twice through a streaming
 * gunzip: first keeping nothing but the small files and a running SHA-256 of state.bin, so that a gzip
 * bomb, a truncated or a damaged archive is refused in constant memory; then, once every checksum
 * matched, again to keep state.bin. The synchronous `readSnapshotArchive` (for local files: `snapshot
 * inspect`) inflates at most the limit in one go.
 */
import { createHash, type Hash } from "node:crypto";
import { createGunzip, gunzipSync } from "node:zlib";
import { SNAPSHOT_FORMAT_VERSION, type SnapshotMeta } from "./snapshot_archive.ts";
import { TarReader, type TarVisitor } from "./tar_reader.ts";

/** Largest state.bin an archive may hold. */
export const MAX_SNAPSHOT_STATE_BYTES = 256 * 1024 * 1024;
const MAX_SMALL_FILE_BYTES = 64 * 1024;
const TAR_SLACK_BYTES = 1024 * 1024;

/** Why an archive was refused: "invalid" (not a snapshot, damaged, unsupported) or "too-large" (over the limits). */
export class SnapshotArchiveError extends Error {
  override readonly name = "SnapshotArchiveError";
  constructor(message: string, readonly reason: "invalid" | "too-large") {
    super(message);
  }
}

const invalid = (m: string) => new SnapshotArchiveError(m, "invalid");
const tooLarge = (m: string) => new SnapshotArchiveError(m, "too-large");
const dec = new TextDecoder();

export interface ReadLimits {
  /** Largest state.bin accepted; default MAX_SNAPSHOT_STATE_BYTES. */
  readonly maxStateBytes?: number;
}

interface Scan {
  meta?: Uint8Array;
  sums?: Uint8Array;
  stateSize?: number;
  stateHash?: Hash;
  state?: Uint8Array;
}

/** Collects meta.json and SHA256SUMS, hashes state.bin (and keeps it when `keep`), skips the rest. */
function scanner(scan: Scan, keep: boolean, maxState: number): TarVisitor {
  let current: { name: string; buf?: Uint8Array; at: number } | undefined;
  return {
    header(name, size) {
      if (name === "meta.json" || name === "SHA256SUMS") {
        if (size > MAX_SMALL_FILE_BYTES) throw invalid(`not a snapshot: ${name} is ${size} bytes, more than ${MAX_SMALL_FILE_BYTES}`);
        if ((name === "meta.json" ? scan.meta : scan.sums) !== undefined) throw invalid(`not a snapshot: ${name} appears twice in the archive`);
        current = { name, buf: new Uint8Array(size), at: 0 };
      } else if (name === "state.bin") {
        if (size > maxState) throw tooLarge(`snapshot is too large: state.bin is ${size} bytes, more than the limit of ${maxState}`);
        if (scan.stateSize !== undefined) throw invalid("not a snapshot: state.bin appears twice in the archive");
        scan.stateSize = size;
        scan.stateHash = createHash("sha256");
        current = { name, buf: keep ? new Uint8Array(size) : undefined, at: 0 };
      } else {
        current = { name, at: 0 };
      }
    },
    data(piece) {
      const c = current!;
      if (c.name === "state.bin") scan.stateHash!.update(piece);
      c.buf?.set(piece, c.at);
      c.at += piece.length;
    },
    end() {
      const c = current!;
      if (c.name === "meta.json") scan.meta = c.buf;
      else if (c.name === "SHA256SUMS") scan.sums = c.buf;
      else if (c.name === "state.bin" && keep) scan.state = c.buf;
      current = undefined;
    },
  };
}

/** Checks what a full pass found: every file present, checksums, meta; returns the meta and state.bin's SHA-256. */
function verify(scan: Scan): { meta: SnapshotMeta; stateSha: string } {
  const need = <T>(v: T | undefined, name: string): T => {
    if (v === undefined) throw invalid(`not a snapshot: ${name} is missing from the archive`);
    return v;
  };
  const metaBytes = need(scan.meta, "meta.json");
  const stateSize = need(scan.stateSize, "state.bin");
  const sums = dec.decode(need(scan.sums, "SHA256SUMS"));
  const actual = { "meta.json": createHash("sha256").update(metaBytes).digest("hex"), "state.bin": scan.stateHash!.digest("hex") };
  for (const name of ["meta.json", "state.bin"] as const) {
    const want = new RegExp(`^([0-9a-f]{64})  ${name.replace(".", "\\.")}$`, "m").exec(sums)?.[1];
    if (!want) throw invalid(`not a snapshot: SHA256SUMS has no checksum for ${name}`);
    if (want !== actual[name]) throw invalid(`snapshot is damaged: the SHA-256 of ${name} does not match SHA256SUMS`);
  }
  let meta: SnapshotMeta;
  try {
    meta = JSON.parse(dec.decode(metaBytes)) as SnapshotMeta;
  } catch {
    throw invalid("not a snapshot: meta.json is not JSON");
  }
  if (meta.Version !== SNAPSHOT_FORMAT_VERSION) throw invalid(`unsupported snapshot version ${meta.Version} (this build reads version ${SNAPSHOT_FORMAT_VERSION})`);
  if (meta.Size !== stateSize) throw invalid(`snapshot is damaged: meta.json says ${meta.Size} bytes of state, state.bin has ${stateSize}`);
  return { meta, stateSha: actual["state.bin"] };
}

const notGzip = (err: unknown) => invalid(`not a snapshot: the file is not gzip data (${(err as Error).message})`);
const overLimit = (limit: number) => tooLarge(`snapshot is too large: the archive decompresses to more than ${limit} bytes`);

/** Feeds the decompressed archive to `reader` chunk by chunk, stopping at its end, at the limit or at an error. */
function streamInto(archive: Uint8Array, reader: TarReader, limit: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const gunzip = createGunzip({ chunkSize: 64 * 1024 });
    let total = 0;
    let settled = false;
    const settle = (err?: unknown) => {
      if (settled) return;
      settled = true;
      gunzip.removeAllListeners("data");
      gunzip.destroy();
      if (err === undefined) resolve();
      else reject(err);
    };
    gunzip.on("data", (chunk: Uint8Array) => {
      if (settled) return;
      total += chunk.length;
      if (total > limit) return settle(overLimit(limit));
      try {
        if (!reader.push(chunk)) settle();
      } catch (e) {
        settle(e instanceof SnapshotArchiveError ? e : invalid(`not a snapshot: ${(e as Error).message}`));
      }
    });
    gunzip.on("end", () => {
      try {
        reader.finish();
        settle();
      } catch (e) {
        settle(invalid(`not a snapshot: ${(e as Error).message}`));
      }
    });
    gunzip.on("error", (e) => settle(notGzip(e)));
    gunzip.end(archive);
  });
}

/** Reads and verifies an archive in bounded, constant memory until it is known good (see the module doc). */
export async function readSnapshotArchiveStreaming(archive: Uint8Array, limits: ReadLimits = {}): Promise<{ meta: SnapshotMeta; state: Uint8Array }> {
  const maxState = limits.maxStateBytes ?? MAX_SNAPSHOT_STATE_BYTES;
  const limit = maxState + TAR_SLACK_BYTES;
  const first: Scan = {};
  await streamInto(archive, new TarReader(scanner(first, false, maxState)), limit);
  const { meta, stateSha } = verify(first);
  const second: Scan = {};
  await streamInto(archive, new TarReader(scanner(second, true, maxState)), limit);
  // The same bytes decompress the same way; this guards the second pass against a reader bug, not the input.
  if (!second.state || second.stateHash!.digest("hex") !== stateSha) throw new Error("snapshot archive read differently the second time");
  return { meta, state: second.state };
}

/** Reads and verifies an archive in one go, inflating at most the limit; throws SnapshotArchiveError saying what is wrong. */
export function readSnapshotArchive(archive: Uint8Array, limits: ReadLimits = {}): { meta: SnapshotMeta; state: Uint8Array } {
  const maxState = limits.maxStateBytes ?? MAX_SNAPSHOT_STATE_BYTES;
  const limit = maxState + TAR_SLACK_BYTES;
  let tar: Uint8Array;
  try {
    tar = new Uint8Array(gunzipSync(archive, { maxOutputLength: limit }));
  } catch (err) {
    if ((err as { code?: string }).code === "ERR_BUFFER_TOO_LARGE" || /larger than/.test((err as Error).message)) throw overLimit(limit);
    throw notGzip(err);
  }
  const scan: Scan = {};
  const reader = new TarReader(scanner(scan, true, maxState));
  try {
    if (reader.push(tar)) reader.finish();
  } catch (e) {
    throw e instanceof SnapshotArchiveError ? e : invalid(`not a snapshot: ${(e as Error).message}`);
  }
  return { meta: verify(scan).meta, state: scan.state! };
}
