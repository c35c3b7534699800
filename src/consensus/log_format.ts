/**
 * On-disk format of the durable Raft log (see log_store.ts for the directory layout).
 *
 * A segment file is a sequence of records, each framed as
 *
 *     [u32le length][u32le crc32c(payload)][payload]      payload = [kind byte][protobuf body]
 *
 * with kinds 1 = SegmentHeader (always first), 2 = LogBatch (one `save`: optional hard state and
 * entries), 3 = SnapshotMeta (a durable snapshot file covers the log up to its index). The bodies are
 * the messages of proto/causeway/raft/v1/raft.proto.
 *
 * Torn-vs-corrupt rule ({@link scanFrames}): at the first invalid frame (short header, zero or oversized
 * length, length past the end of the file, checksum mismatch, unknown kind) we look at exactly ONE place
 * for a valid frame: the offset the record chain implies, i.e. where the bad frame's own length field says
 * its successor starts, and only when that header is plausible (8 bytes present, length 1..MAX_RECORD_BYTES).
 * A valid frame there means the bad one was synced and later damaged in place (bit rot): corruption.
 * Anything else (no plausible length, successor past the end of the file, or not a valid frame) is a torn
 * or partial tail, when it is in the last segment; damage in any other segment is corruption regardless
 * (the caller decides that). A crash only ever damages the unsynced end of a file (writes reach the disk
 * in order, and a torn write garbles the last bytes), so a torn record has no valid successor.
 *
 * We never scan byte by byte for a valid frame: entry data is client data, so a torn record whose value
 * embeds a well-formed frame would then be reported as corruption and the node could not start. The price:
 * damage to the length field of a synced record in the last segment looks like a torn tail, and the
 * records after it are dropped with a warning (as a torn tail would be).
 */
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import type { Entry, HardState, Snapshot } from "../raft/index.ts";
import { LogBatchSchema, SegmentHeaderSchema, SnapshotMetaSchema } from "../gen/causeway/raft/v1/raft_pb.ts";
import { encodeLogBatchFast } from "./codec_fast.ts";
import { entryFromPb, entryToPb, hardStateFromPb, hardStateToPb, snapshotMetaFromPb, snapshotMetaToPb } from "./codec.ts";
import { crc32c } from "./crc32c.ts";

export const KIND_HEADER = 1;
export const KIND_BATCH = 2;
export const KIND_SNAPSHOT = 3;
/** Bytes of framing around each payload. */
export const FRAME_OVERHEAD = 8;
/** Largest payload accepted on replay; larger length fields are treated as damage. */
export const MAX_RECORD_BYTES = 1 << 30;

export type LogRecord =
  | { readonly kind: "header"; readonly seq: number; readonly firstIndex: number }
  | { readonly kind: "batch"; readonly hardState: HardState | undefined; readonly entries: readonly Entry[] }
  | { readonly kind: "snapshot"; readonly meta: Snapshot };

function frame(kind: number, body: Uint8Array): Uint8Array {
  const out = new Uint8Array(FRAME_OVERHEAD + 1 + body.length);
  out[FRAME_OVERHEAD] = kind;
  out.set(body, FRAME_OVERHEAD + 1);
  const view = new DataView(out.buffer);
  view.setUint32(0, body.length + 1, true);
  view.setUint32(4, crc32c(out, FRAME_OVERHEAD), true);
  return out;
}

/** A framed SegmentHeader record. */
export function frameHeader(seq: number, firstIndex: number): Uint8Array {
  return frame(KIND_HEADER, toBinary(SegmentHeaderSchema, create(SegmentHeaderSchema, { seq: BigInt(seq), firstIndex: BigInt(firstIndex) })));
}

/** A framed LogBatch record: one `save` call, encoded in one buffer. */
export function frameBatch(hardState: HardState | undefined, entries: readonly Entry[]): Uint8Array {
  const fast = encodeLogBatchFast(hardState, entries);
  if (fast) return frame(KIND_BATCH, fast);
  const msg = create(LogBatchSchema, { hardState: hardState && hardStateToPb(hardState), entries: entries.map(entryToPb) });
  return frame(KIND_BATCH, toBinary(LogBatchSchema, msg));
}

