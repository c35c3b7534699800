/**
 * Compact binary codec for gossip packets and push-pull streams (pure functions).
 *
 * Packet: magic 0xC5, version 1, count (u8, >= 1), then `count` times [u16 length, message].
 * Message: type tag (u8) then its fields (u32 numbers, u16-prefixed UTF-8 strings and bytes).
 * An ack may end with a u16-prefixed payload (absent = none; older nodes never send it).
 * Stream: magic 0xC6, version 1, one stream message. Decoding is strict (unknown tags or versions,
 * truncation, trailing bytes, bad UTF-8 or enums) and throws `CodecError` only.
 */
import { CodecError, Reader, Writer } from "./wire.ts";
import type { MemberState, Message, MessageType, PushNodeState, QueryFilter, QueryMsg, QueryResponseMsg, StreamMessage } from "./types.ts";

export { CodecError } from "./wire.ts";

export const PACKET_MAGIC = 0xc5;
export const STREAM_MAGIC = 0xc6;
export const CODEC_VERSION = 1;
/** Bytes a packet adds around its messages: the 3-byte header (each message adds 2 more). */
export const PACKET_OVERHEAD = 3;
export const MESSAGE_OVERHEAD = 2;

const TAGS: Readonly<Record<MessageType, number>> = {
  ping: 1, "indirect-ping": 2, ack: 3, nack: 4, suspect: 5, alive: 6, dead: 7, user: 8,
};
const STATES: readonly MemberState[] = ["alive", "suspect", "dead", "left"];

/** Encodes one message (no packet framing). Throws RangeError on out-of-range fields (a caller bug). */
export function encodeMessage(m: Message): Uint8Array {
  const w = new Writer().u8(TAGS[m.type]);
  switch (m.type) {
    case "ping":
      return w.u32(m.seq).str(m.target).str(m.sourceNode).str(m.sourceAddr).finish();
    case "indirect-ping":
      return w.u32(m.seq).str(m.target).str(m.targetAddr).u8(m.nack ? 1 : 0).str(m.sourceNode).str(m.sourceAddr).finish();
    case "ack":
      w.u32(m.seq);
      return m.payload !== undefined && m.payload.length > 0 ? w.bytes16(m.payload).finish() : w.finish();
    case "nack":
      return w.u32(m.seq).finish();
    case "suspect":
    case "dead":
      return w.u32(m.incarnation).str(m.node).str(m.from).finish();
    case "alive":
      return w.u32(m.incarnation).str(m.node).str(m.addr).bytes16(m.meta).finish();
    case "user":
      return w.str(m.key).bytes16(m.payload).finish();
  }
}

/** Decodes one message produced by `encodeMessage`. */
export function decodeMessage(b: Uint8Array): Message {
  const r = new Reader(b, "gossip message");
  const tag = r.u8();
  let m: Message;
  switch (tag) {
    case 1: m = { type: "ping", seq: r.u32(), target: r.str(), sourceNode: r.str(), sourceAddr: r.str() }; break;
    case 2: m = { type: "indirect-ping", seq: r.u32(), target: r.str(), targetAddr: r.str(), nack: r.bool(), sourceNode: r.str(), sourceAddr: r.str() }; break;
    case 3: {
      const seq = r.u32();
      const payload = r.remaining > 0 ? r.bytes16() : undefined;
      if (payload !== undefined && payload.length === 0) throw new CodecError("gossip message: ack with an empty payload");
      m = payload === undefined ? { type: "ack", seq } : { type: "ack", seq, payload };
      break;
    }
    case 4: m = { type: "nack", seq: r.u32() }; break;
    case 5: m = { type: "suspect", incarnation: r.u32(), node: r.str(), from: r.str() }; break;
    case 6: m = { type: "alive", incarnation: r.u32(), node: r.str(), addr: r.str(), meta: r.bytes16() }; break;
    case 7: m = { type: "dead", incarnation: r.u32(), node: r.str(), from: r.str() }; break;
    case 8: m = { type: "user", key: r.str(), payload: r.bytes16() }; break;
    default: throw new CodecError(`gossip message: unknown type tag ${tag}`);
  }
  r.end();
  if ((m.type === "suspect" || m.type === "dead" || m.type === "alive") && m.node === "") throw new CodecError(`gossip message: ${m.type} with empty node name`);
  return m;
}

/** Frames already-encoded messages into one packet. Throws RangeError if empty or over 255 messages. */
export function framePacket(encoded: readonly Uint8Array[]): Uint8Array {
  if (encoded.length === 0 || encoded.length > 255) throw new RangeError(`packet must hold 1..255 messages, got ${encoded.length}`);
  const w = new Writer().u8(PACKET_MAGIC).u8(CODEC_VERSION).u8(encoded.length);
  for (const e of encoded) w.bytes16(e);
  return w.finish();
}

