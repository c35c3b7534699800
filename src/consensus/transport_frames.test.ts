import { crc32c, crc32cUpdate } from "./crc32c.ts";
import { describe, expect, test } from "bun:test";
import { seededRng } from "../platform/index.ts";
import type { Rng } from "../platform/index.ts";
import type { Message } from "../raft/index.ts";
import { EMPTY_CONF_STATE } from "../raft/index.ts";
import type { Frame, FrameKind, MessageCodec } from "./transport_frames.ts";
import {
  FrameDecoder, FrameError, FrameKind as K, InboundSession, decodeHello, decodeSnapBegin, decodeSnapEnd, encodeFrame,
  encodeHello, encodeSnapBegin, encodeSnapEnd,
} from "./transport_frames.ts";

const KINDS: FrameKind[] = [K.Hello, K.Message, K.SnapBegin, K.SnapChunk, K.SnapEnd, K.SnapAck, K.SnapNack];

function randomFrames(rng: Rng, count: number): Frame[] {
  return Array.from({ length: count }, () => {
    const size = rng.int(4) === 0 ? 0 : rng.int(rng.int(2) === 0 ? 8 : 300);
    return { kind: KINDS[rng.int(KINDS.length)]!, payload: rng.bytes(size) };
  });
}

function concat(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) { out.set(p, at); at += p.length; }
  return out;
}

function decodeSplit(bytes: Uint8Array, cuts: number[], max = 1 << 20): Frame[] {
  const d = new FrameDecoder(max);
  const out: Frame[] = [];
  let prev = 0;
  for (const c of [...cuts, bytes.length]) {
    out.push(...d.push(bytes.subarray(prev, c)));
    prev = c;
  }
  expect(d.idle).toBe(true);
  return out;
}

const plain = (fs: Frame[]) => fs.map((f) => ({ kind: f.kind, payload: [...f.payload] }));

describe("FrameDecoder", () => {
  test("every single split position of a random frame stream decodes the same frames (seeded)", () => {
    for (const seed of [1, 2, 3, 4, 5]) {
      const rng = seededRng(seed);
      const frames = randomFrames(rng, 12);
      const bytes = concat(frames.map((f) => encodeFrame(f.kind, f.payload)));
      const want = plain(frames);
      for (let i = 0; i <= bytes.length; i++) expect(plain(decodeSplit(bytes, [i]))).toEqual(want);
    }
  });

  test("random multi-way splits, including one byte at a time (seeded)", () => {
    const rng = seededRng(42);
    for (let round = 0; round < 200; round++) {
      const frames = randomFrames(rng, 1 + rng.int(10));
      const bytes = concat(frames.map((f) => encodeFrame(f.kind, f.payload)));
      const cuts = Array.from({ length: rng.int(20) }, () => rng.int(bytes.length + 1)).sort((a, b) => a - b);
      expect(plain(decodeSplit(bytes, cuts))).toEqual(plain(frames));
    }
    const frames = randomFrames(rng, 5);
    const bytes = concat(frames.map((f) => encodeFrame(f.kind, f.payload)));
    expect(plain(decodeSplit(bytes, Array.from({ length: bytes.length }, (_, i) => i)))).toEqual(plain(frames));
  });

  test("an oversize length or unknown kind throws at every split position and poisons the decoder", () => {
    const good = encodeFrame(K.Message, new Uint8Array([1, 2, 3]));
    const oversize = new Uint8Array([0, 0, 1, 0, K.Message, 9, 9]); // 256 > limit 100
    const unknownKind = new Uint8Array([0, 0, 0, 1, 99, 0]);
    for (const [bad, msg] of [[oversize, "exceeds limit 100"], [unknownKind, "unknown frame kind 99"]] as const) {
      const bytes = concat([good, bad]);
      for (let i = 0; i <= bytes.length; i++) {
        const d = new FrameDecoder(100);
        let got: Frame[] = [];
        const run = () => { got = got.concat(d.push(bytes.subarray(0, i))); got = got.concat(d.push(bytes.subarray(i))); };
        expect(run).toThrow(msg);
        expect(() => d.push(new Uint8Array([0]))).toThrow(FrameError);
        expect(got.length).toBeLessThanOrEqual(1);
      }
    }
  });
});

