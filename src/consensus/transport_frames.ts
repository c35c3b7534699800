/**
 * Wire framing of the Raft transport (pure: bytes in, frames out; no I/O).
 *
 * Every frame is `[u32 length, big-endian][u8 kind][payload]`, where `length` counts the payload only
 * (not the kind byte). Payloads by kind:
 *
 * - HELLO (1): `[u8 version=1][u16 fromLen][from utf8][to utf8]`, first frame on every connection.
 * - MESSAGE (2): one Raft message as produced by the injected {@link MessageCodec}.
 * - SNAP_BEGIN (3): `[u64 totalBytes][MsgSnap via codec]`.
 * - SNAP_CHUNK (4): raw snapshot bytes, in order.
 * - SNAP_END (5): `[u64 totalBytes][u32 crc32c of the whole snapshot]`.
 * - SNAP_ACK (6): empty; the receiver holds the complete snapshot and its handler ran.
 * - SNAP_NACK (7): `[reason utf8]`; the receiver discarded the snapshot.
 *
 * u64 values are written as two u32 halves and must be safe integers (< 2^53).
 */
import { crc32c } from "./crc32c.ts";
import type { Message } from "../raft/index.ts";
import { isLocalMsg } from "../raft/index.ts";

/**
 * Turns Raft messages into bytes and back. `decode` throws on malformed input (the transport drops the
 * message and logs); `encode` may throw on values it cannot represent (the transport drops and logs).
 */
export interface MessageCodec {
  encode(msg: Message): Uint8Array;
  decode(bytes: Uint8Array): Message;
}

/** Frame kinds; values are wire constants and never change meaning. */
export const FrameKind = {
  Hello: 1,
  Message: 2,
  SnapBegin: 3,
  SnapChunk: 4,
  SnapEnd: 5,
  SnapAck: 6,
  SnapNack: 7,
} as const;
export type FrameKind = (typeof FrameKind)[keyof typeof FrameKind];

/** Version carried in HELLO; a receiver refuses any other. */
export const PROTOCOL_VERSION = 1;
/** Bytes before the payload: u32 length + u8 kind. */
export const FRAME_HEADER_BYTES = 5;

/** One decoded frame. `payload` is a fresh buffer owned by the caller. */
export interface Frame {
  readonly kind: FrameKind;
  readonly payload: Uint8Array;
}

/** Malformed input: oversize length, unknown kind, or a payload that does not parse. */
export class FrameError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "FrameError";
  }
}

function isKind(k: number): k is FrameKind {
  return k >= FrameKind.Hello && k <= FrameKind.SnapNack;
}

/** Encodes one frame into a fresh buffer (the payload is copied). */
export function encodeFrame(kind: FrameKind, payload: Uint8Array = new Uint8Array(0)): Uint8Array {
  const out = new Uint8Array(FRAME_HEADER_BYTES + payload.length);
  // Bytes by hand: touching `.buffer` of a fresh Uint8Array (for a DataView) is costly on Bun.
  const n = payload.length;
  out[0] = n >>> 24;
  out[1] = (n >>> 16) & 0xff;
  out[2] = (n >>> 8) & 0xff;
  out[3] = n & 0xff;
  out[4] = kind;
  out.set(payload, FRAME_HEADER_BYTES);
  return out;
}

/**
 * Incremental frame decoder, robust to arbitrary chunking: bytes may arrive split at any position.
 * Each payload is copied once into its own buffer. After `push` has thrown a {@link FrameError} the
 * decoder is poisoned and every later `push` throws too (the caller must close the connection).
 */
export class FrameDecoder {
  private readonly header = new Uint8Array(FRAME_HEADER_BYTES);
  private headerFill = 0;
  private kind: FrameKind = FrameKind.Hello;
  private payload: Uint8Array | undefined;
  private payloadFill = 0;
  private failed: FrameError | undefined;

  /** @param maxPayloadBytes largest accepted payload; a bigger length field is an error. */
  constructor(private readonly maxPayloadBytes: number) {}

  /** Feeds bytes; returns the frames completed by them, in order. Throws {@link FrameError} on bad input. */
  push(chunk: Uint8Array): Frame[] {
    if (this.failed) throw this.failed;
    const frames: Frame[] = [];
    let pos = 0;
    while (pos < chunk.length) {
      if (this.payload === undefined) {
        const n = Math.min(FRAME_HEADER_BYTES - this.headerFill, chunk.length - pos);
        this.header.set(chunk.subarray(pos, pos + n), this.headerFill);
        this.headerFill += n;
        pos += n;
        if (this.headerFill < FRAME_HEADER_BYTES) break;
        this.startPayload();
      }
      const payload = this.payload!;
      const n = Math.min(payload.length - this.payloadFill, chunk.length - pos);
      payload.set(chunk.subarray(pos, pos + n), this.payloadFill);
      this.payloadFill += n;
      pos += n;
      if (this.payloadFill === payload.length) frames.push(this.finish());
    }
    return frames;
  }