export function encodePacket(msgs: readonly Message[]): Uint8Array {
  return framePacket(msgs.map(encodeMessage));
}

/** Decodes a packet into its messages, in order. Throws CodecError on anything malformed. */
export function decodePacket(b: Uint8Array): Message[] {
  const r = new Reader(b, "gossip packet");
  const magic = r.u8();
  if (magic !== PACKET_MAGIC) throw new CodecError(`gossip packet: bad magic 0x${magic.toString(16)}`);
  const version = r.u8();
  if (version !== CODEC_VERSION) throw new CodecError(`gossip packet: unsupported version ${version}`);
  const count = r.u8();
  if (count === 0) throw new CodecError("gossip packet: no messages");
  const out: Message[] = [];
  for (let i = 0; i < count; i++) out.push(decodeMessage(r.bytes16()));
  r.end();
  return out;
}

/** Flag bits of a stream message: push-pull reply and join; a stream ping or ack instead of a push-pull. */
const STREAM_REPLY = 1, STREAM_JOIN = 2, STREAM_PING = 4, STREAM_ACK = 8;

/** Encodes a stream message (push-pull, stream ping or ack) with its header; the driver frames it on the stream. */
export function encodeStream(m: StreamMessage): Uint8Array {
  if (m.type === "stream-ping") return new Writer().u8(STREAM_MAGIC).u8(CODEC_VERSION).u8(STREAM_PING).u32(m.seq).str(m.target).finish();
  if (m.type === "stream-ack") return new Writer().u8(STREAM_MAGIC).u8(CODEC_VERSION).u8(STREAM_ACK).u32(m.seq).finish();
  const w = new Writer().u8(STREAM_MAGIC).u8(CODEC_VERSION).u8((m.reply ? STREAM_REPLY : 0) | (m.join ? STREAM_JOIN : 0)).u32(m.nodes.length);
  for (const n of m.nodes) w.str(n.name).str(n.addr).bytes16(n.meta).u32(n.incarnation).u8(STATES.indexOf(n.state));
  return w.bytes32(m.userState).finish();
}

/** Decodes a stream message. Throws CodecError on anything malformed (including duplicate names). */
export function decodeStream(b: Uint8Array): StreamMessage {
  const r = new Reader(b, "push-pull stream");
  const magic = r.u8();
  if (magic !== STREAM_MAGIC) throw new CodecError(`push-pull stream: bad magic 0x${magic.toString(16)}`);
  const version = r.u8();
  if (version !== CODEC_VERSION) throw new CodecError(`push-pull stream: unsupported version ${version}`);
  const flags = r.u8();
  if (flags === STREAM_PING) {
    const ping = { type: "stream-ping" as const, seq: r.u32(), target: r.str() };
    r.end();
    return ping;
  }
  if (flags === STREAM_ACK) {
    const ack = { type: "stream-ack" as const, seq: r.u32() };
    r.end();
    return ack;
  }
  if (flags > (STREAM_REPLY | STREAM_JOIN)) throw new CodecError(`push-pull stream: bad flags ${flags}`);
  const count = r.u32();
  // Each node takes at least 11 bytes: a cheap bound before allocating.
  if (count * 11 > r.remaining) throw new CodecError(`push-pull stream: ${count} nodes cannot fit in ${r.remaining} bytes`);
  const nodes: PushNodeState[] = [];
  const seen = new Set<string>();
  for (let i = 0; i < count; i++) {
    const name = r.str(), addr = r.str(), meta = r.bytes16(), incarnation = r.u32(), s = r.u8();
    const state = STATES[s];
    if (state === undefined) throw new CodecError(`push-pull stream: bad member state ${s}`);
    if (name === "" || seen.has(name)) throw new CodecError(`push-pull stream: empty or duplicate member name "${name}"`);
    seen.add(name);
    nodes.push({ name, addr, meta, incarnation, state });
  }
  const userState = r.bytes32();
  r.end();
  return { type: "push-pull", reply: (flags & STREAM_REPLY) !== 0, join: (flags & STREAM_JOIN) !== 0, nodes, userState };
}

/** Serf message kinds, the first byte of a serf message inside a core user message. */
export const SerfKind = { Event: 1, LeaveIntent: 2, JoinIntent: 3 } as const;
export type SerfKind = (typeof SerfKind)[keyof typeof SerfKind];

