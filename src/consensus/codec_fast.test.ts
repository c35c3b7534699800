import { describe, expect, test } from "bun:test";
import { seededRng, type Rng } from "../platform/index.ts";
import type { Entry, Message } from "../raft/index.ts";
import { CodecError, decodeMessage, decodeMessageReflective, encodeMessage, encodeMessageReflective } from "./codec.ts";
import { create, toBinary } from "@bufbuild/protobuf";
import { LogBatchSchema } from "../gen/causeway/raft/v1/raft_pb.ts";
import { entryToPb, hardStateToPb } from "./codec.ts";
import { decodeMessageFast, encodeLogBatchFast, encodeMessageFast } from "./codec_fast.ts";

/** Values with 0 often (proto3 omits them), small ones, and ones past 2^32. */
function num(rng: Rng): number {
  const k = rng.int(4);
  return k === 0 ? 0 : k === 1 ? rng.int(300) : k === 2 ? rng.int(2 ** 31) : 2 ** 40 + rng.int(2 ** 30);
}
const id = (rng: Rng) => ["", "a", "node-1", "5a63e985-8fac-47c4-bc97-9077d60575eb", "ü→✓"][rng.int(5)]!;

function randomMessage(rng: Rng): Message {
  const base = { from: id(rng), to: id(rng), term: num(rng) };
  switch (rng.int(4)) {
    case 0: {
      const entries: Entry[] = Array.from({ length: rng.int(4) }, () => ({ type: "Normal" as const, term: num(rng), index: num(rng), data: rng.bytes(rng.int(3) === 0 ? 0 : rng.int(600)) }));
      return { ...base, type: "MsgApp", index: num(rng), logTerm: num(rng), entries, commit: num(rng) };
    }
    case 1:
      return { ...base, type: "MsgAppResp", index: num(rng), reject: rng.int(2) === 1, rejectHint: num(rng), logTerm: num(rng) };
    case 2:
      return { ...base, type: "MsgHeartbeat", commit: num(rng), context: id(rng) };
    default:
      return { ...base, type: "MsgHeartbeatResp", context: id(rng) };
  }
}

describe("fast Raft message codec", () => {
  test("writes the same bytes as the reflective protobuf encoding, and both decoders agree (seeded)", () => {
    const seed = 20261202;
    const rng = seededRng(seed);
    for (let i = 0; i < 3000; i++) {
      const m = randomMessage(rng);
      const fast = encodeMessageFast(m)!;
      const reflective = encodeMessageReflective(m);
      try {
        expect(fast).toEqual(reflective);
        expect(decodeMessageFast(reflective)).toEqual(m);
        expect(decodeMessageReflective(fast)).toEqual(m);
      } catch (err) {
        throw new Error(`seed ${seed}, message ${i}: ${JSON.stringify(m, (_k, v) => (v instanceof Uint8Array ? `bytes(${v.length})` : v))}: ${(err as Error).message}`);
      }
    }
  });

  test("log batches: the same bytes as the reflective encoding, with and without a hard state (seeded)", () => {
    const rng = seededRng(7);
    for (let i = 0; i < 500; i++) {
      const entries: Entry[] = Array.from({ length: rng.int(5) }, () => ({ type: "Normal" as const, term: num(rng), index: num(rng), data: rng.bytes(rng.int(300)) }));
      const hs = rng.int(2) ? { term: num(rng), vote: id(rng), commit: num(rng) } : undefined;
      const reflective = toBinary(LogBatchSchema, create(LogBatchSchema, { hardState: hs && hardStateToPb(hs), entries: entries.map(entryToPb) }));
      expect(encodeLogBatchFast(hs, entries)).toEqual(reflective);
    }
  });

  test("other kinds and conf-change entries take the reflective path", () => {
    const vote: Message = { from: "a", to: "b", term: 3, type: "MsgVote", index: 7, logTerm: 2, transfer: false };
    expect(encodeMessageFast(vote)).toBeUndefined();
    expect(decodeMessage(encodeMessage(vote))).toEqual(vote);
    const cc: Message = {
      from: "a", to: "b", term: 3, type: "MsgApp", index: 1, logTerm: 1, commit: 1,
      entries: [{ type: "ConfChange", term: 3, index: 2, change: { transition: "Auto", changes: [{ type: "AddNode", nodeId: "c" }] } }],
    };
    expect(encodeMessageFast(cc)).toBeUndefined();
    expect(decodeMessageFast(encodeMessageReflective(cc))).toBeUndefined();
    expect(decodeMessage(encodeMessage(cc))).toEqual(cc);
  });

  test("malformed bytes are CodecErrors: truncation, an entry without payload, numbers past 2^53", () => {
    const m: Message = { from: "a", to: "b", term: 1, type: "MsgApp", index: 1, logTerm: 1, commit: 1, entries: [{ type: "Normal", term: 1, index: 2, data: new Uint8Array([1, 2, 3]) }] };
    const bytes = encodeMessage(m);
    for (let cut = 1; cut < bytes.length; cut++) {
      let out: unknown;
      try {
        out = decodeMessage(bytes.subarray(0, cut));
      } catch (err) {
        expect(err).toBeInstanceOf(CodecError);
        continue;
      }
      // A cut at a field boundary can still be a valid, shorter message; it must not be this one.
      expect(out).not.toEqual(m);
    }
    // Body app { entries: [ { term: 1, index: 2 } ] } with no payload.
    const noPayload = new Uint8Array([0x1a, 0, 0x82, 0x01, 6, 0x1a, 4, 0x08, 1, 0x10, 2]);
    expect(() => decodeMessage(noPayload)).toThrow(CodecError);
    const huge = new Uint8Array([0x18, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f, 0xba, 0x01, 0]);
    expect(() => decodeMessage(huge)).toThrow(/exceeds 2\^53 - 1/);
  });
});
