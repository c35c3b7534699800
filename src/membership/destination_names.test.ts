/**
 * The destination member's name travels with every send to a known member (memberlist's
 * NodeAwareTransport Address.Name): in the core's outbox (probes, indirect probes and their relayed
 * acks and nacks, gossip, push-pull, joins in `name/addr` form) and through the driver to the
 * transport. Member names differ from their addresses here, so a name can only come from the member.
 */
import { describe, expect, test } from "bun:test";
import { seededRng, silentLogger } from "../platform/index.ts";
import { runSimTimers, simClock } from "../../test/harness/sim_clock.ts";
import { decodePacket, encodePacket } from "./codec.ts";
import { LOCAL_PROFILE, memberlistConfig } from "./config.ts";
import { createGossipDriver, type GossipDriver } from "./driver.ts";
import { Memberlist, type OutPacket, type StreamRequest } from "./memberlist.ts";
import { createMemoryNetwork } from "./transport_memory.ts";
import type { GossipTransport } from "./transport.ts";
import type { Message, MessageType } from "./types.ts";

const empty = new Uint8Array(0);
const ADDR: Record<string, string> = { a: "10.0.0.1:8301", b: "10.0.0.2:8301", c: "10.0.0.3:8301", d: "10.0.0.4:8301" };
const nameAt = new Map(Object.entries(ADDR).map(([name, addr]) => [addr, name]));
const PROBE_MESSAGES: readonly MessageType[] = ["ping", "indirect-ping", "ack", "nack"];

/** Node "a" that knows b, c and d (alive), fed by hand. */
function lone(pushPullIntervalMs = LOCAL_PROFILE.pushPullIntervalMs): Memberlist {
  const ml = new Memberlist(memberlistConfig(LOCAL_PROFILE, { name: "a", addr: ADDR.a! }, { pushPullIntervalMs }), seededRng(3), 0);
  const nodes = ["b", "c", "d"].map((name) => ({ name, addr: ADDR[name]!, meta: empty, incarnation: 1, state: "alive" as const }));
  ml.handleStream("x", { type: "push-pull", reply: true, join: true, nodes, userState: empty }, 0);
  ml.outbox();
  return ml;
}

/** Ticks `ml` at each deadline up to `untilMs`, collecting what it sends. */
function runAlone(ml: Memberlist, untilMs: number): { packets: OutPacket[]; streams: StreamRequest[] } {
  const packets: OutPacket[] = [];
  const streams: StreamRequest[] = [];
  for (let now = ml.nextDeadline(); now <= untilMs; now = ml.nextDeadline()) {
    ml.tick(now);
    const out = ml.outbox();
    packets.push(...out.packets);
    streams.push(...out.streamRequests);
  }
  return { packets, streams };
}

const types = (p: { bytes: Uint8Array }) => decodePacket(p.bytes).map((m) => m.type);
const routes = (xs: readonly { to: string; toName?: string }[]) => xs.map((x) => [x.to, x.toName]);

describe("the core names the member it sends to", () => {
  test("probes, indirect probes, gossip and push-pull carry the member's name", () => {
    const ml = lone(500); // push-pull before the silent members are declared dead
    // Nobody answers: direct probes fail, indirect probes go out, suspicions and deaths are gossiped.
    const { packets, streams } = runAlone(ml, 40_000);
    expect(packets.length).toBeGreaterThan(10);
    for (const p of packets) expect([p.to, p.toName]).toEqual([p.to, nameAt.get(p.to)]);
    const seen = new Set(packets.flatMap(types));
    for (const t of ["ping", "indirect-ping", "suspect"] as const) expect(seen.has(t)).toBe(true);
    expect(packets.some((p) => types(p).every((t) => !PROBE_MESSAGES.includes(t)))).toBe(true); // pure gossip packets
    expect(streams.length).toBeGreaterThan(0); // periodic push-pull
    for (const s of streams) expect([s.to, s.toName]).toEqual([s.to, nameAt.get(s.to)]);
  });

  test("an ack goes to the pinging node's name; an older node's nameless ping gets a nameless ack", () => {
    const ml = lone();
    ml.handlePacket("192.0.2.9:1", encodePacket([{ type: "ping", seq: 7, target: "a", sourceNode: "b", sourceAddr: ADDR.b! }]), 1);
    ml.handlePacket("192.0.2.9:2", encodePacket([{ type: "ping", seq: 8, target: "", sourceNode: "", sourceAddr: "" }]), 1);
    const out = ml.outbox().packets;
    expect(routes(out)).toEqual([[ADDR.b, "b"], ["192.0.2.9:2", undefined]]);
    expect(out.map((p) => types(p)[0])).toEqual(["ack", "ack"]);
  });

  test("a relay pings the target by name and relays its ack, or a nack, to the asker by name", () => {
    const ml = lone();
    const ask = (seq: number): Message => ({ type: "indirect-ping", seq, target: "c", targetAddr: ADDR.c!, nack: true, sourceNode: "b", sourceAddr: ADDR.b! });
    ml.handlePacket(ADDR.b!, encodePacket([ask(41)]), 1);
    const [ping] = ml.outbox().packets;
    expect(routes([ping!])).toEqual([[ADDR.c, "c"]]);
    const sent = decodePacket(ping!.bytes)[0] as Extract<Message, { type: "ping" }>;
    ml.handlePacket(ADDR.c!, encodePacket([{ type: "ack", seq: sent.seq }]), 5);
    const [relayed] = ml.outbox().packets;
    expect(routes([relayed!])).toEqual([[ADDR.b, "b"]]);
    expect(decodePacket(relayed!.bytes)[0]).toEqual({ type: "ack", seq: 41 });

    ml.handlePacket(ADDR.b!, encodePacket([ask(42)]), 10);
    ml.outbox();
    ml.tick(10 + LOCAL_PROFILE.probeTimeoutMs); // no ack from c: the nack is due
    const nack = ml.outbox().packets.find((p) => types(p)[0] === "nack");
    expect(nack && routes([nack])).toEqual([[ADDR.b, "b"]]);
  });

  test("join: `name/addr` goes to addr with the name; a bare or empty-named address has none; self is skipped", () => {
    const ml = lone();
    ml.join(["10.0.0.9:8301", "s9/10.0.0.9:8301", "*.dc1/192.0.2.2:8302", "/10.0.0.9:8301", ADDR.a!, `a/${ADDR.a}`, `other/${ADDR.a}`], 0);
    expect(routes(ml.outbox().streamRequests)).toEqual([
      ["10.0.0.9:8301", undefined], ["10.0.0.9:8301", "s9"], ["192.0.2.2:8302", "*.dc1"], ["/10.0.0.9:8301", undefined], [ADDR.a, "other"],
    ]);
    // A node name may contain "/" (Consul only warns); an address cannot, so the last "/" splits.
    ml.join(["rack/7/[2001:db8::7]:8301"], 0);
    expect(routes(ml.outbox().streamRequests)).toEqual([["[2001:db8::7]:8301", "rack/7"]]);
  });
});

