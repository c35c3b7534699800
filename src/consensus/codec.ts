/**
 * Conversions between the Raft core's values (src/raft/types.ts) and Causeway's protobuf encoding
 * (proto/causeway/raft/v1/raft.proto). Decoding is strict: an unknown message type, a missing body,
 * entry payload, snapshot or conf state, an unspecified enum, or an index/term above 2^53 - 1 throws a
 * {@link CodecError}. Scalars that proto3 omits when zero (index 0, reject false, "") decode as zero,
 * which is always a valid value for them.
 */
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import type { ConfChange, ConfChangeTransition, ConfChangeType, ConfState, Entry, HardState, Message, Snapshot } from "../raft/index.ts";
import {
  ConfChangeSchema, ConfChangeTransition as PbTransition, ConfChangeType as PbCcType, ConfStateSchema, EntrySchema,
  HardStateSchema, MessageSchema, SnapshotMetaSchema,
} from "../gen/causeway/raft/v1/raft_pb.ts";
import { decodeMessageFast, encodeMessageFast } from "./codec_fast.ts";
import type {
  ConfChange as PbConfChange, ConfState as PbConfState, Entry as PbEntry, HardState as PbHardState, Message as PbMessage,
  SnapshotMeta as PbSnapshotMeta,
} from "../gen/causeway/raft/v1/raft_pb.ts";

/** Bytes that do not decode to a valid value. */
export class CodecError extends Error {
  constructor(what: string, detail: string) {
    super(`cannot decode ${what}: ${detail}`);
    this.name = "CodecError";
  }
}

const MAX = BigInt(Number.MAX_SAFE_INTEGER);

/** A uint64 as a safe integer; throws on values a JS number cannot hold exactly. */
function num(v: bigint, what: string): number {
  if (v > MAX) throw new CodecError(what, `value ${v} exceeds 2^53 - 1`);
  return Number(v);
}

function big(v: number): bigint {
  return BigInt(v);
}

function parse<T>(what: string, f: () => T): T {
  try {
    return f();
  } catch (err) {
    if (err instanceof CodecError) throw err;
    throw new CodecError(what, err instanceof Error ? err.message : String(err));
  }
}

// --- conf change ----------------------------------------------------------------------------------

const CC_TYPE_TO_PB: Record<ConfChangeType, PbCcType> = {
  AddNode: PbCcType.ADD_NODE, AddLearnerNode: PbCcType.ADD_LEARNER_NODE, RemoveNode: PbCcType.REMOVE_NODE,
};
const CC_TYPE_FROM_PB = new Map<number, ConfChangeType>(Object.entries(CC_TYPE_TO_PB).map(([k, v]) => [v, k as ConfChangeType]));
const TRANSITION_TO_PB: Record<ConfChangeTransition, PbTransition> = {
  Auto: PbTransition.AUTO, JointImplicit: PbTransition.JOINT_IMPLICIT, JointExplicit: PbTransition.JOINT_EXPLICIT,
};
const TRANSITION_FROM_PB = new Map<number, ConfChangeTransition>(
  Object.entries(TRANSITION_TO_PB).map(([k, v]) => [v, k as ConfChangeTransition]),
);

function confChangeToPb(cc: ConfChange): PbConfChange {
  return create(ConfChangeSchema, {
    transition: TRANSITION_TO_PB[cc.transition],
    changes: cc.changes.map((c) => ({ type: CC_TYPE_TO_PB[c.type], nodeId: c.nodeId })),
    context: cc.context,
  });
}

function confChangeFromPb(pb: PbConfChange): ConfChange {
  const transition = TRANSITION_FROM_PB.get(pb.transition);
  if (transition === undefined) throw new CodecError("ConfChange", `unknown transition ${pb.transition}`);
  const changes = pb.changes.map((c) => {
    const type = CC_TYPE_FROM_PB.get(c.type);
    if (type === undefined) throw new CodecError("ConfChange", `unknown change type ${c.type}`);
    if (c.nodeId === "") throw new CodecError("ConfChange", "change without node id");
    return { type, nodeId: c.nodeId };
  });
  return pb.context === undefined ? { transition, changes } : { transition, changes, context: pb.context };
}

// --- entries, hard state, snapshot metadata ---------------------------------------------------------

/** The protobuf form of an entry (for embedding in other protobuf messages). */
export function entryToPb(e: Entry): PbEntry {
  return create(EntrySchema, {
    term: big(e.term),
    index: big(e.index),
    payload: e.type === "Normal" ? { case: "data", value: e.data } : { case: "confChange", value: confChangeToPb(e.change) },
  });
}

/** An entry from its protobuf form; throws {@link CodecError} when the payload is missing or invalid. */
export function entryFromPb(pb: PbEntry): Entry {
  const term = num(pb.term, "Entry.term");
  const index = num(pb.index, "Entry.index");
  switch (pb.payload.case) {
    case "data":
      return { type: "Normal", term, index, data: pb.payload.value };
    case "confChange":
      return { type: "ConfChange", term, index, change: confChangeFromPb(pb.payload.value) };
    default:
      throw new CodecError("Entry", `entry ${index} has no payload`);
  }
}

