/**
 * The snapshot file of `/v1/snapshot` and `causeway snapshot save|restore|inspect`: like Consul's
 * (snapshot/archive.go), a gzipped tar holding `meta.json` (ID, Size, Index, Term, Version),
 * `state.bin` (the state store's snapshot) and `SHA256SUMS` (checksums of both), so standard tools can
 * open it and a damaged file is refused before anything is restored.
 */
import { gunzipSync, gzipSync } from "node:zlib";
import { sha256 } from "@noble/hashes/sha2.js";
import { bytesToHex } from "@noble/hashes/utils.js";

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
const dec = new TextDecoder();

/** One ustar entry: a 512-byte header, then the data padded to 512 bytes. */
function tarEntry(name: string, data: Uint8Array, mtimeS: number): Uint8Array {
  const header = new Uint8Array(512);
  const put = (text: string, at: number, len: number) => header.set(enc.encode(text).subarray(0, len), at);
  const octal = (n: number, len: number) => n.toString(8).padStart(len - 1, "0");
  put(name, 0, 100);
  put(octal(0o644, 8), 100, 8);
  put(octal(0, 8), 108, 8);
  put(octal(0, 8), 116, 8);
  put(octal(data.length, 12), 124, 12);
  put(octal(mtimeS, 12), 136, 12);
  put("        ", 148, 8); // checksum field counts as spaces while summing
  put("0", 156, 1);
  put("ustar\u000000", 257, 8);
  let sum = 0;
  for (const b of header) sum += b;
  put(`${octal(sum, 7)}\u0000`, 148, 8);
  const out = new Uint8Array(512 + Math.ceil(data.length / 512) * 512);
  out.set(header);
  out.set(data, 512);
  return out;
}

function concat(parts: readonly Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/** Builds the archive. `nowMs` stamps the entries and the ID (`<term>-<index>-<ms>`, as Consul's). */
export function writeSnapshotArchive(state: Uint8Array, o: { index: number; term: number; nowMs: number }): Uint8Array {
  const meta: SnapshotMeta = { ID: `${o.term}-${o.index}-${o.nowMs}`, Size: state.length, Index: o.index, Term: o.term, Version: SNAPSHOT_FORMAT_VERSION };
  const metaBytes = enc.encode(JSON.stringify(meta));
  const sums = enc.encode(`${bytesToHex(sha256(metaBytes))}  meta.json\n${bytesToHex(sha256(state))}  state.bin\n`);
  const mtime = Math.floor(o.nowMs / 1000);
  const tar = concat([tarEntry("meta.json", metaBytes, mtime), tarEntry("state.bin", state, mtime), tarEntry("SHA256SUMS", sums, mtime), new Uint8Array(1024)]);
  return new Uint8Array(gzipSync(tar));
}

/** Reads and verifies an archive; throws an Error saying what is wrong (not gzip, not a tar, missing file, checksum). */
export function readSnapshotArchive(archive: Uint8Array): { meta: SnapshotMeta; state: Uint8Array } {
  let tar: Uint8Array;
  try {
    tar = new Uint8Array(gunzipSync(archive));
  } catch (err) {
    throw new Error(`not a snapshot: the file is not gzip data (${(err as Error).message})`);
  }
  const files = new Map<string, Uint8Array>();
  for (let at = 0; at + 512 <= tar.length;) {
    const header = tar.subarray(at, at + 512);
    if (header.every((b) => b === 0)) break;
    const name = dec.decode(header.subarray(0, 100)).replace(/\0.*$/s, "");
    const size = parseInt(dec.decode(header.subarray(124, 136)).replace(/\0.*$/s, "").trim(), 8);
    if (!Number.isFinite(size) || at + 512 + size > tar.length) throw new Error(`not a snapshot: the tar entry ${JSON.stringify(name)} is truncated`);
    files.set(name, tar.slice(at + 512, at + 512 + size));
    at += 512 + Math.ceil(size / 512) * 512;
  }
  const need = (name: string) => {
    const f = files.get(name);
    if (!f) throw new Error(`not a snapshot: ${name} is missing from the archive`);
    return f;
  };
  const metaBytes = need("meta.json");
  const state = need("state.bin");
  const sums = dec.decode(need("SHA256SUMS"));
  for (const [name, data] of [["meta.json", metaBytes], ["state.bin", state]] as const) {
    const want = new RegExp(`^([0-9a-f]{64})  ${name.replace(".", "\\.")}$`, "m").exec(sums)?.[1];
    if (!want) throw new Error(`not a snapshot: SHA256SUMS has no checksum for ${name}`);
    if (want !== bytesToHex(sha256(data))) throw new Error(`snapshot is damaged: the SHA-256 of ${name} does not match SHA256SUMS`);
  }
  let meta: SnapshotMeta;
  try {
    meta = JSON.parse(dec.decode(metaBytes)) as SnapshotMeta;
  } catch {
    throw new Error("not a snapshot: meta.json is not JSON");
  }
  if (meta.Version !== SNAPSHOT_FORMAT_VERSION) throw new Error(`unsupported snapshot version ${meta.Version} (this build reads version ${SNAPSHOT_FORMAT_VERSION})`);
  if (meta.Size !== state.length) throw new Error(`snapshot is damaged: meta.json says ${meta.Size} bytes of state, state.bin has ${state.length}`);
  return { meta, state };
}