describe("payloads", () => {
  test("hello, snapshot-begin and snapshot-end round-trip; truncation is a FrameError", () => {
    expect(decodeHello(encodeHello("node-1", "n2"))).toEqual({ version: 1, from: "node-1", to: "n2" });
    const begin = decodeSnapBegin(encodeSnapBegin(2 ** 40 + 7, new Uint8Array([5, 6])));
    expect(begin.totalBytes).toBe(2 ** 40 + 7);
    expect([...begin.msg]).toEqual([5, 6]);
    expect(decodeSnapEnd(encodeSnapEnd(123, 0xdeadbeef))).toEqual({ totalBytes: 123, crc: 0xdeadbeef });
    expect(() => decodeHello(new Uint8Array([1, 0]))).toThrow(FrameError);
    expect(() => decodeHello(new Uint8Array([1, 0, 9, 65]))).toThrow(FrameError);
    expect(() => decodeSnapEnd(new Uint8Array(3))).toThrow(FrameError);
  });

  test("crc32c continues over split input", () => {
    const data = new TextEncoder().encode("123456789");
    expect(crc32c(data)).toBe(0xe3069283);
    expect(crc32cUpdate(crc32c(data.subarray(0, 4)), data.subarray(4))).toBe(0xe3069283);
  });
});

/** A stand-in codec: JSON of the message (no Uint8Array fields needed here). */
const codec: MessageCodec = {
  encode: (m) => new TextEncoder().encode(JSON.stringify(m)),
  decode: (b) => JSON.parse(new TextDecoder().decode(b)) as Message,
};

describe("InboundSession", () => {
  const snapMsg = { type: "MsgSnap", from: "a", to: "b", term: 2, snapshot: { index: 9, term: 2, confState: EMPTY_CONF_STATE } } as const;
  const frame = (kind: FrameKind, payload: Uint8Array = new Uint8Array(0)): Frame => ({ kind, payload });
  const hello = frame(K.Hello, encodeHello("a", "b"));

  test("requires a hello addressed to this node first", () => {
    expect(new InboundSession("b", codec, 100).handle(frame(K.Message, new Uint8Array(1)))).toMatchObject({ type: "close" });
    expect(new InboundSession("b", codec, 100).handle(frame(K.Hello, encodeHello("a", "c")))).toMatchObject({ type: "close", nack: false });
    const s = new InboundSession("b", codec, 100);
    expect(s.handle(hello)).toEqual({ type: "none" });
    expect(s.peer).toBe("a");
  });

  test("delivers messages from the hello's sender and drops impostors, local messages and MsgSnap", () => {
    const s = new InboundSession("b", codec, 100);
    s.handle(hello);
    const ok: Message = { type: "MsgHeartbeat", from: "a", to: "b", term: 1, commit: 3, context: "" };
    expect(s.handle(frame(K.Message, codec.encode(ok)))).toEqual({ type: "message", msg: ok });
    for (const bad of [{ ...ok, from: "x" }, { ...ok, to: "c" }, { type: "MsgHup", from: "a", to: "b", term: 0 } as Message, snapMsg]) {
      expect(s.handle(frame(K.Message, codec.encode(bad)))).toMatchObject({ type: "drop" });
    }
    expect(s.handle(frame(K.Message, new Uint8Array([0xff])))).toMatchObject({ type: "drop" });
  });

  test("assembles a snapshot; refuses oversize, overrun, short and corrupt ones with a nack", () => {
    const data = new Uint8Array([1, 2, 3, 4, 5]);
    const run = (total: number, chunks: Uint8Array[], end: Uint8Array, max = 100) => {
      const s = new InboundSession("b", codec, max);
      s.handle(hello);
      const actions = [s.handle(frame(K.SnapBegin, encodeSnapBegin(total, codec.encode(snapMsg))))];
      for (const c of chunks) actions.push(s.handle(frame(K.SnapChunk, c)));
      actions.push(s.handle(frame(K.SnapEnd, end)));
      return actions.filter((a) => a.type !== "none");
    };
    const good = run(5, [data.subarray(0, 2), data.subarray(2)], encodeSnapEnd(5, crc32c(data)));
    expect(good).toHaveLength(1);
    expect(good[0]).toMatchObject({ type: "snapshot", msg: snapMsg });
    expect([...(good[0] as { data: Uint8Array }).data]).toEqual([...data]);
    expect(run(5, [data], encodeSnapEnd(5, crc32c(data)), 4)[0]).toMatchObject({ type: "close", nack: true });
    expect(run(4, [data], encodeSnapEnd(4, crc32c(data)))[0]).toMatchObject({ type: "close", nack: true, reason: expect.stringContaining("overruns") });
    expect(run(5, [data.subarray(0, 3)], encodeSnapEnd(5, crc32c(data)))[0]).toMatchObject({ type: "close", nack: true });
    expect(run(5, [data], encodeSnapEnd(5, crc32c(data) ^ 1))[0]).toMatchObject({ type: "close", reason: "snapshot crc32c mismatch" });
  });
});
