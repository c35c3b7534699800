import { describe, expect, test } from "bun:test";
import { seededRng } from "../platform/index.ts";
import {
  CodecError, decodeMessage, decodePacket, decodeQuery, decodeQueryResponse, decodeStream, encodeMessage, encodePacket, encodeQuery,
  encodeQueryResponse, encodeStream,
} from "./codec.ts";
import type { Message, PushPullMsg, QueryMsg, QueryResponseMsg } from "./types.ts";

const meta = new Uint8Array([1, 2, 3, 255]);
const samples: Message[] = [
  { type: "ping", seq: 0xffff_ffff, target: "n1", sourceNode: "n2", sourceAddr: "10.0.0.2:8301" },
  { type: "ping", seq: 0, target: "", sourceNode: "", sourceAddr: "" },
  { type: "indirect-ping", seq: 7, target: "n3", targetAddr: "10.0.0.3:8301", nack: true, sourceNode: "n1", sourceAddr: "a" },
  { type: "ack", seq: 42 },
  { type: "nack", seq: 43 },
  { type: "suspect", incarnation: 9, node: "nœud-ü", from: "n1" },
  { type: "alive", incarnation: 1, node: "n1.dc1", addr: "[::1]:8302", meta },
  { type: "dead", incarnation: 3, node: "n4", from: "n4" },
  { type: "user", key: "ev", payload: new Uint8Array(300).fill(7) },
];

describe("codec: acks with a payload", () => {
  test("round-trip; an ack without payload keeps the old 5-byte encoding and decodes without the field", () => {
    const plain: Message = { type: "ack", seq: 42 };
    expect(encodeMessage(plain)).toEqual(Uint8Array.of(3, 0, 0, 0, 42));
    expect(encodeMessage({ type: "ack", seq: 42, payload: new Uint8Array(0) })).toEqual(Uint8Array.of(3, 0, 0, 0, 42));
    expect(decodeMessage(Uint8Array.of(3, 0, 0, 0, 42))).toEqual(plain);
    const withPayload: Message = { type: "ack", seq: 42, payload: Uint8Array.of(1, 2, 3) };
    expect(encodeMessage(withPayload)).toEqual(Uint8Array.of(3, 0, 0, 0, 42, 0, 3, 1, 2, 3));
    expect(decodeMessage(encodeMessage(withPayload))).toEqual(withPayload);
    expect(decodePacket(encodePacket([withPayload, plain]))).toEqual([withPayload, plain]);
  });

  test("an empty, truncated or over-long payload is malformed", () => {
    for (const bytes of [Uint8Array.of(3, 0, 0, 0, 42, 0, 0), Uint8Array.of(3, 0, 0, 0, 42, 0), Uint8Array.of(3, 0, 0, 0, 42, 0, 2, 1), Uint8Array.of(3, 0, 0, 0, 42, 0, 1, 1, 9)]) {
      expect(() => decodeMessage(bytes)).toThrow(CodecError);
    }
  });
});

