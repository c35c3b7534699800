import { describe, expect, test } from "bun:test";
import { seededRng } from "../platform/index.ts";
import { decodePacket, encodePacket } from "./codec.ts";
import { LAN_PROFILE, memberlistConfig } from "./config.ts";
import { MAX_ACK_PAYLOAD_BYTES, Memberlist, type PingDelegate } from "./memberlist.ts";
import { SerfCoordinates } from "./serf_coordinates.ts";
import type { Message, PushNodeState } from "./types.ts";

const empty = new Uint8Array(0);
const alive = (name: string): PushNodeState => ({ name, addr: name, meta: empty, incarnation: 1, state: "alive" });

interface Recorder extends PingDelegate { payload: Uint8Array; readonly calls: [string, number, number[]][] }
const recorder = (payload: Uint8Array = empty): Recorder => {
  const r: Recorder = {
    payload,
    calls: [],
    ackPayload: () => r.payload,
    notifyPingComplete: (node, rttMs, p) => void r.calls.push([node, rttMs, [...p]]),
  };
  return r;
};

/** Node "a" believing in `others`, with `ping` as its delegate; packets are fed by hand. */
function lone(others: string[], ping: PingDelegate): Memberlist {
  const ml = new Memberlist(memberlistConfig(LAN_PROFILE, { name: "a", addr: "a" }), seededRng(1), 0, ping);
  ml.handleStream("x", { type: "push-pull", reply: true, join: true, nodes: others.map(alive), userState: empty }, 0);
  ml.outbox();
  return ml;
}
const sent = (ml: Memberlist) => ml.outbox().packets.map((p) => ({ to: p.to, msgs: decodePacket(p.bytes) }));
/** Ticks until "a" pings someone; returns the ping's seq, target and time. */
function nextPing(ml: Memberlist, from = 0): { seq: number; target: string; at: number } {
  for (let t = from; t < from + 10_000; t++) {
    ml.tick(t);
    for (const p of sent(ml)) for (const m of p.msgs) if (m.type === "ping") return { seq: m.seq, target: m.target, at: t };
  }
  throw new Error("no ping");
}
const ping = (seq: number): Message => ({ type: "ping", seq, target: "a", sourceNode: "b", sourceAddr: "b" });

describe("ping delegate: ack payloads", () => {
  test("acks carry the delegate's payload; an empty or oversized one sends a plain ack", () => {
    const d = recorder(Uint8Array.of(1, 2, 3));
    const ml = lone(["b"], d);
    ml.handlePacket("b", encodePacket([ping(7)]), 1);
    expect(sent(ml)[0]!.msgs[0]).toEqual({ type: "ack", seq: 7, payload: Uint8Array.of(1, 2, 3) });
    d.payload = empty;
    ml.handlePacket("b", encodePacket([ping(8)]), 2);
    expect(sent(ml)[0]!.msgs[0]).toEqual({ type: "ack", seq: 8 });
    d.payload = new Uint8Array(MAX_ACK_PAYLOAD_BYTES + 1);
    ml.handlePacket("b", encodePacket([ping(9)]), 3);
    expect(sent(ml)[0]!.msgs[0]).toEqual({ type: "ack", seq: 9 });
  });

  test("without a delegate acks are plain", () => {
    const ml = new Memberlist(memberlistConfig(LAN_PROFILE, { name: "a", addr: "a" }), seededRng(1), 0);
    ml.handlePacket("b", encodePacket([ping(1)]), 1);
    expect(sent(ml)[0]!.msgs[0]).toEqual({ type: "ack", seq: 1 });
  });

  test("a direct ack reports the round trip and payload; a plain (older) ack completes the probe with an empty payload", () => {
    const d = recorder();
    const ml = lone(["b"], d);
    const p1 = nextPing(ml);
    ml.handlePacket("b", encodePacket([{ type: "ack", seq: p1.seq, payload: Uint8Array.of(9) }]), p1.at + 12.5);
    expect(d.calls).toEqual([["b", 12.5, [9]]]);
    const p2 = nextPing(ml, p1.at + 1);
    ml.handlePacket("b", encodePacket([{ type: "ack", seq: p2.seq }]), p2.at + 3);
    expect(d.calls[1]).toEqual(["b", 3, []]);
    expect(ml.stats.directAcks).toBe(2);
    expect(ml.stats.failed).toBe(0);
  });

  test("an ack after the indirect probes went out is no sample", () => {
    const d = recorder();
    const ml = lone(["b", "c", "d"], d);
    const p = nextPing(ml);
    const target = p.target;
    ml.tick(p.at + LAN_PROFILE.probeTimeoutMs); // indirect pings go out
    expect(sent(ml).some((x) => x.msgs.some((m) => m.type === "indirect-ping"))).toBe(true);
    ml.handlePacket(target, encodePacket([{ type: "ack", seq: p.seq, payload: Uint8Array.of(1) }]), p.at + LAN_PROFILE.probeTimeoutMs + 1);
    expect(d.calls).toEqual([]);
    expect(ml.stats.indirectAcks).toBe(1);
  });

  test("a relay forwards the target's ack without its payload and takes no sample", () => {
    const d = recorder();
    const ml = lone(["b", "c"], d);
    ml.handlePacket("c", encodePacket([{ type: "indirect-ping", seq: 77, target: "b", targetAddr: "b", nack: true, sourceNode: "c", sourceAddr: "c" }]), 5);
    const out = sent(ml);
    const relayed = out.flatMap((x) => x.msgs).find((m) => m.type === "ping");
    expect(relayed?.type).toBe("ping");
    ml.handlePacket("b", encodePacket([{ type: "ack", seq: (relayed as { seq: number }).seq, payload: Uint8Array.of(4, 2) }]), 9);
    const back = sent(ml).find((x) => x.to === "c");
    expect(back?.msgs[0]).toEqual({ type: "ack", seq: 77 });
    expect(d.calls).toEqual([]);
  });

  test("a coordinate adds 92 bytes to an ack: 2 for the length, 1 version, 1 dimensionality, 11 float64s", () => {
    const coords = new SerfCoordinates("a", seededRng(1));
    const plain = encodePacket([{ type: "ack", seq: 1 }]).length;
    const withCoord = encodePacket([{ type: "ack", seq: 1, payload: coords.ackPayload() }]).length;
    expect(withCoord - plain).toBe(92);
  });
});
