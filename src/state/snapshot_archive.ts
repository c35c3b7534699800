/**
 * The snapshot file of `/v1/snapshot` and `causeway snapshot save|restore|inspect`: like Consul's
 * (snapshot/archive.go), a gzipped tar holding `meta.json` (ID, Size, Index, Term, Version),
 * `state.bin` (the state store's snapshot) and `SHA256SUMS` (checksums of both), so standard tools can
 * open it and a damaged file is refused before anything is restored. Reading it is bounded (see
 * MAX_SNAPSHOT_STATE_BYTES): the decompressed bytes are counted as they come, so a gzip bomb is refused
 * once it passes the limit, never inflated whole (snapshot_archive_read.ts).
 */
import { createHash } from "node:crypto";
import { createGzip, gzipSync } from "node:zlib";
import { concatBytes } from "../lib/index.ts";

export interface SnapshotMeta {
  readonly ID: string;
  /** Bytes of state.bin. */
  readonly Size: number;
  readonly Index: number;
  readonly Term: number;
  /** Format version of state.bin (Consul's snapshot version field). */
  readonly Version: number;
}

export const SNAPSHOT_FORMAT_VERSION = 1;

const enc = new TextEncoder();

/** Lowercase hex SHA-256 of `b`. */
export function sha256Hex(b: Uint8Array): string {
  return createHash("sha256").update(b).digest("hex");
}

/** The 512-byte ustar header of an entry of `size` bytes. */
export function tarHeader(name: string, size: number, mtimeS: number): Uint8Array {
  const header = new Uint8Array(512);
  const put = (text: string, at: number, len: number) => header.set(enc.encode(text).subarray(0, len), at);
  const octal = (n: number, len: number) => n.toString(8).padStart(len - 1, "0");
  put(name, 0, 100);
  put(octal(0o644, 8), 100, 8);
  put(octal(0, 8), 108, 8);
  put(octal(0, 8), 116, 8);
  put(octal(size, 12), 124, 12);
  put(octal(mtimeS, 12), 136, 12);
  put("        ", 148, 8); // checksum field counts as spaces while summing
  put("0", 156, 1);
  put("ustar\u000000", 257, 8);
  let sum = 0;
  for (const b of header) sum += b;
  put(`${octal(sum, 7)}\u0000`, 148, 8);
  return header;
}

/** One ustar entry: its header, the data and the padding to 512 bytes, as parts. */
function tarEntry(name: string, data: Uint8Array, mtimeS: number): Uint8Array[] {
  const pad = (512 - (data.length % 512)) % 512;
  return [tarHeader(name, data.length, mtimeS), data, new Uint8Array(pad)];
}

/** The archive's uncompressed tar, as parts (the state is not copied), given the state's size and SHA-256. */
function archiveTar(state: readonly Uint8Array[], size: number, stateSha256: string, o: { index: number; term: number; nowMs: number }): Uint8Array[] {
  const meta: SnapshotMeta = { ID: `${o.term}-${o.index}-${o.nowMs}`, Size: size, Index: o.index, Term: o.term, Version: SNAPSHOT_FORMAT_VERSION };
  const metaBytes = enc.encode(JSON.stringify(meta));
  const sums = enc.encode(`${sha256Hex(metaBytes)}  meta.json\n${stateSha256}  state.bin\n`);
  const mtime = Math.floor(o.nowMs / 1000);
  const statePad = new Uint8Array((512 - (size % 512)) % 512);
  return [...tarEntry("meta.json", metaBytes, mtime), tarHeader("state.bin", size, mtime), ...state, statePad, ...tarEntry("SHA256SUMS", sums, mtime), new Uint8Array(1024)];
}

/** Builds the archive. `nowMs` stamps the entries and the ID (`<term>-<index>-<ms>`, as Consul's). */
export function writeSnapshotArchive(state: Uint8Array, o: { index: number; term: number; nowMs: number }): Uint8Array {
  return new Uint8Array(gzipSync(concatBytes(archiveTar([state], state.length, sha256Hex(state), o))));
}

/**
 * writeSnapshotArchive's bytes for a state given in parts (joined: the state), without joining them:
 * the SHA-256 is computed with `pause()` awaited every 16 MB, and the tar is compressed by a zlib
 * stream (its thread pool), so a large state (150 MB took 3 s of synchronous work here) does not stop
 * the event loop.
 */
export async function writeSnapshotArchiveAsync(
  state: readonly Uint8Array[], o: { index: number; term: number; nowMs: number }, pause: () => Promise<void>,
): Promise<Uint8Array> {
  const hash = createHash("sha256");
  let size = 0;
  let sincePause = 0;
  for (const part of state) {
    hash.update(part);
    size += part.length;
    sincePause += part.length;
    if (sincePause >= HASH_SLICE) {
      sincePause = 0;
      await pause();
    }
  }
  const parts = archiveTar(state, size, hash.digest("hex"), o);
  return new Promise((resolve, reject) => {
    const gz = createGzip();
    const out: Uint8Array[] = [];
    gz.on("data", (chunk: Uint8Array) => out.push(chunk));
    gz.on("error", reject);
    gz.on("end", () => resolve(concatBytes(out)));
    for (const p of parts) if (p.length) gz.write(p);
    gz.end();
  });
}

/** Bytes hashed between pauses by writeSnapshotArchiveAsync (about 20 ms of SHA-256 here). */
const HASH_SLICE = 16 * 1024 * 1024;
