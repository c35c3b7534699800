import { describe, expect, test } from "bun:test";
import { seededRng } from "../platform/index.ts";
import { GossipSim } from "../../test/sim/gossip_sim.ts";
import { decodePacket, encodePacket } from "./codec.ts";
import { LAN_PROFILE, LOCAL_PROFILE, memberlistConfig } from "./config.ts";
import { Memberlist } from "./memberlist.ts";
import type { Message, PushNodeState } from "./types.ts";

const empty = new Uint8Array(0);
const alive = (name: string, incarnation = 1): PushNodeState => ({ name, addr: name, meta: empty, incarnation, state: "alive" });

/** A lone node "a" that believes in `others` (no network: the test feeds packets by hand). */
function lone(others: string[], profile = LAN_PROFILE): Memberlist {
  const ml = new Memberlist(memberlistConfig(profile, { name: "a", addr: "a" }), seededRng(1), 0);
  ml.handleStream("x", { type: "push-pull", reply: true, join: true, nodes: others.map((n) => alive(n)), userState: empty }, 0);
  ml.outbox();
  return ml;
}
const packet = (...msgs: Message[]) => encodePacket(msgs);
const sentMessages = (ml: Memberlist) => ml.outbox().packets.flatMap((p) => decodePacket(p.bytes));

function cluster(seed: number, names: string[], opts: { loss?: number } = {}): GossipSim {
  const sim = new GossipSim({ seed, profile: LOCAL_PROFILE, loss: opts.loss });
  for (const n of names) sim.addNode(n);
  for (const n of names.slice(1)) sim.join(n, [names[0]!]);
  sim.runFor(3000);
  return sim;
}
const failedEvents = (sim: GossipSim, about: string) => sim.log.filter((r) => r.event.type === "failed" && r.event.member.name === about);

describe("probing", () => {
  test("direct ping is acked and nobody is suspected", () => {
    const sim = cluster(1, ["a", "b"]);
    sim.runFor(5000);
    const a = sim.node("a").ml;
    expect(a.stats.directAcks).toBeGreaterThan(3);
    expect(a.stats.failed).toBe(0);
    expect(a.member("b")?.state).toBe("alive");
    expect(a.healthScore()).toBe(0);
  });

  test("indirect probe succeeds when the direct path is lost", () => {
    const sim = cluster(2, ["a", "b", "c", "d"]);
    sim.blocked = (f, t) => (f === "a" && t === "b") || (f === "b" && t === "a");
    sim.runFor(20_000);
    const a = sim.node("a").ml;
    expect(a.stats.indirectAcks).toBeGreaterThan(0);
    expect(a.member("b")?.state).not.toBe("dead");
    expect(failedEvents(sim, "b")).toEqual([]);
  });

  test("missed nacks raise the local health score (Lifeguard)", () => {
    const ml = lone(["b", "c", "d"]);
    for (let t = 0; ml.stats.failed === 0 && t < 5000; t += 10) ml.tick(t);
    expect(ml.stats.failed).toBe(1);
    expect(ml.healthScore()).toBe(2); // two relays asked, no nack from either
  });
});