interface Sent { readonly kind: "packet" | "stream"; readonly from: string; readonly to: string; readonly toName?: string; readonly bytes?: Uint8Array }

/** `t`, recording every send and dial with the name it was given. */
function recording(t: GossipTransport, from: string, log: Sent[]): GossipTransport {
  return {
    localAddr: t.localAddr,
    maxPacketBytes: t.maxPacketBytes,
    listen: (h) => t.listen(h),
    sendPacket(to, bytes, toName) {
      log.push({ kind: "packet", from, to, toName, bytes });
      return t.sendPacket(to, bytes, toName);
    },
    dialStream(to, timeoutMs, toName) {
      log.push({ kind: "stream", from, to, toName });
      return t.dialStream(to, timeoutMs, toName);
    },
    close: () => t.close(),
  };
}

describe("the driver hands the name to the transport", () => {
  for (const seed of [1, 2]) {
    test(`seed ${seed}: every packet and stream to a member names it; only joins to a bare address do not`, async () => {
      const clock = simClock();
      const net = createMemoryNetwork({ clock, rng: seededRng(seed), latencyMs: [1, 5] });
      const names = ["n0", "n1", "n2", "n3"];
      const addrOf = (n: string) => `10.1.0.${names.indexOf(n) + 1}:8301`;
      const sent: Sent[] = [];
      const drivers = new Map<string, GossipDriver>();
      for (const [i, name] of names.entries()) {
        const transport = recording(net.transport(addrOf(name)), name, sent);
        const ml = new Memberlist(memberlistConfig(LOCAL_PROFILE, { name, addr: addrOf(name) }), seededRng(seed * 100 + i), clock.monotonic());
        drivers.set(name, createGossipDriver({ memberlist: ml, transport, clock, rng: seededRng(seed), logger: silentLogger() }));
      }
      const joins = [
        drivers.get("n1")!.join([addrOf("n0")]),
        drivers.get("n2")!.join([`n0/${addrOf("n0")}`]),
        drivers.get("n3")!.join([addrOf("n0")]),
      ];
      const all = [...drivers.values()];
      expect(await runSimTimers(clock, 10_000, () => all.every((d) => d.memberlist.numLiveMembers() === 4))).toBe(true);
      expect(await Promise.all(joins)).toEqual([1, 1, 1]);
      // n0 and n1 lose their direct path: their probes of each other go through relays.
      net.setBlocked(addrOf("n0"), addrOf("n1"), true);
      await runSimTimers(clock, 30_000);

      const nameAtAddr = new Map(names.map((n) => [addrOf(n), n]));
      const packets = sent.filter((s) => s.kind === "packet");
      for (const p of packets) expect([p.from, p.to, p.toName]).toEqual([p.from, p.to, nameAtAddr.get(p.to)]);
      const seen = new Set(packets.flatMap((p) => types({ bytes: p.bytes! })));
      for (const t of ["ping", "ack", "indirect-ping", "alive"] as const) expect(seen.has(t)).toBe(true);
      expect(packets.some((p) => types({ bytes: p.bytes! }).every((t) => !PROBE_MESSAGES.includes(t)))).toBe(true);

      const streams = sent.filter((s) => s.kind === "stream");
      expect(streams.filter((s) => s.toName === undefined).map((s) => [s.from, s.to])).toEqual([["n1", addrOf("n0")], ["n3", addrOf("n0")]]);
      const named = streams.filter((s) => s.toName !== undefined);
      expect(named.length).toBeGreaterThan(2); // n2's join and periodic push-pulls
      for (const s of named) expect([s.from, s.to, s.toName]).toEqual([s.from, s.to, nameAtAddr.get(s.to)]);
      for (const d of all) await d.stop();
    });
  }
});
