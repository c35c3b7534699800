/**
 * Reading the metadata of a snapshot file, for `snapshot inspect` and the verify step of `snapshot save`.
 * Two layouts are understood (the server decides which it writes; both are checked the same way):
 *
 * 1. Consul's (snapshot/archive.go in hashicorp/consul): a gzipped tar holding `meta.json` (Raft's
 *    SnapshotMeta: `{"Version","ID","Index","Term","Size",...}`), `state.bin`, and `SHA256SUMS`
 *    (`<hex>  <name>` lines); every file listed in SHA256SUMS must be present with that digest.
 * 2. A JSON header line: the file starts with one line holding a JSON object with the same fields
 *    (`{"ID":"2-5-1700000000000","Index":5,"Term":2,"Version":1,"Size":N}`), then the state bytes. When
 *    `Size` is given it must equal the number of bytes after the newline; when absent that count is used.
 *
 * Anything else is "unrecognized": `save` then checks only that the download was complete.
 */
import { createHash } from "node:crypto";
import { gunzipSync } from "node:zlib";

/** What `snapshot inspect` prints. */
export interface SnapshotMeta {
  readonly ID: string;
  readonly Size: number;
  readonly Index: number;
  readonly Term: number;
  readonly Version: number;
}

export type SnapshotFormat = "consul-archive" | "json-header" | "unrecognized";

/** Which layout `bytes` claim to be, from their first bytes (gzip magic, or `{`). */
export function snapshotFormat(bytes: Uint8Array): SnapshotFormat {
  if (bytes.length >= 2 && bytes[0] === 0x1f && bytes[1] === 0x8b) return "consul-archive";
  const first = bytes.findIndex((b) => b !== 0x20 && b !== 0x09 && b !== 0x0a && b !== 0x0d);
  return first >= 0 && bytes[first] === 0x7b ? "json-header" : "unrecognized";
}

/** The metadata of a snapshot in either layout; throws with the reason when it cannot be verified. */
export function readSnapshotMeta(bytes: Uint8Array): SnapshotMeta {
  const format = snapshotFormat(bytes);
  if (format === "consul-archive") return readArchive(bytes);
  if (format === "json-header") return readJsonHeader(bytes);
  throw new Error("unrecognized snapshot format: neither a gzipped archive with meta.json nor a JSON header line");
}

function toMeta(raw: unknown, defaultSize: number): SnapshotMeta {
  if (raw === null || typeof raw !== "object" || Array.isArray(raw)) throw new Error("snapshot metadata is not a JSON object");
  const m = raw as Record<string, unknown>;
  const num = (name: string, fallback?: number): number => {
    const v = m[name] ?? fallback;
    if (typeof v !== "number" || !Number.isSafeInteger(v) || v < 0) throw new Error(`snapshot metadata field ${name} is missing or not an unsigned integer`);
    return v;
  };
  return { ID: typeof m.ID === "string" ? m.ID : "", Size: num("Size", defaultSize), Index: num("Index"), Term: num("Term"), Version: num("Version", 1) };
}

function readJsonHeader(bytes: Uint8Array): SnapshotMeta {
  const nl = bytes.indexOf(0x0a);
  const headerEnd = nl < 0 ? bytes.length : nl;
  let header: unknown;
  try {
    header = JSON.parse(new TextDecoder().decode(bytes.subarray(0, headerEnd)));
  } catch (err) {
    throw new Error(`failed to decode snapshot header: ${(err as Error).message}`);
  }
  const stateSize = nl < 0 ? 0 : bytes.length - nl - 1;
  const meta = toMeta(header, stateSize);
  if (meta.Size !== stateSize) throw new Error(`snapshot is truncated or padded: header says ${meta.Size} bytes of state, file has ${stateSize}`);
  return meta;
}

/** The regular files of a ustar/GNU tar archive, by name. */
export function untar(tar: Uint8Array): Map<string, Uint8Array> {
  const files = new Map<string, Uint8Array>();
  const text = (at: number, len: number) => new TextDecoder().decode(tar.subarray(at, at + len)).replace(/\0[\s\S]*$/, "");
  let at = 0;
  while (at + 512 <= tar.length) {
    if (tar.subarray(at, at + 512).every((b) => b === 0)) break;
    const name = text(at, 100);
    const sizeField = text(at + 124, 12).trim();
    if (!/^[0-7]*$/.test(sizeField)) throw new Error(`corrupt tar header for ${JSON.stringify(name)}`);
    const size = Number.parseInt(sizeField || "0", 8);
    const type = String.fromCharCode(tar[at + 156]!);
    const prefix = text(at + 257, 6).startsWith("ustar") ? text(at + 345, 155) : "";
    const start = at + 512;
    if (start + size > tar.length) throw new Error(`tar entry ${JSON.stringify(name)} is truncated`);
    if (type === "0" || type === "\0") files.set(prefix ? `${prefix}/${name}` : name, tar.subarray(start, start + size));
    at = start + Math.ceil(size / 512) * 512;
  }
  return files;
}

function readArchive(bytes: Uint8Array): SnapshotMeta {
  let tar: Uint8Array;
  try {
    tar = new Uint8Array(gunzipSync(bytes));
  } catch (err) {
    throw new Error(`failed to decompress snapshot: ${(err as Error).message}`);
  }
  const files = untar(tar);
  const metaJson = files.get("meta.json");
  if (!metaJson) throw new Error("snapshot archive has no meta.json");
  const sums = files.get("SHA256SUMS");
  if (sums) {
    for (const line of new TextDecoder().decode(sums).split("\n")) {
      const m = /^([0-9a-fA-F]{64})\s+\*?(.+)$/.exec(line.trim());
      if (!m) continue;
      const content = files.get(m[2]!);
      if (!content) throw new Error(`file ${JSON.stringify(m[2])} listed in SHA256SUMS is missing from the archive`);
      const digest = createHash("sha256").update(content).digest("hex");
      if (digest !== m[1]!.toLowerCase()) throw new Error(`sha256 mismatch for ${JSON.stringify(m[2])}`);
    }
  }
  let raw: unknown;
  try {
    raw = JSON.parse(new TextDecoder().decode(metaJson));
  } catch (err) {
    throw new Error(`failed to decode meta.json: ${(err as Error).message}`);
  }
  return toMeta(raw, files.get("state.bin")?.length ?? 0);
}
