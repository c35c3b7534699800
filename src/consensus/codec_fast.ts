/**
 * Hand-written protobuf encoding of the messages that carry a cluster's steady load (MsgApp,
 * MsgAppResp, MsgHeartbeat, MsgHeartbeatResp), byte-compatible with the reflective encoding of
 * proto/causeway/raft/v1/raft.proto that codec.ts uses for everything else. Reflection cost ~15% of
 * a follower's CPU under write load. Fields are written in field-number order and zero scalars are
 * omitted, as protobuf-es writes them; decoding skips unknown fields and is as strict as codec.ts.
 */
import { ByteBuffer } from "../lib/index.ts";
import type { Entry, HardState, Message } from "../raft/index.ts";

const MAX_SAFE = Number.MAX_SAFE_INTEGER;
const WT_VARINT = 0;
const WT_LEN = 2;
/** Message.body field numbers of the fast kinds (raft.proto). */
const BODY = { app: 16, appResp: 17, heartbeat: 23, heartbeatResp: 24 } as const;

const utf8 = new TextEncoder();
const utf8d = new TextDecoder();

/** A growable output buffer with protobuf primitives. */
class Out extends ByteBuffer {
  constructor(size = 512) {
    super(size);
  }
  tag(field: number, wt: number): void {
    this.varint(field * 8 + wt);
  }
  /** A varint field, omitted when zero (proto3). */
  u64(field: number, v: number): void {
    if (v === 0) return;
    this.tag(field, WT_VARINT);
    this.varint(v);
  }
  bool(field: number, v: boolean): void {
    if (!v) return;
    this.tag(field, WT_VARINT);
    this.varint(1);
  }
  field(field: number, b: Uint8Array, always = false): void {
    if (!always && b.length === 0) return;
    this.tag(field, WT_LEN);
    this.varint(b.length);
    this.raw(b);
  }
  string(field: number, s: string): void {
    if (s.length) this.field(field, utf8.encode(s));
  }
  /**
   * Writes a length-delimited submessage built by `fill` in place, always present (oneof members and
   * repeated entries). A buffer per submessage cost 8% of a leader's CPU under 64 writing clients.
   */
  sub(field: number, fill: (o: Out) => void): void {
    this.tag(field, WT_LEN);
    this.delimited(() => fill(this));
  }
}

/** Bytes do not decode: the caller reports it as a CodecError. */
export class FastDecodeError extends Error {}

class In {
  constructor(readonly buf: Uint8Array, public pos: number, readonly end: number) {}
  get done(): boolean {
    return this.pos >= this.end;
  }
  varint(): number {
    let result = 0;
    let scale = 1;
    for (let i = 0; i < 10; i++) {
      if (this.pos >= this.end) throw new FastDecodeError("truncated varint");
      const b = this.buf[this.pos++]!;
      result += (b & 0x7f) * scale;
      if (!(b & 0x80)) {
        if (result > MAX_SAFE) throw new FastDecodeError(`value ${result} exceeds 2^53 - 1`);
        return result;
      }
      scale *= 0x80;
    }
    throw new FastDecodeError("varint longer than 10 bytes");
  }
  /** The extent of a length-delimited field. */
  span(): [number, number] {
    const len = this.varint();
    const start = this.pos;
    if (start + len > this.end) throw new FastDecodeError("length-delimited field runs past the end");
    this.pos = start + len;
    return [start, start + len];
  }
  skip(wt: number): void {
    if (wt === WT_VARINT) this.varint();
    else if (wt === WT_LEN) this.span();
    else if (wt === 1) this.pos += 8;
    else if (wt === 5) this.pos += 4;
    else throw new FastDecodeError(`unsupported wire type ${wt}`);
    if (this.pos > this.end) throw new FastDecodeError("field runs past the end");
  }
}