/** A user event or a leave/join intent (serf.ts). */
export interface SerfMsg { readonly kind: SerfKind; readonly ltime: number; readonly name: string; readonly body: Uint8Array }

/** Serf message inside a core user message: u8 kind, u32 Lamport time, str name, u32-prefixed body. */
export function encodeSerfMsg(kind: SerfKind, ltime: number, name: string, body: Uint8Array): Uint8Array {
  return new Writer().u8(kind).u32(ltime).str(name).bytes32(body).finish();
}

/** Decodes `encodeSerfMsg`'s output. Throws CodecError on anything malformed. */
export function decodeSerfMsg(b: Uint8Array): SerfMsg {
  const r = new Reader(b, "serf message");
  const kind = r.u8();
  if (kind !== SerfKind.Event && kind !== SerfKind.LeaveIntent && kind !== SerfKind.JoinIntent) throw new CodecError(`serf message: unknown kind ${kind}`);
  const msg = { kind, ltime: r.u32(), name: r.str(), body: r.bytes32() };
  r.end();
  return msg;
}

/**
 * One member in serf's push-pull state (serf messagePushPull StatusLTimes and LeftMembers): the Lamport time
 * of its latest join or leave intent seen (serf statusLTime), and whether it left.
 */
export interface SerfMemberRecord { readonly name: string; readonly statusLTime: number; readonly left: boolean }

/**
 * Serf's push-pull state (serf messagePushPull): the sender's member, user-event and query Lamport clocks, a
 * record per member it knows, and its recent user events, each as the core user message it gossiped (`key`)
 * with the encoded serf message (`msg`, an `encodeSerfMsg` of kind Event). Carried in a push-pull's `userState`.
 * A version-1 state (see SERF_PUSH_PULL_V1_KIND) decodes with `memberLTime` 0 and no members.
 */
export interface SerfPushPullState {
  readonly memberLTime: number;
  readonly members: readonly SerfMemberRecord[];
  readonly eventLTime: number;
  readonly queryLTime: number;
  readonly events: readonly { readonly key: string; readonly msg: Uint8Array }[];
}

/** First byte of an encoded SerfPushPullState, version 2 (after the serf message and query kinds). */
export const SERF_PUSH_PULL_KIND = 7;
/** First byte of a version-1 state (clocks and events only, no member part): still decoded, never sent. */
export const SERF_PUSH_PULL_V1_KIND = 6;

/**
 * u8 kind 7, u32 memberLTime, u32 eventLTime, u32 queryLTime, u32 member count, then per member [str name,
 * u32 statusLTime, u8 left (0/1)], u32 event count, then per event [str key, u32-prefixed msg]. The members are
 * written in the order given (callers sort them, for deterministic bytes). Throws RangeError on out-of-range fields.
 */
export function encodeSerfPushPull(s: SerfPushPullState): Uint8Array {
  const w = new Writer().u8(SERF_PUSH_PULL_KIND).u32(s.memberLTime).u32(s.eventLTime).u32(s.queryLTime).u32(s.members.length);
  for (const m of s.members) w.str(m.name).u32(m.statusLTime).u8(m.left ? 1 : 0);
  w.u32(s.events.length);
  for (const e of s.events) w.str(e.key).bytes32(e.msg);
  return w.finish();
}

/**
 * Decodes `encodeSerfPushPull`'s output, or a version-1 state (u8 kind 6, u32 eventLTime, u32 queryLTime, then
 * the events as above). Strict: member names non-empty and distinct, `left` 0 or 1, nothing trailing. The event
 * messages themselves are decoded by their user. Throws CodecError.
 */
export function decodeSerfPushPull(b: Uint8Array): SerfPushPullState {
  const r = new Reader(b, "serf push-pull state");
  const kind = r.u8();
  if (kind !== SERF_PUSH_PULL_KIND && kind !== SERF_PUSH_PULL_V1_KIND) throw new CodecError(`serf push-pull state: wrong kind ${kind}`);
  const v1 = kind === SERF_PUSH_PULL_V1_KIND;
  const memberLTime = v1 ? 0 : r.u32();
  const eventLTime = r.u32(), queryLTime = r.u32();
  const members: SerfMemberRecord[] = [];
  if (!v1) {
    const count = r.u32();
    // Each member takes at least 7 bytes (length prefix, time, flag): a cheap bound before allocating.
    if (count * 7 > r.remaining) throw new CodecError(`serf push-pull state: ${count} members cannot fit in ${r.remaining} bytes`);
    const seen = new Set<string>();
    for (let i = 0; i < count; i++) {
      const name = r.str(), statusLTime = r.u32(), left = r.bool();
      if (name === "" || seen.has(name)) throw new CodecError(`serf push-pull state: empty or duplicate member name "${name}"`);
      seen.add(name);
      members.push({ name, statusLTime, left });
    }
  }
  const count = r.u32();
  // Each event takes at least 6 bytes (two length prefixes): a cheap bound before allocating.
  if (count * 6 > r.remaining) throw new CodecError(`serf push-pull state: ${count} events cannot fit in ${r.remaining} bytes`);
  const events: { key: string; msg: Uint8Array }[] = [];
  for (let i = 0; i < count; i++) events.push({ key: r.str(), msg: r.bytes32() });
  r.end();
  return { memberLTime, members, eventLTime, queryLTime, events };
}