/** A framed snapshot marker record. */
export function frameSnapshot(meta: Snapshot): Uint8Array {
  return frame(KIND_SNAPSHOT, toBinary(SnapshotMetaSchema, snapshotMetaToPb(meta)));
}

/** Decodes a payload whose checksum matched; throws on an unknown kind or an undecodable body. */
export function decodeRecord(buf: Uint8Array, start: number, end: number): LogRecord {
  const body = buf.subarray(start + 1, end);
  switch (buf[start]) {
    case KIND_HEADER: {
      const h = fromBinary(SegmentHeaderSchema, body);
      return { kind: "header", seq: Number(h.seq), firstIndex: Number(h.firstIndex) };
    }
    case KIND_BATCH: {
      const b = fromBinary(LogBatchSchema, body);
      return { kind: "batch", hardState: b.hardState && hardStateFromPb(b.hardState), entries: b.entries.map(entryFromPb) };
    }
    case KIND_SNAPSHOT:
      return { kind: "snapshot", meta: snapshotMetaFromPb(fromBinary(SnapshotMetaSchema, body)) };
    default:
      throw new Error(`unknown record kind ${buf[start]}`);
  }
}

/** Why the frame at `offset` is invalid, or undefined when it is a valid frame. */
function frameProblem(buf: Uint8Array, view: DataView, offset: number): string | undefined {
  if (buf.length - offset < FRAME_OVERHEAD) return "partial record header";
  const len = view.getUint32(offset, true);
  if (len === 0 || len > MAX_RECORD_BYTES) return `bad record length ${len}`;
  if (offset + FRAME_OVERHEAD + len > buf.length) return `record of ${len} bytes runs past the end of the file`;
  const kind = buf[offset + FRAME_OVERHEAD]!;
  if (kind < KIND_HEADER || kind > KIND_SNAPSHOT) {
    return crc32c(buf, offset + FRAME_OVERHEAD, offset + FRAME_OVERHEAD + len) === view.getUint32(offset + 4, true)
      ? `unknown record kind ${kind}` : "checksum mismatch";
  }
  if (crc32c(buf, offset + FRAME_OVERHEAD, offset + FRAME_OVERHEAD + len) !== view.getUint32(offset + 4, true)) return "checksum mismatch";
  return undefined;
}

export interface ScanResult {
  /** Valid frames in order: payload `[start, end)` and the frame's offset. */
  readonly frames: readonly { readonly offset: number; readonly start: number; readonly end: number }[];
  /** The first invalid frame, if any. */
  readonly bad?: {
    readonly offset: number;
    readonly reason: string;
    /**
     * Offset of a valid frame where the bad frame's length says its successor starts (then it is
     * corruption, not a torn tail); undefined when there is none. No other offset is examined.
     */
    readonly validAfter: number | undefined;
  };
}

/** Splits a segment file into frames, stopping at the first invalid one (see the module comment). */
export function scanFrames(buf: Uint8Array): ScanResult {
  const view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  const frames: { offset: number; start: number; end: number }[] = [];
  let off = 0;
  while (off < buf.length) {
    const reason = frameProblem(buf, view, off);
    if (reason !== undefined) return { frames, bad: { offset: off, reason, validAfter: findValidFrameAfter(buf, view, off) } };
    const len = view.getUint32(off, true);
    frames.push({ offset: off, start: off + FRAME_OVERHEAD, end: off + FRAME_OVERHEAD + len });
    off += FRAME_OVERHEAD + len;
  }
  return { frames };
}