/** Encodes an entry with a data payload; undefined for conf-change entries (the reflective path's). */
function writeEntry(o: Out, e: Entry): boolean {
  if (e.type !== "Normal") return false;
  o.u64(1, e.term);
  o.u64(2, e.index);
  o.field(3, e.data, true);
  return true;
}

/** The fast encoding of `m`, or undefined when `m` is not one of the fast kinds (or holds a conf change). */
export function encodeMessageFast(m: Message): Uint8Array | undefined {
  const o = new Out(m.type === "MsgApp" ? m.entries.reduce((n, e) => n + (e.type === "Normal" ? e.data.length : 0) + 32, 128) : 128);
  const head = () => {
    o.string(1, m.from);
    o.string(2, m.to);
    o.u64(3, m.term);
  };
  switch (m.type) {
    case "MsgApp": {
      if (m.entries.some((e) => e.type !== "Normal")) return undefined;
      head();
      o.sub(BODY.app, (b) => {
        b.u64(1, m.index);
        b.u64(2, m.logTerm);
        for (const e of m.entries) b.sub(3, (eo) => void writeEntry(eo, e));
        b.u64(4, m.commit);
      });
      return o.bytes();
    }
    case "MsgAppResp":
      head();
      o.sub(BODY.appResp, (b) => {
        b.u64(1, m.index);
        b.bool(2, m.reject);
        b.u64(3, m.rejectHint);
        b.u64(4, m.logTerm);
      });
      return o.bytes();
    case "MsgHeartbeat":
      head();
      o.sub(BODY.heartbeat, (b) => {
        b.u64(1, m.commit);
        b.string(2, m.context);
      });
      return o.bytes();
    case "MsgHeartbeatResp":
      head();
      o.sub(BODY.heartbeatResp, (b) => b.string(1, m.context));
      return o.bytes();
    default:
      return undefined;
  }
}

function readEntry(inp: In): Entry | undefined {
  let term = 0;
  let index = 0;
  let data: Uint8Array | undefined;
  while (!inp.done) {
    const t = inp.varint();
    const field = Math.floor(t / 8);
    const wt = t & 7;
    if (field === 1 && wt === WT_VARINT) term = inp.varint();
    else if (field === 2 && wt === WT_VARINT) index = inp.varint();
    else if (field === 3 && wt === WT_LEN) {
      const [s, e] = inp.span();
      data = inp.buf.slice(s, e);
    } else if (field === 4) return undefined; // a conf change: the reflective decoder's job
    else inp.skip(wt);
  }
  if (!data) throw new FastDecodeError(`entry ${index} has no payload`);
  return { type: "Normal", term, index, data };
}

/** Node ids decoded lately with their UTF-8 bytes (a cluster has a handful; see nodeIdAt). */
const recentNodeIds: { readonly bytes: Uint8Array; readonly text: string }[] = [];

/**
 * The string of bytes [s, e) of `buf`, from recentNodeIds when the same bytes were decoded lately:
 * every message names its sender and receiver, and a view plus a TextDecoder call for each cost a
 * leader about 3% of its CPU under write load.
 */
function nodeIdAt(buf: Uint8Array, s: number, e: number): string {
  const len = e - s;
  next: for (const r of recentNodeIds) {
    if (r.bytes.length !== len) continue;
    for (let i = 0; i < len; i++) if (r.bytes[i] !== buf[s + i]) continue next;
    return r.text;
  }
  const bytes = buf.slice(s, e);
  const text = utf8d.decode(bytes);
  if (recentNodeIds.length >= 16) recentNodeIds.shift();
  recentNodeIds.push({ bytes, text });
  return text;
}

/**
 * Decodes `bytes` when its body is one of the fast kinds; undefined otherwise (and for entries with a
 * conf change), in which case the reflective decoder must be used. Throws FastDecodeError on malformed bytes.
 */