describe("suspicion", () => {
  test("a crashed member becomes suspect, then dead exactly at the suspicion timeout", () => {
    const sim = cluster(3, ["a", "b"]);
    sim.crash("b");
    const a = sim.node("a").ml;
    expect(sim.runUntilTrue(() => a.member("b")?.state === "suspect", 3000)).toBeDefined();
    const suspectSince = a.member("b")!.stateChange;
    sim.runFor(10_000);
    const [ev] = failedEvents(sim, "b");
    expect(ev?.node).toBe("a");
    // n = 2: no confirmations are possible (k = 0), so the timeout is the minimum:
    // suspicionMult(3) * max(1, log10(2)) * 1 s = 3 s after the suspicion began.
    expect(ev!.at).toBe(suspectSince + 3000);
    expect(a.member("b")?.state).toBe("dead");
  });

  test("timeout starts at max and shrinks with independent confirmations", () => {
    // LAN, n = 5: min = 4 * max(1, log10 5) s = 4 s, max = 6 * min = 24 s, k = suspicionMult - 2 = 2.
    const none = lone(["b", "c", "d", "e"]);
    none.handlePacket("c", packet({ type: "suspect", incarnation: 1, node: "b", from: "c" }), 0);
    none.tick(23_999);
    expect(none.member("b")?.state).toBe("suspect");
    none.tick(24_000);
    expect(none.member("b")?.state).toBe("dead");

    const one = lone(["b", "c", "d", "e"]);
    one.handlePacket("c", packet({ type: "suspect", incarnation: 1, node: "b", from: "c" }), 0);
    one.handlePacket("c", packet({ type: "suspect", incarnation: 1, node: "b", from: "c" }), 5); // duplicate: no confirmation
    one.handlePacket("d", packet({ type: "suspect", incarnation: 1, node: "b", from: "d" }), 10);
    expect(one.suspicionConfirmations("b")).toBe(1);
    const afterOne = Math.floor(24_000 - (Math.log(2) / Math.log(3)) * 20_000); // 11381
    one.tick(afterOne - 1);
    expect(one.member("b")?.state).toBe("suspect");
    one.tick(afterOne);
    expect(one.member("b")?.state).toBe("dead");

    const two = lone(["b", "c", "d", "e"]);
    for (const from of ["c", "d", "e"]) two.handlePacket(from, packet({ type: "suspect", incarnation: 1, node: "b", from }), 0);
    two.tick(3999);
    expect(two.member("b")?.state).toBe("suspect");
    two.tick(4000);
    expect(two.member("b")?.state).toBe("dead");
    expect(two.outbox().events.map((e) => e.type)).toContain("failed");
  });

  test("an alive message with a newer incarnation clears the suspicion", () => {
    const ml = lone(["b", "c"]);
    ml.handlePacket("c", packet({ type: "suspect", incarnation: 1, node: "b", from: "c" }), 0);
    ml.handlePacket("c", packet({ type: "alive", incarnation: 1, node: "b", addr: "b", meta: empty }), 1); // same incarnation: ignored
    expect(ml.member("b")?.state).toBe("suspect");
    ml.handlePacket("b", packet({ type: "alive", incarnation: 2, node: "b", addr: "b", meta: empty }), 2);
    expect(ml.member("b")?.state).toBe("alive");
    ml.tick(100_000);
    expect(ml.member("b")?.state).not.toBe("dead");
  });
});