/** The chain successor of the bad frame at `bad`, if its header is plausible and a valid frame is there. */
function findValidFrameAfter(buf: Uint8Array, view: DataView, bad: number): number | undefined {
  if (buf.length - bad < FRAME_OVERHEAD) return undefined;
  const len = view.getUint32(bad, true);
  if (len === 0 || len > MAX_RECORD_BYTES) return undefined;
  const next = bad + FRAME_OVERHEAD + len;
  return next < buf.length && frameProblem(buf, view, next) === undefined ? next : undefined;
}

// --- snapshot files --------------------------------------------------------------------------------

const SNAP_MAGIC = 0x4e535743; // "CWSN" little-endian
const SNAP_HEADER = 16;

/**
 * A snapshot file: `[u32le magic "CWSN"][u32le meta length][u32le crc32c(meta)][u32le crc32c(data)]
 * [SnapshotMeta protobuf][data]`.
 */
export function encodeSnapshotFile(meta: Snapshot, data: Uint8Array): Uint8Array {
  const head = snapshotFileHead(meta, crc32c(data));
  const out = new Uint8Array(head.length + data.length);
  out.set(head);
  out.set(data, head.length);
  return out;
}

/** A snapshot file's bytes before its data: header and metadata, given the data's crc32c. */
export function snapshotFileHead(meta: Snapshot, dataCrc: number): Uint8Array {
  const m = toBinary(SnapshotMetaSchema, snapshotMetaToPb(meta));
  const out = new Uint8Array(SNAP_HEADER + m.length);
  const view = new DataView(out.buffer);
  view.setUint32(0, SNAP_MAGIC, true);
  view.setUint32(4, m.length, true);
  view.setUint32(8, crc32c(m), true);
  view.setUint32(12, dataCrc, true);
  out.set(m, SNAP_HEADER);
  return out;
}

/** Decodes and verifies a snapshot file; returns a reason string when it is damaged. */
export function decodeSnapshotFile(buf: Uint8Array): { meta: Snapshot; data: Uint8Array } | string {
  if (buf.length < SNAP_HEADER) return "file shorter than its header";
  const view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  if (view.getUint32(0, true) !== SNAP_MAGIC) return "bad magic";
  const mlen = view.getUint32(4, true);
  if (SNAP_HEADER + mlen > buf.length) return "metadata runs past the end of the file";
  if (crc32c(buf, SNAP_HEADER, SNAP_HEADER + mlen) !== view.getUint32(8, true)) return "metadata checksum mismatch";
  if (crc32c(buf, SNAP_HEADER + mlen) !== view.getUint32(12, true)) return "data checksum mismatch";
  try {
    const meta = snapshotMetaFromPb(fromBinary(SnapshotMetaSchema, buf.subarray(SNAP_HEADER, SNAP_HEADER + mlen)));
    return { meta, data: buf.subarray(SNAP_HEADER + mlen) };
  } catch (err) {
    return `bad metadata: ${err instanceof Error ? err.message : String(err)}`;
  }
}

const hex = (n: number) => n.toString(16).padStart(16, "0");

/** `wal-<seq>-<firstIndex>.log`, 16 hex digits each, so names sort by sequence. */
export function segmentName(seq: number, firstIndex: number): string {
  return `wal-${hex(seq)}-${hex(firstIndex)}.log`;
}

export function parseSegmentName(name: string): { seq: number; firstIndex: number } | undefined {
  const m = /^wal-([0-9a-f]{16})-([0-9a-f]{16})\.log$/.exec(name);
  return m ? { seq: parseInt(m[1]!, 16), firstIndex: parseInt(m[2]!, 16) } : undefined;
}

/** `snap-<term>-<index>.snap`, 16 hex digits each. */
export function snapshotName(meta: Snapshot): string {
  return `snap-${hex(meta.term)}-${hex(meta.index)}.snap`;
}

export function parseSnapshotName(name: string): { term: number; index: number } | undefined {
  const m = /^snap-([0-9a-f]{16})-([0-9a-f]{16})\.snap$/.exec(name);
  return m ? { term: parseInt(m[1]!, 16), index: parseInt(m[2]!, 16) } : undefined;
}