export function decodeMessageFast(bytes: Uint8Array): Message | undefined {
  const inp = new In(bytes, 0, bytes.length);
  let from = "";
  let to = "";
  let term = 0;
  let body: { field: number; start: number; end: number } | undefined;
  while (!inp.done) {
    const t = inp.varint();
    const field = Math.floor(t / 8);
    const wt = t & 7;
    if ((field === 1 || field === 2) && wt === WT_LEN) {
      const [s, e] = inp.span();
      const v = nodeIdAt(bytes, s, e);
      if (field === 1) from = v;
      else to = v;
    } else if (field === 3 && wt === WT_VARINT) term = inp.varint();
    else if (field >= 10 && field <= 28 && wt === WT_LEN) {
      const [s, e] = inp.span();
      body = { field, start: s, end: e }; // the last oneof member wins, as in protobuf
    } else inp.skip(wt);
  }
  if (!body) return undefined;
  const b = new In(bytes, body.start, body.end);
  switch (body.field) {
    case BODY.app: {
      let index = 0, logTerm = 0, commit = 0;
      const entries: Entry[] = [];
      while (!b.done) {
        const t = b.varint();
        const field = Math.floor(t / 8);
        const wt = t & 7;
        if (field === 1 && wt === WT_VARINT) index = b.varint();
        else if (field === 2 && wt === WT_VARINT) logTerm = b.varint();
        else if (field === 4 && wt === WT_VARINT) commit = b.varint();
        else if (field === 3 && wt === WT_LEN) {
          const [s, e] = b.span();
          const entry = readEntry(new In(bytes, s, e));
          if (!entry) return undefined;
          entries.push(entry);
        } else b.skip(wt);
      }
      return { from, to, term, type: "MsgApp", index, logTerm, entries, commit };
    }
    case BODY.appResp: {
      let index = 0, reject = false, rejectHint = 0, logTerm = 0;
      while (!b.done) {
        const t = b.varint();
        const field = Math.floor(t / 8);
        const wt = t & 7;
        if (field === 1 && wt === WT_VARINT) index = b.varint();
        else if (field === 2 && wt === WT_VARINT) reject = b.varint() !== 0;
        else if (field === 3 && wt === WT_VARINT) rejectHint = b.varint();
        else if (field === 4 && wt === WT_VARINT) logTerm = b.varint();
        else b.skip(wt);
      }
      return { from, to, term, type: "MsgAppResp", index, reject, rejectHint, logTerm };
    }
    case BODY.heartbeat:
    case BODY.heartbeatResp: {
      let commit = 0, context = "";
      const contextField = body.field === BODY.heartbeat ? 2 : 1;
      while (!b.done) {
        const t = b.varint();
        const field = Math.floor(t / 8);
        const wt = t & 7;
        if (body.field === BODY.heartbeat && field === 1 && wt === WT_VARINT) commit = b.varint();
        else if (field === contextField && wt === WT_LEN) {
          const [s, e] = b.span();
          context = utf8d.decode(bytes.subarray(s, e));
        } else b.skip(wt);
      }
      return body.field === BODY.heartbeat ? { from, to, term, type: "MsgHeartbeat", commit, context } : { from, to, term, type: "MsgHeartbeatResp", context };
    }
    default:
      return undefined;
  }
}

/**
 * The LogBatch record body of the segment log (raft.proto LogBatch: optional hard state, entries),
 * or undefined when an entry holds a conf change (the reflective encoder's job). Same bytes as
 * protobuf-es writes.
 */
export function encodeLogBatchFast(hardState: HardState | undefined, entries: readonly Entry[]): Uint8Array | undefined {
  if (entries.some((e) => e.type !== "Normal")) return undefined;
  const o = new Out(entries.reduce((n, e) => n + (e.type === "Normal" ? e.data.length : 0) + 32, 64));
  if (hardState) {
    o.sub(1, (h) => {
      h.u64(1, hardState.term);
      h.string(2, hardState.vote);
      h.u64(3, hardState.commit);
    });
  }
  for (const e of entries) o.sub(2, (eo) => void writeEntry(eo, e));
  return o.bytes();
}
