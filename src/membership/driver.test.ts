/**
 * The gossip driver over the in-memory transport and a simulated clock: joins, convergence, failure
 * detection, and the stream side's limits (oversize frames, timeouts). Deterministic per seed.
 */
import { describe, expect, test } from "bun:test";
import { memoryLogger, seededRng, silentLogger, type Logger } from "../platform/index.ts";
import { simClock, type SimClock, runSimTimers } from "../../test/harness/sim_clock.ts";
import { LOCAL_PROFILE, memberlistConfig } from "./config.ts";
import { createGossipDriver, type DropNotice, type GossipDriver } from "./driver.ts";
import { Memberlist } from "./memberlist.ts";
import { createMemoryNetwork, type MemoryNetwork } from "./transport_memory.ts";
import type { GossipStream, GossipTransport } from "./transport.ts";
import type { MemberEvent } from "./types.ts";


/** Runs simulated timers for up to `ms`, flushing after each; stops early when `until` holds. */
const run = (clock: SimClock, ms: number, until?: () => boolean): Promise<boolean> => runSimTimers(clock, ms, until);

interface Node { readonly d: GossipDriver; readonly events: MemberEvent[]; readonly drops: DropNotice[] }

interface Sim { clock: SimClock; net: MemoryNetwork; nodes: Map<string, Node>; add(name: string, opts?: { logger?: Logger; streamTimeoutMs?: number }): Node }

function sim(seed: number): Sim {
  const clock = simClock();
  const rng = seededRng(seed);
  const net = createMemoryNetwork({ clock, rng, latencyMs: [1, 10] });
  const nodes = new Map<string, Node>();
  return {
    clock, net, nodes,
    add(name, opts = {}) {
      const transport = net.transport(name);
      const ml = new Memberlist(memberlistConfig(LOCAL_PROFILE, { name, addr: transport.localAddr }), seededRng(seed * 1000 + nodes.size), clock.monotonic());
      const drops: DropNotice[] = [];
      const d = createGossipDriver({
        memberlist: ml, transport, clock, rng, logger: opts.logger ?? silentLogger(),
        streamTimeoutMs: opts.streamTimeoutMs, onDrop: (x) => drops.push(x),
      });
      const events: MemberEvent[] = [];
      d.subscribe((e) => events.push(e));
      const node = { d, events, drops };
      nodes.set(name, node);
      return node;
    },
  };
}

const liveCount = (n: Node) => n.d.memberlist.numLiveMembers();