describe("stream pings (memberlist's TCP ping)", () => {
  /** Ticks `ml` until its probe of "b" has timed out and it asked for a stream; returns that request. */
  function untilStreamPing(ml: Memberlist) {
    for (let t = 0; t < 5000; t += 10) {
      ml.tick(t);
      const req = ml.outbox().streamRequests.find((r) => r.msg.type === "stream-ping");
      if (req) return { req, t };
    }
    throw new Error("no stream ping within 5 s");
  }

  test("a probe without a packet ack pings over a stream; the stream ack spares the target its suspicion", () => {
    const ml = lone(["b"]);
    const { req, t } = untilStreamPing(ml);
    expect(req).toMatchObject({ to: "b", toName: "b", msg: { type: "stream-ping", target: "b" } });
    expect(ml.handleStream("b", { type: "stream-ack", seq: (req.msg as { seq: number }).seq }, t + 5)).toBeUndefined();
    const notices = [];
    for (let u = t + 10; u < t + 2000; u += 10) {
      ml.tick(u);
      notices.push(...ml.outbox().notices);
    }
    expect(ml.member("b")?.state).toBe("alive");
    expect(ml.stats).toMatchObject({ failed: 0, streamAcks: 1 });
    expect(notices).toEqual([{ type: "probe-stream-only", node: "b" }]);
    // The packet path failed all the same: the local health score rose, as in memberlist.
    expect(ml.healthScore()).toBe(1);
  });

  test("no stream ack by the end of the interval: suspected as before; a late ack changes nothing", () => {
    const ml = lone(["b"]);
    const { req, t } = untilStreamPing(ml);
    for (let u = t; ml.member("b")?.state !== "suspect" && u < t + 2000; u += 10) ml.tick(u);
    expect(ml.member("b")?.state).toBe("suspect");
    ml.handleStream("b", { type: "stream-ack", seq: (req.msg as { seq: number }).seq }, t + 2000);
    expect(ml.stats).toMatchObject({ failed: 1, streamAcks: 0 });
  });

  test("a stream ping is answered with a stream ack when meant for us, refused when meant for another member", () => {
    const ml = lone(["b"]);
    expect(ml.handleStream("b", { type: "stream-ping", seq: 9, target: "a" }, 0)).toEqual({ type: "stream-ack", seq: 9 });
    expect(ml.handleStream("b", { type: "stream-ping", seq: 9, target: "" }, 0)).toEqual({ type: "stream-ack", seq: 9 });
    expect(ml.handleStream("b", { type: "stream-ping", seq: 9, target: "c" }, 0)).toBeUndefined();
    expect(ml.stats.rejectedMessages).toBe(1);
  });

  test("disableTcpPings: packets only", () => {
    const ml = new Memberlist(memberlistConfig(LAN_PROFILE, { name: "a", addr: "a" }, { disableTcpPings: true }), seededRng(1), 0);
    ml.handleStream("x", { type: "push-pull", reply: true, join: true, nodes: [alive("b")], userState: empty }, 0);
    ml.outbox();
    for (let t = 0; t < 5000; t += 10) {
      ml.tick(t);
      expect(ml.outbox().streamRequests).toEqual([]);
    }
    expect(ml.stats.failed).toBeGreaterThan(0);
  });
});

describe("refutation", () => {
  test("a node accused of being suspect or dead bumps its incarnation and gossips alive", () => {
    const ml = lone(["b"]);
    ml.handlePacket("b", packet({ type: "suspect", incarnation: 1, node: "a", from: "b" }), 0);
    expect(ml.member("a")?.incarnation).toBe(2);
    expect(ml.member("a")?.state).toBe("alive");
    expect(ml.healthScore()).toBe(1);
    ml.handlePacket("b", packet({ type: "dead", incarnation: 7, node: "a", from: "b" }), 1);
    expect(ml.member("a")?.incarnation).toBe(8);
    ml.handlePacket("b", packet({ type: "ping", seq: 1, target: "a", sourceNode: "b", sourceAddr: "b" }), 2);
    const sent = sentMessages(ml);
    expect(sent[0]).toEqual({ type: "ack", seq: 1 });
    expect(sent).toContainEqual({ type: "alive", incarnation: 8, node: "a", addr: "a", meta: empty });
  });

  test("refutations, failed probes and suspicion timeouts come out as notices for the log, in order", () => {
    const ml = lone(["b"]);
    ml.handlePacket("b", packet({ type: "suspect", incarnation: 1, node: "a", from: "b" }), 0);
    ml.handlePacket("b", packet({ type: "dead", incarnation: 7, node: "a", from: "b" }), 1);
    expect(ml.outbox().notices).toEqual([
      { type: "refute", accusation: "suspect", from: "b" },
      { type: "refute", accusation: "dead", from: "b" },
    ]);
    // "b" never answers: its probe fails, and with two members (no confirmations possible) the
    // suspicion runs out at its minimum.
    const notices = [];
    for (let t = 2; ml.member("b")?.state !== "dead" && t < 60_000; t += 10) {
      ml.tick(t);
      notices.push(...ml.outbox().notices);
    }
    expect(notices).toEqual([{ type: "probe-failed", node: "b" }, { type: "suspect-timeout", node: "b", confirmations: 0 }]);
  });

  test("a falsely suspected live member refutes across a lossy cluster and is never declared dead", () => {
    const names = ["a", "b", "c", "d", "e", "f"];
    const sim = cluster(4, names, { loss: 0.1 });
    const b = sim.node("b");
    b.ml.handlePacket("x", packet({ type: "suspect", incarnation: 1, node: "c", from: "x" }), sim.now);
    sim.runFor(30_000);
    for (const n of names) expect(sim.node(n).ml.member("c")?.state, n).toBe("alive");
    expect(sim.node("c").ml.member("c")!.incarnation).toBeGreaterThan(1);
    expect(failedEvents(sim, "c")).toEqual([]);
  });
});