  /** True when no partial frame is buffered. */
  get idle(): boolean {
    return this.headerFill === 0 && this.payload === undefined;
  }

  private startPayload(): void {
    const h = this.header;
    const length = ((h[0]! << 24) | (h[1]! << 16) | (h[2]! << 8) | h[3]!) >>> 0;
    const kind = this.header[4]!;
    if (length > this.maxPayloadBytes) throw this.fail(`frame length ${length} exceeds limit ${this.maxPayloadBytes}`);
    if (!isKind(kind)) throw this.fail(`unknown frame kind ${kind}`);
    this.kind = kind;
    this.payload = new Uint8Array(length);
    this.payloadFill = 0;
  }

  private finish(): Frame {
    const frame: Frame = { kind: this.kind, payload: this.payload! };
    this.payload = undefined;
    this.headerFill = 0;
    return frame;
  }

  private fail(message: string): FrameError {
    this.failed = new FrameError(message);
    return this.failed;
  }
}

const utf8Encoder = new TextEncoder();
const utf8Decoder = new TextDecoder("utf-8", { fatal: true });

function utf8(bytes: Uint8Array, what: string): string {
  try {
    return utf8Decoder.decode(bytes);
  } catch {
    throw new FrameError(`${what}: invalid utf-8`);
  }
}

function putU64(view: DataView, at: number, value: number): void {
  if (!Number.isSafeInteger(value) || value < 0) throw new RangeError(`u64 out of range: ${value}`);
  view.setUint32(at, Math.floor(value / 0x1_0000_0000));
  view.setUint32(at + 4, value >>> 0);
}

function getU64(view: DataView, at: number, what: string): number {
  const value = view.getUint32(at) * 0x1_0000_0000 + view.getUint32(at + 4);
  if (!Number.isSafeInteger(value)) throw new FrameError(`${what}: size out of range`);
  return value;
}

function viewOf(p: Uint8Array): DataView {
  return new DataView(p.buffer, p.byteOffset, p.byteLength);
}

/** HELLO payload: who is talking (`from`) and whom it means to reach (`to`). */
export interface Hello {
  readonly version: number;
  readonly from: string;
  readonly to: string;
}

export function encodeHello(from: string, to: string): Uint8Array {
  const f = utf8Encoder.encode(from), t = utf8Encoder.encode(to);
  if (f.length > 0xffff) throw new RangeError("hello: sender id too long");
  const out = new Uint8Array(3 + f.length + t.length);
  out[0] = PROTOCOL_VERSION;
  viewOf(out).setUint16(1, f.length);
  out.set(f, 3);
  out.set(t, 3 + f.length);
  return out;
}

/** Parses a HELLO payload; throws {@link FrameError} if it is truncated, not utf-8 or names no sender. */
export function decodeHello(p: Uint8Array): Hello {
  if (p.length < 3) throw new FrameError("hello: truncated");
  const fromLen = viewOf(p).getUint16(1);
  if (3 + fromLen > p.length || fromLen === 0) throw new FrameError("hello: bad sender length");
  return { version: p[0]!, from: utf8(p.subarray(3, 3 + fromLen), "hello"), to: utf8(p.subarray(3 + fromLen), "hello") };
}

/** SNAP_BEGIN payload: the total snapshot size, then the encoded MsgSnap. */
export function encodeSnapBegin(totalBytes: number, msg: Uint8Array): Uint8Array {
  const out = new Uint8Array(8 + msg.length);
  putU64(viewOf(out), 0, totalBytes);
  out.set(msg, 8);
  return out;
}

export function decodeSnapBegin(p: Uint8Array): { readonly totalBytes: number; readonly msg: Uint8Array } {
  if (p.length < 8) throw new FrameError("snapshot-begin: truncated");
  return { totalBytes: getU64(viewOf(p), 0, "snapshot-begin"), msg: p.subarray(8) };
}

/** SNAP_END payload: total size and CRC-32 of the whole snapshot, checked by the receiver. */
export function encodeSnapEnd(totalBytes: number, crc: number): Uint8Array {
  const out = new Uint8Array(12);
  putU64(viewOf(out), 0, totalBytes);
  viewOf(out).setUint32(8, crc >>> 0);
  return out;
}

export function decodeSnapEnd(p: Uint8Array): { readonly totalBytes: number; readonly crc: number } {
  if (p.length !== 12) throw new FrameError("snapshot-end: bad length");
  return { totalBytes: getU64(viewOf(p), 0, "snapshot-end"), crc: viewOf(p).getUint32(8) };
}

export function encodeReason(reason: string): Uint8Array {
  return utf8Encoder.encode(reason.slice(0, 512));
}

export function decodeReason(p: Uint8Array): string {
  return new TextDecoder().decode(p);
}