export function encodeEntry(e: Entry): Uint8Array {
  return toBinary(EntrySchema, entryToPb(e));
}

/** Decodes an entry; throws {@link CodecError} on malformed bytes or a missing payload. */
export function decodeEntry(bytes: Uint8Array): Entry {
  return entryFromPb(parse("Entry", () => fromBinary(EntrySchema, bytes)));
}

export function hardStateToPb(hs: HardState): PbHardState {
  return create(HardStateSchema, { term: big(hs.term), vote: hs.vote, commit: big(hs.commit) });
}

export function hardStateFromPb(pb: PbHardState): HardState {
  return { term: num(pb.term, "HardState.term"), vote: pb.vote, commit: num(pb.commit, "HardState.commit") };
}

export function encodeHardState(hs: HardState): Uint8Array {
  return toBinary(HardStateSchema, hardStateToPb(hs));
}

export function decodeHardState(bytes: Uint8Array): HardState {
  return hardStateFromPb(parse("HardState", () => fromBinary(HardStateSchema, bytes)));
}

function confStateToPb(cs: ConfState): PbConfState {
  return create(ConfStateSchema, {
    voters: [...cs.voters], learners: [...cs.learners], votersOutgoing: [...cs.votersOutgoing],
    learnersNext: [...cs.learnersNext], autoLeave: cs.autoLeave,
  });
}

function confStateFromPb(pb: PbConfState): ConfState {
  return { voters: pb.voters, learners: pb.learners, votersOutgoing: pb.votersOutgoing, learnersNext: pb.learnersNext, autoLeave: pb.autoLeave };
}

export function snapshotMetaToPb(s: Snapshot): PbSnapshotMeta {
  return create(SnapshotMetaSchema, { index: big(s.index), term: big(s.term), confState: confStateToPb(s.confState) });
}

/** Snapshot metadata from its protobuf form; the conf state is required. */
export function snapshotMetaFromPb(pb: PbSnapshotMeta): Snapshot {
  if (!pb.confState) throw new CodecError("SnapshotMeta", "missing conf_state");
  return { index: num(pb.index, "SnapshotMeta.index"), term: num(pb.term, "SnapshotMeta.term"), confState: confStateFromPb(pb.confState) };
}

export function encodeSnapshotMeta(s: Snapshot): Uint8Array {
  return toBinary(SnapshotMetaSchema, snapshotMetaToPb(s));
}

export function decodeSnapshotMeta(bytes: Uint8Array): Snapshot {
  return snapshotMetaFromPb(parse("SnapshotMeta", () => fromBinary(SnapshotMetaSchema, bytes)));
}

// --- messages --------------------------------------------------------------------------------------

type Body = PbMessage["body"];

function bodyOf(m: Message): Body {
  const E = {};
  switch (m.type) {
    case "MsgHup": return { case: "hup", value: E } as Body;
    case "MsgBeat": return { case: "beat", value: E } as Body;
    case "MsgCheckQuorum": return { case: "checkQuorum", value: E } as Body;
    case "MsgUnreachable": return { case: "unreachable", value: E } as Body;
    case "MsgTransferLeader": return { case: "transferLeader", value: E } as Body;
    case "MsgTimeoutNow": return { case: "timeoutNow", value: E } as Body;
    case "MsgSnapStatus": return { case: "snapStatus", value: { reject: m.reject } } as Body;
    case "MsgProp": return { case: "prop", value: { entries: m.entries.map(entryToPb), context: m.context ?? "" } } as Body;
    case "MsgPropTooLarge": return { case: "propTooLarge", value: { context: m.context, size: big(m.size), limit: big(m.limit) } } as Body;
    case "MsgApp":
      return { case: "app", value: { index: big(m.index), logTerm: big(m.logTerm), entries: m.entries.map(entryToPb), commit: big(m.commit) } } as Body;
    case "MsgAppResp":
      return { case: "appResp", value: { index: big(m.index), reject: m.reject, rejectHint: big(m.rejectHint), logTerm: big(m.logTerm) } } as Body;
    case "MsgVote":
    case "MsgPreVote":
      return { case: m.type === "MsgVote" ? "vote" : "preVote", value: { index: big(m.index), logTerm: big(m.logTerm), transfer: m.transfer } } as Body;
    case "MsgVoteResp":
    case "MsgPreVoteResp":
      return { case: m.type === "MsgVoteResp" ? "voteResp" : "preVoteResp", value: { reject: m.reject } } as Body;
    case "MsgSnap": return { case: "snap", value: { snapshot: snapshotMetaToPb(m.snapshot) } } as Body;
    case "MsgHeartbeat": return { case: "heartbeat", value: { commit: big(m.commit), context: m.context } } as Body;
    case "MsgHeartbeatResp": return { case: "heartbeatResp", value: { context: m.context } } as Body;
    case "MsgReadIndex": return { case: "readIndex", value: { context: m.context } } as Body;
    case "MsgReadIndexResp": return { case: "readIndexResp", value: { index: big(m.index), context: m.context } } as Body;
    default: {
      const never: never = m;
      throw new Error(`encodeMessage: unknown message type ${(never as { type: string }).type}`);
    }
  }
}