describe("lifecycle", () => {
  test("a dead member is reaped after gossipToTheDeadTime, not before", () => {
    const sim = cluster(5, ["a", "b", "c"]);
    sim.crash("c");
    sim.runUntilTrue(() => sim.node("a").ml.member("c")?.state === "dead", 30_000);
    const a = sim.node("a").ml;
    const deadAt = a.member("c")!.stateChange;
    sim.runUntil(deadAt + LOCAL_PROFILE.gossipToTheDeadTimeMs);
    expect(a.member("c")?.state).toBe("dead");
    sim.runUntil(deadAt + LOCAL_PROFILE.gossipToTheDeadTimeMs + 3 * LOCAL_PROFILE.probeIntervalMs);
    expect(a.member("c")).toBeUndefined();
  });

  test("graceful leave propagates as left, not failed", () => {
    const sim = cluster(6, ["a", "b", "c", "d"]);
    sim.leave("d");
    sim.runFor(2000);
    expect(sim.node("d").ml.leaveComplete).toBe(true);
    sim.crash("d"); // the driver shuts down once the leave propagated
    sim.runFor(10_000);
    for (const n of ["a", "b", "c"]) expect(sim.node(n).ml.member("d")?.state, n).toBe("left");
    expect(failedEvents(sim, "d")).toEqual([]);
    expect(sim.log.filter((r) => r.event.type === "leave" && r.event.member.name === "d").map((r) => r.node).sort()).toEqual(["a", "b", "c", "d"]);
  });

  test("metadata updates reach everyone as update events", () => {
    const sim = cluster(7, ["a", "b", "c"]);
    const tags = new TextEncoder().encode("role=consul");
    sim.node("a").ml.updateMeta(tags, sim.now);
    sim.runFor(3000);
    for (const n of ["b", "c"]) expect(sim.node(n).ml.member("a")?.meta).toEqual(tags);
    expect(sim.log.filter((r) => r.event.type === "update" && r.event.member.name === "a").map((r) => r.node).sort()).toEqual(["a", "b", "c"]);
  });

  test("join and push-pull: a member that missed the gossip learns everyone", () => {
    const sim = cluster(8, ["a", "b", "c", "d", "e"]);
    for (const n of ["a", "b", "c", "d", "e"]) expect(sim.node(n).ml.numLiveMembers(), n).toBe(5);
    expect(sim.log.filter((r) => r.node === "e" && r.event.type === "join").length).toBe(5);
  });

  test("garbage packets are dropped and counted, never thrown", () => {
    const ml = lone(["b"]);
    const rng = seededRng(9);
    for (let i = 0; i < 200; i++) ml.handlePacket("b", rng.bytes(rng.int(40)), i);
    expect(ml.stats.badPackets).toBeGreaterThan(190);
    expect(ml.member("b")?.state).toBe("alive");
  });

  test("piggybacked broadcasts never push a packet past the size limit", () => {
    const ml = lone(Array.from({ length: 120 }, (_, i) => `node-with-a-long-name-${i}`));
    ml.handlePacket("b", packet({ type: "ping", seq: 1, target: "a", sourceNode: "b", sourceAddr: "b" }), 0);
    const [p] = ml.outbox().packets;
    expect(p!.bytes.length).toBeLessThanOrEqual(LAN_PROFILE.packetSizeLimit);
    expect(decodePacket(p!.bytes).length).toBeGreaterThan(10);
  });
});