/** What the I/O layer must do after {@link InboundSession.handle}. */
export type InboundAction =
  | { readonly type: "none" }
  | { readonly type: "message"; readonly msg: Message }
  /** A frame was well-formed but its message is unacceptable; drop it, keep the connection. */
  | { readonly type: "drop"; readonly reason: string }
  /** A complete, verified snapshot: run the handler, then answer SNAP_ACK (or SNAP_NACK if it failed). */
  | { readonly type: "snapshot"; readonly msg: Message & { type: "MsgSnap" }; readonly data: Uint8Array }
  /** Close the connection, after sending SNAP_NACK with `reason` when `nack` is set. */
  | { readonly type: "close"; readonly reason: string; readonly nack: boolean };

/**
 * Protocol state of one inbound connection (pure): checks the HELLO, decodes messages, assembles and
 * verifies a snapshot. Snapshot bytes are gathered into one buffer of the announced size, which must not
 * exceed `maxSnapshotBytes`; any chunk beyond it, a size or CRC mismatch, or a second BEGIN refuses the
 * snapshot. After a "close" action the session must not be fed again.
 */
export class InboundSession {
  /** The sender named by HELLO, once received. */
  peer: string | undefined;
  private snap: { msg: Message & { type: "MsgSnap" }; data: Uint8Array; fill: number } | undefined;

  constructor(private readonly localId: string, private readonly codec: MessageCodec, private readonly maxSnapshotBytes: number) {}

  /** True while a snapshot is half received; on connection loss it is discarded. */
  get receivingSnapshot(): boolean {
    return this.snap !== undefined;
  }

  handle(frame: Frame): InboundAction {
    try {
      return this.step(frame);
    } catch (err) {
      this.snap = undefined;
      return { type: "close", reason: err instanceof Error ? err.message : String(err), nack: false };
    }
  }

  private step(f: Frame): InboundAction {
    if (this.peer === undefined) {
      if (f.kind !== FrameKind.Hello) return close(`expected hello, got frame kind ${f.kind}`);
      const h = decodeHello(f.payload);
      if (h.version !== PROTOCOL_VERSION) return close(`unsupported protocol version ${h.version}`);
      if (h.to !== this.localId) return close(`hello from ${h.from} is addressed to ${JSON.stringify(h.to)}, not to this node`);
      this.peer = h.from;
      return NONE_ACTION;
    }
    switch (f.kind) {
      case FrameKind.Message: {
        let msg: Message;
        try { msg = this.codec.decode(f.payload); } catch (err) {
          return { type: "drop", reason: `undecodable message: ${err instanceof Error ? err.message : String(err)}` };
        }
        if (msg.from !== this.peer || msg.to !== this.localId) return { type: "drop", reason: `${msg.type} from ${msg.from} to ${msg.to} on ${this.peer}'s connection` };
        if (msg.type === "MsgSnap" || isLocalMsg(msg.type)) return { type: "drop", reason: `${msg.type} is not accepted as a message` };
        return { type: "message", msg };
      }
      case FrameKind.SnapBegin: {
        if (this.snap) return close("second snapshot-begin on one connection", true);
        const b = decodeSnapBegin(f.payload);
        if (b.totalBytes > this.maxSnapshotBytes) return close(`snapshot of ${b.totalBytes} bytes exceeds limit ${this.maxSnapshotBytes}`, true);
        const msg = this.codec.decode(b.msg);
        if (msg.type !== "MsgSnap" || msg.from !== this.peer || msg.to !== this.localId) return close(`bad snapshot-begin message ${msg.type} from ${msg.from}`, true);
        this.snap = { msg, data: new Uint8Array(b.totalBytes), fill: 0 };
        return NONE_ACTION;
      }
      case FrameKind.SnapChunk: {
        const s = this.snap;
        if (!s) return close("snapshot-chunk without snapshot-begin");
        if (s.fill + f.payload.length > s.data.length) return close(`snapshot overruns its announced ${s.data.length} bytes`, true);
        s.data.set(f.payload, s.fill);
        s.fill += f.payload.length;
        return NONE_ACTION;
      }
      case FrameKind.SnapEnd: {
        const s = this.snap;
        if (!s) return close("snapshot-end without snapshot-begin");
        const e = decodeSnapEnd(f.payload);
        this.snap = undefined;
        if (e.totalBytes !== s.data.length || s.fill !== s.data.length) return close(`snapshot size mismatch: got ${s.fill} of ${s.data.length}, end says ${e.totalBytes}`, true);
        if (crc32c(s.data) !== e.crc) return close("snapshot crc32c mismatch", true);
        return { type: "snapshot", msg: s.msg, data: s.data };
      }
      default:
        return close(`unexpected frame kind ${f.kind} on an inbound connection`);
    }
  }
}

const NONE_ACTION: InboundAction = { type: "none" };

function close(reason: string, nack = false): InboundAction {
  return { type: "close", reason, nack };
}