describe("codec", () => {
  test("every message round-trips alone and in one packet", () => {
    for (const m of samples) expect(decodeMessage(encodeMessage(m))).toEqual(m);
    expect(decodePacket(encodePacket(samples))).toEqual(samples);
  });

  test("push-pull stream round-trips", () => {
    const msg: PushPullMsg = {
      type: "push-pull", reply: true, join: false, userState: new Uint8Array([9]),
      nodes: [
        { name: "a", addr: "a:1", meta, incarnation: 5, state: "alive" },
        { name: "b", addr: "b:1", meta: new Uint8Array(0), incarnation: 0, state: "left" },
        { name: "c", addr: "c:1", meta: new Uint8Array(0), incarnation: 2, state: "suspect" },
        { name: "d", addr: "d:1", meta: new Uint8Array(0), incarnation: 2, state: "dead" },
      ],
    };
    expect(decodeStream(encodeStream(msg))).toEqual(msg);
    expect(decodeStream(encodeStream({ ...msg, reply: false, join: true, nodes: [] }))).toEqual({ ...msg, reply: false, join: true, nodes: [] });
    // Stream pings and acks (memberlist's TCP ping) share the header; anything after them is refused.
    expect(decodeStream(encodeStream({ type: "stream-ping", seq: 4_000_000_000, target: "b.dc2" }))).toEqual({ type: "stream-ping", seq: 4_000_000_000, target: "b.dc2" });
    expect(decodeStream(encodeStream({ type: "stream-ack", seq: 7 }))).toEqual({ type: "stream-ack", seq: 7 });
    expect(() => decodeStream(Uint8Array.of(...encodeStream({ type: "stream-ack", seq: 7 }), 0))).toThrow(CodecError);
    expect(() => decodeStream(Uint8Array.of(0xc6, 1, 16, 0, 0, 0, 0))).toThrow(CodecError);
  });

  test("rejects specific malformations with CodecError", () => {
    const good = encodePacket([samples[3]!]);
    const cases: [string, Uint8Array][] = [
      ["empty", new Uint8Array(0)],
      ["bad magic", Uint8Array.of(0, ...good.subarray(1))],
      ["bad version", Uint8Array.of(good[0]!, 9, ...good.subarray(2))],
      ["zero messages", Uint8Array.of(good[0]!, good[1]!, 0)],
      ["truncated", good.subarray(0, good.length - 1)],
      ["trailing byte", Uint8Array.of(...good, 0)],
      ["unknown tag", Uint8Array.of(good[0]!, good[1]!, 1, 0, 1, 99)],
      ["bad bool", (() => { const b = encodePacket([samples[2]!]); const i = b.length - 1 - 2 - 1 - 2 - 2; b[i] = 2; return b; })()],
      ["bad utf-8", Uint8Array.of(good[0]!, good[1]!, 1, 0, 8, 7, 0, 0, 0, 1, 0, 1, 0xff)],
    ];
    for (const [name, bytes] of cases) {
      let err: unknown;
      try { decodePacket(bytes); } catch (e) { err = e; }
      expect(err, name).toBeInstanceOf(CodecError);
    }
    expect(() => decodeStream(Uint8Array.of(0xc6, 1, 0, 0xff, 0xff, 0xff, 0xff))).toThrow(CodecError);
  });

  test("property: random and mutated bytes never throw anything but CodecError (seeded)", () => {
    const valid = [encodePacket(samples), encodeStream({ type: "push-pull", reply: false, join: true, userState: new Uint8Array(0), nodes: [{ name: "a", addr: "b", meta, incarnation: 1, state: "alive" }] })];
    for (let seed = 1; seed <= 20; seed++) {
      const rng = seededRng(seed);
      for (let i = 0; i < 500; i++) {
        let bytes: Uint8Array;
        const mode = rng.int(3);
        if (mode === 0) bytes = rng.bytes(rng.int(64));
        else {
          bytes = valid[rng.int(2)]!.slice();
          if (mode === 1) for (let j = 0, n = 1 + rng.int(4); j < n; j++) bytes[rng.int(bytes.length)] = rng.int(256);
          else bytes = bytes.subarray(0, rng.int(bytes.length));
        }
        for (const decode of [decodePacket, decodeStream]) {
          try {
            decode(bytes);
          } catch (e) {
            if (!(e instanceof CodecError)) throw new Error(`seed ${seed} iteration ${i}: ${String(e)} for bytes ${Array.from(bytes).join(",")}`);
          }
        }
      }
    }
  });
});

describe("serf query codec", () => {
  const query: QueryMsg = {
    ltime: 0xffff_fffe, id: 12345, sourceNode: "s1.dc1", sourceAddr: "10.0.0.1:8302", requestAck: true, noBroadcast: false, timeoutMs: 3200,
    filters: [{ type: "nodes", nodes: ["a", "b"] }, { type: "tag", tag: "role", expr: "^consul$" }], name: "_serf_list-keys", payload: Uint8Array.of(1, 0, 0),
  };
  const response: QueryResponseMsg = { ltime: 7, id: 8, from: "n2", ack: false, payload: new Uint8Array(900).fill(3) };

  test("query and response round-trip", () => {
    expect(decodeQuery(encodeQuery(query))).toEqual(query);
    expect(decodeQuery(encodeQuery({ ...query, filters: [], requestAck: false, noBroadcast: true }))).toEqual({ ...query, filters: [], requestAck: false, noBroadcast: true });
    expect(decodeQueryResponse(encodeQueryResponse(response))).toEqual(response);
    expect(decodeQueryResponse(encodeQueryResponse({ ...response, ack: true, payload: new Uint8Array(0) }))).toEqual({ ...response, ack: true, payload: new Uint8Array(0) });
  });

  test("malformed queries and responses throw CodecError only (seeded mutations)", () => {
    expect(() => decodeQuery(encodeQueryResponse(response))).toThrow(CodecError);
    expect(() => decodeQueryResponse(encodeQuery(query))).toThrow(CodecError);
    expect(() => decodeQuery(encodeQuery({ ...query, sourceNode: "" }))).toThrow("empty source node");
    expect(() => decodeQueryResponse(encodeQueryResponse({ ...response, from: "" }))).toThrow("empty sender");
    const valid = [encodeQuery(query), encodeQueryResponse(response)];
    const rng = seededRng(99);
    for (let i = 0; i < 3000; i++) {
      let bytes = valid[rng.int(2)]!.slice();
      if (rng.int(2) === 0) for (let j = 0, n = 1 + rng.int(4); j < n; j++) bytes[rng.int(bytes.length)] = rng.int(256);
      else bytes = bytes.subarray(0, rng.int(bytes.length));
      for (const decode of [decodeQuery, decodeQueryResponse]) {
        try {
          decode(bytes);
        } catch (e) {
          if (!(e instanceof CodecError)) throw new Error(`iteration ${i}: ${String(e)} for bytes ${Array.from(bytes).join(",")}`);
        }
      }
    }
  });
});
