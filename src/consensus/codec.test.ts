import { describe, expect, test } from "bun:test";
import { create, toBinary } from "@bufbuild/protobuf";
import type { ConfState, Entry, Message, Snapshot } from "../raft/index.ts";
import { EntrySchema, MessageSchema, SnapshotMetaSchema } from "../gen/causeway/raft/v1/raft_pb.ts";
import {
  CodecError, decodeEntry, decodeHardState, decodeMessage, decodeSnapshotMeta, encodeEntry, encodeHardState, encodeMessage,
  encodeSnapshotMeta,
} from "./codec.ts";

const bytes = (...b: number[]) => Uint8Array.from(b);
const joint: ConfState = { voters: ["a", "b", "c"], learners: ["e"], votersOutgoing: ["a", "b", "d"], learnersNext: ["d"], autoLeave: true };
const snap: Snapshot = { index: 120, term: 7, confState: joint };

const entries: Entry[] = [
  { type: "Normal", term: 1, index: 1, data: new Uint8Array(0) },
  { type: "Normal", term: 2, index: 2, data: bytes(1, 2, 3, 255) },
  { type: "ConfChange", term: 2, index: 3, change: { transition: "Auto", changes: [{ type: "AddNode", nodeId: "n2" }] } },
  { type: "ConfChange", term: 2, index: 4, change: { transition: "Auto", changes: [] } },
  {
    type: "ConfChange", term: 3, index: 5,
    change: {
      transition: "JointExplicit", context: bytes(9, 8, 7),
      changes: [{ type: "AddLearnerNode", nodeId: "n4" }, { type: "RemoveNode", nodeId: "n1" }, { type: "AddNode", nodeId: "n5" }],
    },
  },
  { type: "ConfChange", term: 3, index: 6, change: { transition: "JointImplicit", changes: [{ type: "AddNode", nodeId: "x" }], context: new Uint8Array(0) } },
  { type: "Normal", term: Number.MAX_SAFE_INTEGER, index: Number.MAX_SAFE_INTEGER, data: bytes(0) },
];

const base = { from: "n1", to: "n2", term: 9 };
const messages: Message[] = [
  { type: "MsgHup", from: "n1", to: "", term: 0 },
  { type: "MsgBeat", from: "", to: "", term: 0 },
  { type: "MsgCheckQuorum", from: "n1", to: "", term: 0 },
  { type: "MsgUnreachable", from: "n3", to: "", term: 0 },
  { type: "MsgSnapStatus", from: "n3", to: "", term: 0, reject: true },
  { type: "MsgSnapStatus", from: "n3", to: "", term: 0, reject: false },
  { ...base, type: "MsgProp", term: 0, entries },
  { ...base, type: "MsgProp", entries: [] },
  { ...base, type: "MsgProp", term: 0, entries, context: "0a1b2c" },
  { ...base, type: "MsgPropTooLarge", term: 0, context: "0a1b2c", size: 17_000_000, limit: 15_728_640 },
  { ...base, type: "MsgApp", index: 10, logTerm: 8, entries, commit: 9 },
  { ...base, type: "MsgApp", index: 0, logTerm: 0, entries: [], commit: 0 },
  { ...base, type: "MsgAppResp", index: 12, reject: true, rejectHint: 5, logTerm: 3 },
  { ...base, type: "MsgAppResp", index: 12, reject: false, rejectHint: 0, logTerm: 0 },
  { ...base, type: "MsgVote", index: 33, logTerm: 4, transfer: true },
  { ...base, type: "MsgPreVote", index: 33, logTerm: 4, transfer: false },
  { ...base, type: "MsgVoteResp", reject: false },
  { ...base, type: "MsgPreVoteResp", reject: true },
  { ...base, type: "MsgSnap", snapshot: snap },
  { ...base, type: "MsgSnap", snapshot: { index: 1, term: 1, confState: { voters: ["n1"], learners: [], votersOutgoing: [], learnersNext: [], autoLeave: false } } },
  { ...base, type: "MsgHeartbeat", commit: 44, context: "ctx-1" },
  { ...base, type: "MsgHeartbeat", commit: 0, context: "" },
  { ...base, type: "MsgHeartbeatResp", context: "ctx-1" },
  { ...base, type: "MsgTransferLeader" },
  { ...base, type: "MsgTimeoutNow" },
  { ...base, type: "MsgReadIndex", term: 0, context: "read-7" },
  { ...base, type: "MsgReadIndexResp", index: 99, context: "read-7" },
];

describe("codec", () => {
  test("every message type round-trips", () => {
    const seen = new Set<string>();
    for (const m of messages) {
      seen.add(m.type);
      expect(decodeMessage(encodeMessage(m))).toEqual(m);
    }
    expect(seen.size).toBe(20);
  });

  test("every entry kind round-trips, including conf change context presence", () => {
    for (const e of entries) expect(decodeEntry(encodeEntry(e))).toEqual(e);
    const noCtx = decodeEntry(encodeEntry(entries[2]!));
    expect(noCtx.type === "ConfChange" && "context" in noCtx.change).toBe(false);
    const emptyCtx = decodeEntry(encodeEntry(entries[5]!));
    expect(emptyCtx.type === "ConfChange" && emptyCtx.change.context).toEqual(new Uint8Array(0));
  });

  test("hard state and snapshot metadata (joint conf state) round-trip", () => {
    for (const hs of [{ term: 0, vote: "", commit: 0 }, { term: 5, vote: "n3", commit: 1234 }]) {
      expect(decodeHardState(encodeHardState(hs))).toEqual(hs);
    }
    expect(decodeSnapshotMeta(encodeSnapshotMeta(snap))).toEqual(snap);
  });

  test("strict decoding: no body, unknown type, missing payloads, out-of-range numbers, garbage", () => {
    const noBody = toBinary(MessageSchema, create(MessageSchema, { from: "a", to: "b", term: 1n }));
    expect(() => decodeMessage(noBody)).toThrow(CodecError);
    expect(() => decodeMessage(noBody)).toThrow(/unknown or missing message type/);
    // Field 99 is an unknown body case: protobuf keeps it as an unknown field; the body stays empty.
    const unknown = new Uint8Array([...noBody, 0x9a, 0x06, 0x00]);
    expect(() => decodeMessage(unknown)).toThrow(/unknown or missing message type/);
    const snapNoMeta = toBinary(MessageSchema, create(MessageSchema, { from: "a", to: "b", body: { case: "snap", value: {} } }));
    expect(() => decodeMessage(snapNoMeta)).toThrow(/MsgSnap without snapshot/);
    expect(() => decodeEntry(toBinary(EntrySchema, create(EntrySchema, { term: 1n, index: 2n })))).toThrow(/entry 2 has no payload/);
    const badCc = toBinary(EntrySchema, create(EntrySchema, { term: 1n, index: 2n, payload: { case: "confChange", value: { transition: 0 } } }));
    expect(() => decodeEntry(badCc)).toThrow(/unknown transition/);
    const huge = toBinary(EntrySchema, create(EntrySchema, { term: 1n, index: 1n << 60n, payload: { case: "data", value: bytes() } }));
    expect(() => decodeEntry(huge)).toThrow(/exceeds 2\^53/);
    expect(() => decodeSnapshotMeta(toBinary(SnapshotMetaSchema, create(SnapshotMetaSchema, { index: 1n })))).toThrow(/missing conf_state/);
    expect(() => decodeMessage(bytes(0xff, 0xff, 0xff))).toThrow(CodecError);
    expect(() => decodeHardState(bytes(0x0a))).toThrow(CodecError);
  });
});