/**
 * Serf query messages travel inside core user messages too, with kinds after the serf message kinds. Query: kind 4, u32 ltime, u32 id, str sourceNode,
 * str sourceAddr, u8 flags (1 ack, 2 no-broadcast), u32 timeoutMs, u8 filter count and filters
 * (u8 1: u16 count of node names; u8 2: str tag, str expr), str name, u32-prefixed payload.
 * Response: kind 5, u32 ltime, u32 id, str from, u8 flags (1 ack), u32-prefixed payload.
 */
export const SERF_QUERY_KIND = 4;
export const SERF_QUERY_RESPONSE_KIND = 5;

/** Encodes a query with its kind byte. Throws RangeError on out-of-range fields (a caller bug). */
export function encodeQuery(q: QueryMsg): Uint8Array {
  if (q.filters.length > 255) throw new RangeError(`query has ${q.filters.length} filters, at most 255`);
  const w = new Writer().u8(SERF_QUERY_KIND).u32(q.ltime).u32(q.id).str(q.sourceNode).str(q.sourceAddr);
  w.u8((q.requestAck ? 1 : 0) | (q.noBroadcast ? 2 : 0)).u32(q.timeoutMs).u8(q.filters.length);
  for (const f of q.filters) {
    if (f.type === "nodes") {
      w.u8(1).u16(f.nodes.length);
      for (const n of f.nodes) w.str(n);
    } else {
      w.u8(2).str(f.tag).str(f.expr);
    }
  }
  return w.str(q.name).bytes32(q.payload).finish();
}

/** Decodes `encodeQuery`'s output. Throws CodecError on anything malformed. */
export function decodeQuery(b: Uint8Array): QueryMsg {
  const r = new Reader(b, "serf query");
  const kind = r.u8();
  if (kind !== SERF_QUERY_KIND) throw new CodecError(`serf query: wrong kind ${kind}`);
  const ltime = r.u32(), id = r.u32(), sourceNode = r.str(), sourceAddr = r.str(), flags = r.u8();
  if (flags > 3) throw new CodecError(`serf query: bad flags ${flags}`);
  const timeoutMs = r.u32();
  const filters: QueryFilter[] = [];
  for (let i = r.u8(); i > 0; i--) {
    const t = r.u8();
    if (t === 1) {
      const nodes: string[] = [];
      for (let n = r.u16(); n > 0; n--) nodes.push(r.str());
      filters.push({ type: "nodes", nodes });
    } else if (t === 2) {
      filters.push({ type: "tag", tag: r.str(), expr: r.str() });
    } else {
      throw new CodecError(`serf query: unknown filter type ${t}`);
    }
  }
  const name = r.str(), payload = r.bytes32();
  r.end();
  if (sourceNode === "") throw new CodecError("serf query: empty source node");
  return { ltime, id, sourceNode, sourceAddr, requestAck: (flags & 1) !== 0, noBroadcast: (flags & 2) !== 0, timeoutMs, filters, name, payload };
}

/** Encodes a query response with its kind byte. */
export function encodeQueryResponse(m: QueryResponseMsg): Uint8Array {
  return new Writer().u8(SERF_QUERY_RESPONSE_KIND).u32(m.ltime).u32(m.id).str(m.from).u8(m.ack ? 1 : 0).bytes32(m.payload).finish();
}

/** Decodes `encodeQueryResponse`'s output. Throws CodecError on anything malformed. */
export function decodeQueryResponse(b: Uint8Array): QueryResponseMsg {
  const r = new Reader(b, "serf query response");
  const kind = r.u8();
  if (kind !== SERF_QUERY_RESPONSE_KIND) throw new CodecError(`serf query response: wrong kind ${kind}`);
  const m = { ltime: r.u32(), id: r.u32(), from: r.str(), ack: r.bool(), payload: r.bytes32() };
  r.end();
  if (m.from === "") throw new CodecError("serf query response: empty sender");
  return m;
}