/** Encodes a Raft message for the wire. Throws on a message whose type is not in the union. */
export function encodeMessage(msg: Message): Uint8Array {
  return encodeMessageFast(msg) ?? encodeMessageReflective(msg);
}

/** @internal The generic protobuf-es encoding (every message kind); tests compare the fast path with it. */
export function encodeMessageReflective(msg: Message): Uint8Array {
  return toBinary(MessageSchema, create(MessageSchema, { from: msg.from, to: msg.to, term: big(msg.term), body: bodyOf(msg) }));
}

/**
 * Decodes a Raft message. Throws {@link CodecError} on malformed bytes, an unknown or missing body
 * (message type), an entry without payload, a MsgSnap without snapshot, or an out-of-range number.
 */
export function decodeMessage(bytes: Uint8Array): Message {
  let fast: Message | undefined;
  try {
    fast = decodeMessageFast(bytes);
  } catch (err) {
    throw new CodecError("Message", (err as Error).message);
  }
  return fast ?? decodeMessageReflective(bytes);
}

/** @internal The generic protobuf-es decoding (every message kind); tests compare the fast path with it. */
export function decodeMessageReflective(bytes: Uint8Array): Message {
  const pb = parse("Message", () => fromBinary(MessageSchema, bytes));
  const base = { from: pb.from, to: pb.to, term: num(pb.term, "Message.term") };
  const b = pb.body;
  switch (b.case) {
    case "hup": return { ...base, type: "MsgHup" };
    case "beat": return { ...base, type: "MsgBeat" };
    case "checkQuorum": return { ...base, type: "MsgCheckQuorum" };
    case "unreachable": return { ...base, type: "MsgUnreachable" };
    case "transferLeader": return { ...base, type: "MsgTransferLeader" };
    case "timeoutNow": return { ...base, type: "MsgTimeoutNow" };
    case "snapStatus": return { ...base, type: "MsgSnapStatus", reject: b.value.reject };
    case "prop": {
      const entries = b.value.entries.map(entryFromPb);
      return b.value.context ? { ...base, type: "MsgProp", entries, context: b.value.context } : { ...base, type: "MsgProp", entries };
    }
    case "propTooLarge":
      return {
        ...base, type: "MsgPropTooLarge", context: b.value.context, size: num(b.value.size, "MsgPropTooLarge.size"),
        limit: num(b.value.limit, "MsgPropTooLarge.limit"),
      };
    case "app":
      return {
        ...base, type: "MsgApp", index: num(b.value.index, "MsgApp.index"), logTerm: num(b.value.logTerm, "MsgApp.logTerm"),
        entries: b.value.entries.map(entryFromPb), commit: num(b.value.commit, "MsgApp.commit"),
      };
    case "appResp":
      return {
        ...base, type: "MsgAppResp", index: num(b.value.index, "MsgAppResp.index"), reject: b.value.reject,
        rejectHint: num(b.value.rejectHint, "MsgAppResp.rejectHint"), logTerm: num(b.value.logTerm, "MsgAppResp.logTerm"),
      };
    case "vote":
    case "preVote":
      return {
        ...base, type: b.case === "vote" ? "MsgVote" : "MsgPreVote", index: num(b.value.index, "MsgVote.index"),
        logTerm: num(b.value.logTerm, "MsgVote.logTerm"), transfer: b.value.transfer,
      };
    case "voteResp": return { ...base, type: "MsgVoteResp", reject: b.value.reject };
    case "preVoteResp": return { ...base, type: "MsgPreVoteResp", reject: b.value.reject };
    case "snap":
      if (!b.value.snapshot) throw new CodecError("Message", "MsgSnap without snapshot");
      return { ...base, type: "MsgSnap", snapshot: snapshotMetaFromPb(b.value.snapshot) };
    case "heartbeat": return { ...base, type: "MsgHeartbeat", commit: num(b.value.commit, "MsgHeartbeat.commit"), context: b.value.context };
    case "heartbeatResp": return { ...base, type: "MsgHeartbeatResp", context: b.value.context };
    case "readIndex": return { ...base, type: "MsgReadIndex", context: b.value.context };
    case "readIndexResp":
      return { ...base, type: "MsgReadIndexResp", index: num(b.value.index, "MsgReadIndexResp.index"), context: b.value.context };
    default:
      throw new CodecError("Message", "unknown or missing message type (no body)");
  }
}