describe("driver over the in-memory transport (simulated clock)", () => {
  for (const seed of [1, 2, 3]) {
    test(`seed ${seed}: 5 members join through one seed, converge, and detect a stopped member as failed`, async () => {
      const s = sim(seed);
      const names = ["n0", "n1", "n2", "n3", "n4"];
      const log = memoryLogger("info");
      for (const n of names) s.add(n, { logger: log });
      const all = [...s.nodes.values()];
      const joined = Promise.all(names.slice(1).map((n) => s.nodes.get(n)!.d.join(["n0"])));
      expect(await run(s.clock, 10_000, () => all.every((n) => liveCount(n) === 5))).toBe(true);
      expect(await joined).toEqual([1, 1, 1, 1]);
      for (const n of all) {
        expect(n.events.filter((e) => e.type === "join").map((e) => e.type === "join" && e.member.name).sort()).toEqual(names);
        expect(n.drops).toEqual([]);
      }

      await s.nodes.get("n4")!.d.stop();
      const rest = all.slice(0, 4);
      const sawFailed = (n: Node) => n.events.some((e) => e.type === "failed" && e.member.name === "n4");
      expect(await run(s.clock, 60_000, () => rest.every(sawFailed))).toBe(true);
      for (const n of rest) {
        expect(n.events.some((e) => e.type === "leave")).toBe(false);
        expect(n.events.some((e) => e.type === "failed" && e.member.name !== "n4")).toBe(false);
        expect(liveCount(n)).toBe(4);
      }
      // Whoever's suspicion ran out first logged it, in memberlist's words (the others may learn it by gossip).
      expect(log.lines.some((l) => l.includes("marking member as failed, suspect timeout reached member=n4"))).toBe(true);
      for (const n of rest) await n.d.stop();
    });
  }

  test("two members whose packets to each other are all lost stay alive through stream pings, and the log says so", async () => {
    const clock = simClock();
    const net = createMemoryNetwork({ clock, rng: seededRng(5), latencyMs: [1, 10] });
    const log = memoryLogger("info");
    const start = (name: string) => {
      const inner = net.transport(name);
      // Every packet is lost; streams (fresh connections) get through.
      const transport: GossipTransport = {
        localAddr: inner.localAddr, maxPacketBytes: inner.maxPacketBytes,
        listen: (h) => inner.listen(h), sendPacket: async () => {}, dialStream: (to, ms, toName) => inner.dialStream(to, ms, toName), close: () => inner.close(),
      };
      const ml = new Memberlist(memberlistConfig(LOCAL_PROFILE, { name, addr: inner.localAddr }), seededRng(name.length), clock.monotonic());
      return createGossipDriver({ memberlist: ml, transport, clock, rng: seededRng(7), logger: log });
    };
    const a = start("a"), b = start("b");
    const joined = a.join(["b"]);
    await run(clock, 30_000, () => false);
    expect(await joined).toBe(1);
    for (const d of [a, b]) {
      expect(d.memberlist.numLiveMembers()).toBe(2);
      expect(d.memberlist.stats.failed).toBe(0);
      // Every probe fails its packets, so Lifeguard stretches the interval up to 8x: a few probes in 30 s.
      expect(d.memberlist.stats.streamAcks).toBeGreaterThanOrEqual(3);
    }
    expect(log.lines.some((l) => l.includes("was able to connect to member but other probes failed, network may be misconfigured member=b"))).toBe(true);
    await a.stop();
    await b.stop();
  });

  test("join of an unreachable address rejects naming it, and counts a stream drop", async () => {
    const s = sim(7);
    const a = s.add("a");
    const p = a.d.join(["nowhere"]);
    let err: unknown;
    p.catch((e) => (err = e));
    await run(s.clock, 1000, () => err !== undefined);
    expect(String(err)).toContain("nowhere");
    expect(a.d.stats().streamDrops["stream-failed"]).toBe(1);
    await a.d.stop();
  });

  test("an outbound push-pull to a peer that never answers times out", async () => {
    const s = sim(8);
    const a = s.add("a", { streamTimeoutMs: 2000 });
    const hole = s.net.transport("hole");
    const held: GossipStream[] = [];
    hole.listen({ packet() {}, stream: (st) => void held.push(st) });
    let err: unknown;
    a.d.join(["hole"]).catch((e) => (err = e));
    await run(s.clock, 5000, () => err !== undefined);
    expect(String(err)).toContain("timeout");
    expect(a.d.stats().streamDrops.timeout).toBe(1);
    expect(held.length).toBe(1);
    await a.d.stop();
  });

  test("an inbound stream that stalls mid-frame is timed out and aborted", async () => {
    const s = sim(9);
    const a = s.add("a", { streamTimeoutMs: 2000 });
    const raw = rawPeer(s.net, "stall");
    const st = await dialIn(s, raw, "a");
    let ended: Error | undefined | null = null;
    st.read({ data() {}, end: (e) => (ended = e) });
    await st.write(new Uint8Array([0, 0, 0, 10, 0xc6, 1]));
    expect(await run(s.clock, 5000, () => ended !== null)).toBe(true);
    expect(ended).toBeInstanceOf(Error); // reset, not a clean end
    expect(a.drops).toEqual([{ kind: "stream", reason: "timeout", peer: "stall" }]);
    await a.d.stop();
  });

  test("an oversize frame closes the stream at once and the log names the peer", async () => {
    const s = sim(10);
    const logger = memoryLogger("warn");
    const a = s.add("a", { logger });
    const raw = rawPeer(s.net, "evil");
    const st = await dialIn(s, raw, "a");
    let ended: Error | undefined | null = null;
    st.read({ data() {}, end: (e) => (ended = e) });
    await st.write(new Uint8Array([0xff, 0xff, 0xff, 0xf0, 1, 2, 3]));
    expect(await run(s.clock, 100, () => ended !== null)).toBe(true);
    expect(a.d.stats().streamDrops.oversize).toBe(1);
    expect(logger.lines.some((l) => l.includes("peer=evil") && l.includes("reason=oversize"))).toBe(true);
    await a.d.stop();
  });

  test("garbage on a stream is dropped as malformed; the member keeps working", async () => {
    const s = sim(11);
    const a = s.add("a");
    const b = s.add("b");
    const raw = rawPeer(s.net, "junk");
    const st = await dialIn(s, raw, "a");
    st.read({ data() {}, end() {} });
    await st.write(new Uint8Array([0, 0, 0, 3, 0xc6, 9, 9]));
    await run(s.clock, 100, () => a.drops.length > 0);
    expect(a.drops).toEqual([{ kind: "stream", reason: "malformed", peer: "junk" }]);
    const joined = b.d.join(["a"]);
    expect(await run(s.clock, 3000, () => liveCount(a) === 2 && liveCount(b) === 2)).toBe(true);
    expect(await joined).toBe(1);
    await a.d.stop();
    await b.d.stop();
  });

  test("a subscriber that changes state mid-batch still sees events in the core's order", async () => {
    const s = sim(12);
    const [a, b, c] = [s.add("a"), s.add("b"), s.add("c")];
    void b.d.join(["a"]);
    void c.d.join(["a"]);
    expect(await run(s.clock, 5000, () => [a, b, c].every((n) => liveCount(n) === 3))).toBe(true);
    const d = s.add("d");
    const seen: string[] = [];
    d.d.subscribe((e) => {
      if (!("member" in e)) return;
      seen.push(`${e.type}:${e.member.name}`);
      if (e.type === "join" && e.member.name === "a") d.d.updateMeta(new Uint8Array([1])); // drains the core re-entrantly
    });
    void d.d.join(["a"]);
    expect(await run(s.clock, 1000, () => seen.includes("update:d"))).toBe(true);
    expect(seen.slice(0, 5)).toEqual(["join:d", "join:a", "join:b", "join:c", "update:d"]);
    for (const n of [a, b, c, d]) await n.d.stop();
  });

  test("events produced before the first subscriber are delivered to it", async () => {
    const clock = simClock();
    const net = createMemoryNetwork({ clock, rng: seededRng(1) });
    const t = net.transport("solo");
    const ml = new Memberlist(memberlistConfig(LOCAL_PROFILE, { name: "solo", addr: "solo" }), seededRng(2), 0);
    const d = createGossipDriver({ memberlist: ml, transport: t, clock, rng: seededRng(3), logger: silentLogger() });
    const seen: string[] = [];
    d.subscribe((e) => seen.push(e.type === "user" ? e.key : "member" in e ? `${e.type}:${e.member.name}` : e.type));
    await run(clock, 500, () => seen.length > 0);
    expect(seen).toEqual(["join:solo"]);
    await d.stop();
  });
});

/** A bare transport on the network that the test drives by hand. */
function rawPeer(net: MemoryNetwork, addr: string): GossipTransport {
  const t = net.transport(addr);
  t.listen({ packet() {}, stream: (st) => st.abort() });
  return t;
}

async function dialIn(s: Sim, raw: GossipTransport, to: string): Promise<GossipStream> {
  let st: GossipStream | undefined;
  void raw.dialStream(to, 1000).then((x) => (st = x));
  await run(s.clock, 100, () => st !== undefined);
  return st!;
}
