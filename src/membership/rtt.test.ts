import { describe, expect, test } from "bun:test";
import { seededRng } from "../platform/index.ts";
import { memberlistConfig } from "./config.ts";
import { Memberlist } from "./memberlist.ts";

/** Two cores over a link with a fixed one-way delay; returns a's RTT estimate for b. */
function measure(oneWayMs: number): number | undefined {
  const a = new Memberlist(memberlistConfig("local", { name: "a", addr: "a:1" }), seededRng(1), 0);
  const b = new Memberlist(memberlistConfig("local", { name: "b", addr: "b:1" }), seededRng(2), 0);
  const nodes = new Map([["a:1", a], ["b:1", b]]);
  const inFlight: { at: number; to: string; from: string; bytes: Uint8Array }[] = [];
  a.join(["b:1"], 0);
  for (let now = 0; now < 5_000; now++) {
    for (const p of inFlight.filter((x) => x.at === now)) nodes.get(p.to)!.handlePacket(p.from, p.bytes, now);
    for (const [addr, m] of nodes) {
      m.tick(now);
      const out = m.outbox();
      for (const p of out.packets) inFlight.push({ at: now + oneWayMs, to: p.to, from: addr, bytes: p.bytes });
      for (const r of out.streamRequests) {
        const reply = nodes.get(r.to)?.handleStream(addr, r.msg, now);
        if (reply) m.handleStream(r.to, reply, now);
      }
    }
  }
  return a.rttMs("b");
}

describe("round-trip time", () => {
  test("direct probes measure the link's round trip", () => {
    expect(measure(7)).toBe(14);
    expect(measure(40)).toBe(80);
  });

  test("no estimate for members never probed directly", () => {
    const a = new Memberlist(memberlistConfig("local", { name: "a", addr: "a:1" }), seededRng(1), 0);
    expect(a.rttMs("nobody")).toBeUndefined();
  });
});
