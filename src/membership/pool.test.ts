/**
 * The gossip pool (transport + core + driver + serf): over the in-memory network with a simulated
 * clock (deterministic per seed) and on loopback with real UDP/TCP.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { cryptoRng, seededRng, silentLogger, systemClock } from "../platform/index.ts";
import { simClock, type SimClock, runSimTimers } from "../../test/harness/sim_clock.ts";
import type { Timing } from "./config.ts";
import { createGossipPool, serfStatsOf, toPoolMember, type GossipPool } from "./pool.ts";
import type { SerfEvent, SerfOptions } from "./serf.ts";
import { COORDINATE_DEFAULTS, distanceMs, newCoordinate } from "./coordinate.ts";
import { createMemoryNetwork, type MemoryNetwork } from "./transport_memory.ts";
import { recordPoolMetrics } from "./pool_metrics.ts";
import { MetricsRegistry } from "../telemetry/index.ts";


/** Runs simulated timers for up to `ms`, flushing after each; stops early when `until` holds. */
const run = (clock: SimClock, ms: number, until?: () => boolean): Promise<boolean> => runSimTimers(clock, ms, until);

interface Node { readonly name: string; readonly pool: GossipPool; readonly events: SerfEvent[] }

const addrOf = (i: number) => `10.0.0.${i + 1}:8301`;
const tagsOf = (name: string) => ({ role: "node", id: name });
const saw = (n: Node, type: SerfEvent["type"], member: string) => n.events.some((e) => e.type === type && e.type !== "user" && e.member.name === member);
const statusOf = (n: Node, member: string) => n.pool.members().find((m) => m.name === member)?.status;
const allAlive = (nodes: readonly Node[], count: number) =>
  nodes.every((n) => n.pool.members().length === count && n.pool.members().every((m) => m.status === "alive"));

interface Sim { clock: SimClock; net: MemoryNetwork; nodes: Node[]; start(i: number): Promise<Node>; stopAll(): Promise<void> }

function sim(seed: number, timing?: Partial<Timing>, serfFor: (i: number) => Partial<SerfOptions> = () => ({})): Sim {
  const clock = simClock();
  const net = createMemoryNetwork({ clock, rng: seededRng(seed), latencyMs: [1, 10] });
  const nodes: Node[] = [];
  let started = 0;
  return {
    clock, net, nodes,
    async start(i) {
      const name = `n${i}`;
      const pool = await createGossipPool({
        name, profile: "local", bindHost: "unused", bindPort: 0, tags: tagsOf(name),
        clock, rng: seededRng(seed * 1000 + started++), logger: silentLogger(),
        serf: { reconnectIntervalMs: 5000, ...serfFor(i) }, timing, transport: net.transport(addrOf(i)),
      });
      const node = { name, pool, events: [] as SerfEvent[] };
      pool.subscribe((e) => void node.events.push(e));
      nodes[i] = node;
      return node;
    },
    async stopAll() {
      for (const n of nodes) await n?.pool.stop();
    },
  };
}

/** Four pools joined through n0 and converged. */
async function cluster(seed: number, timing?: Partial<Timing>, serfFor?: (i: number) => Partial<SerfOptions>): Promise<Sim> {
  const s = sim(seed, timing, serfFor);
  for (let i = 0; i < 4; i++) await s.start(i);
  const joins = Promise.all(s.nodes.slice(1).map((n) => n.pool.join([addrOf(0)])));
  expect(await run(s.clock, 20_000, () => allAlive(s.nodes, 4))).toBe(true);
  expect(await joins).toEqual([1, 1, 1]);
  return s;
}

describe("gossip pool over the in-memory network (simulated clock)", () => {
  for (const seed of [1, 2]) {
    test(`seed ${seed}: 4 pools join through one seed and see each other alive with their tags`, async () => {
      const s = await cluster(seed);
      for (const n of s.nodes) {
        expect(n.pool.members().map((m) => [m.name, m.addr, m.port, m.tags, m.status])).toEqual(
          s.nodes.map((x, i) => [x.name, `10.0.0.${i + 1}`, 8301, tagsOf(x.name), "alive"]),
        );
        const joined = n.events.filter((e) => e.type === "member-join").map((e) => e.type !== "user" && e.member.name);
        expect(joined.sort()).toEqual(["n0", "n1", "n2", "n3"]);
        expect(n.pool.stats().members).toEqual({ alive: 4, leaving: 0, left: 0, failed: 0 });
      }
      await s.stopAll();
    });
  }

  test("an address without a port joins on this pool's own port; joining oneself is a join of 1, not an error", async () => {
    const s = sim(3);
    for (let i = 0; i < 3; i++) await s.start(i);
    const self = s.nodes[0]!.pool.localAddr;
    expect(await s.nodes[0]!.pool.join([self])).toBe(1);
    expect(await s.nodes[0]!.pool.join([self.replace(/:\d+$/, "")])).toBe(1);
    const joins = Promise.all([s.nodes[1]!.pool.join(["10.0.0.1"]), s.nodes[2]!.pool.join(["10.0.0.1", "10.0.0.3"])]);
    expect(await run(s.clock, 20_000, () => allAlive(s.nodes, 3))).toBe(true);
    expect(await joins).toEqual([1, 2]);
    await s.stopAll();
  });

  test("setTags propagates as member-update; a user event reaches everyone once", async () => {
    // With the LOCAL profile's retransmitMult of 2 the gossip of either can miss one of 4 members; the
    // push-pull (every 15 s here) then brings it, as in serf: the member's state, and the recent user events.
    const s = await cluster(3);
    s.nodes[2]!.pool.setTags({ role: "node", id: "n2", extra: "yes" });
    const updated = (n: Node) => n.events.some((e) => e.type === "member-update" && e.member.name === "n2" && e.member.tags.extra === "yes");
    expect(await run(s.clock, 20_000, () => s.nodes.every(updated))).toBe(true);
    for (const n of s.nodes) expect(n.pool.members()[2]!.tags).toEqual({ role: "node", id: "n2", extra: "yes" });

    s.nodes[0]!.pool.userEvent("deploy", new Uint8Array([7]));
    const gotUser = (n: Node) => n.events.filter((e) => e.type === "user" && e.name === "deploy" && e.payload[0] === 7).length === 1;
    expect(await run(s.clock, 20_000, () => s.nodes.every(gotUser))).toBe(true);
    await run(s.clock, 40_000);
    expect(s.nodes.every(gotUser)).toBe(true); // delivered once each, despite re-broadcasts and push-pulls
    await s.stopAll();
  });

  test("a pool that joins later does not replay the cluster's older user events (Consul joins with ignoreOld), but gets newer ones", async () => {
    const s = await cluster(5);
    s.nodes[1]!.pool.userEvent("old", new Uint8Array([1]));
    const got = (n: Node, name: string) => n.events.filter((e) => e.type === "user" && e.name === name).length;
    expect(await run(s.clock, 20_000, () => s.nodes.every((n) => got(n, "old") === 1))).toBe(true);
    const late = await s.start(4);
    const joined = late.pool.join([addrOf(0)]);
    expect(await run(s.clock, 20_000, () => allAlive(s.nodes, 5))).toBe(true);
    expect(await joined).toBe(1);
    await run(s.clock, 45_000); // several push-pulls, each carrying "old"
    expect(got(late, "old")).toBe(0);
    s.nodes[2]!.pool.userEvent("new", new Uint8Array([2]));
    expect(await run(s.clock, 20_000, () => s.nodes.every((n) => got(n, "new") === 1))).toBe(true);
    expect(late.pool.stats().serf.badRemoteStates).toBe(0);
    await s.stopAll();
  });

  test("a stopped pool is seen failed, and after a restart rejoins through serf's reconnect", async () => {
    const s = await cluster(4);
    await s.nodes[3]!.pool.stop();
    const rest = s.nodes.slice(0, 3);
    expect(await run(s.clock, 30_000, () => rest.every((n) => saw(n, "member-failed", "n3")))).toBe(true);
    for (const n of rest) expect(statusOf(n, "n3")).toBe("failed");

    rest.forEach((n) => n.events.splice(0));
    await s.start(3); // same name and address, joins nobody itself
    expect(await run(s.clock, 120_000, () => allAlive(s.nodes, 4))).toBe(true);
    for (const n of rest) expect(saw(n, "member-join", "n3")).toBe(true);
    const reconnects = rest.reduce((sum, n) => sum + n.pool.stats().reconnectsOk, 0);
    expect(reconnects).toBeGreaterThan(0);
    await s.stopAll();
  });

  test("a graceful leave is seen as left, not failed, and stops the pool", async () => {
    const s = await cluster(5);
    await Promise.all([s.nodes[1]!.pool.leave(), run(s.clock, 5_000, () => false)]);
    const rest = s.nodes.filter((n) => n.name !== "n1");
    expect(await run(s.clock, 10_000, () => rest.every((n) => saw(n, "member-leave", "n1")))).toBe(true);
    await run(s.clock, 20_000);
    for (const n of rest) {
      expect(statusOf(n, "n1")).toBe("left");
      expect(saw(n, "member-failed", "n1")).toBe(false);
    }
    await expect(s.nodes[1]!.pool.join([addrOf(0)])).rejects.toThrow("join after leave");
    await s.stopAll();
  });

  test("force-leave turns a failed member into left everywhere; prune reaps it", async () => {
    const s = await cluster(6);
    await s.nodes[3]!.pool.stop();
    const rest = s.nodes.slice(0, 3);
    expect(await run(s.clock, 30_000, () => rest.every((n) => statusOf(n, "n3") === "failed"))).toBe(true);
    expect(rest[0]!.pool.forceLeave("nobody")).toBe(false);
    expect(rest[0]!.pool.forceLeave("n3")).toBe(true);
    expect(await run(s.clock, 10_000, () => rest.every((n) => statusOf(n, "n3") === "left" && saw(n, "member-leave", "n3")))).toBe(true);
    rest[1]!.pool.forceLeave("n3", true);
    expect(saw(rest[1]!, "member-reap", "n3")).toBe(true);
    expect(rest[1]!.pool.members().map((m) => m.name)).toEqual(["n0", "n1", "n2"]);
    // No reconnect attempt targets a left member.
    await run(s.clock, 30_000);
    for (const n of rest) expect(n.pool.stats().reconnectsOk + n.pool.stats().reconnectsFailed).toBe(0);
    await s.stopAll();
  });

  test("join rejects when nothing is reached or no address is given; stop is idempotent", async () => {
    const s = sim(7);
    const a = await s.start(0);
    await expect(a.pool.join([])).rejects.toThrow("no address"); // joining oneself is a join of 1 (tested above)
    let err: unknown;
    a.pool.join(["10.9.9.9:8301"]).catch((e) => (err = e));
    await run(s.clock, 2000, () => err !== undefined);
    expect(String(err)).toContain("10.9.9.9:8301");
    await a.pool.stop();
    await a.pool.stop();
  });

  test("stats carry serf's Lamport clocks, health score and counts; serfStatsOf writes them as Consul's strings", async () => {
    const s = await cluster(5);
    const before = s.nodes[0]!.pool.stats();
    s.nodes[1]!.pool.userEvent("deploy", new Uint8Array([1]));
    expect(await run(s.clock, 5000, () => s.nodes[0]!.pool.stats().serf.eventTime > before.serf.eventTime)).toBe(true);
    const text = serfStatsOf(s.nodes[0]!.pool.stats());
    expect(text).toMatchObject({ members: "4", failed: "0", left: "0", health_score: "0", encrypted: "false", intent_queue: "0" });
    expect(Number(text.member_time)).toBeGreaterThanOrEqual(1);
    expect(Number(text.event_time)).toBeGreaterThan(before.serf.eventTime);
    await s.stopAll();
  });

  test("toPoolMember splits host and port", () => {
    const m = { name: "x", tags: {}, status: "alive" as const };
    expect(toPoolMember({ ...m, addr: "[::1]:8301" })).toMatchObject({ addr: "::1", port: 8301 });
    expect(toPoolMember({ ...m, addr: "opaque" })).toMatchObject({ addr: "opaque", port: 0 });
  });
});

describe("gossip pool on loopback UDP + TCP", () => {
  const running: GossipPool[] = [];
  afterEach(async () => {
    await Promise.all(running.splice(0).map((p) => p.stop()));
  });

  /** Polls `pred` every 20 ms; rejects after `ms`. */
  const until = (what: string, pred: () => boolean, ms = 8000) =>
    new Promise<void>((resolve, reject) => {
      const started = Date.now();
      const check = () => {
        if (pred()) return resolve();
        if (Date.now() - started > ms) return reject(new Error(`timed out waiting for ${what}`));
        setTimeout(check, 20);
      };
      check();
    });

  test("3 pools converge with their tags, and one leaves gracefully", async () => {
    const events = new Map<string, SerfEvent[]>();
    for (const name of ["a", "b", "c"]) {
      const pool = await createGossipPool({
        name, profile: "local", bindHost: "127.0.0.1", bindPort: 0, tags: tagsOf(name),
        clock: systemClock(), rng: cryptoRng(), logger: silentLogger(), leavePropagateDelayMs: 200,
      });
      running.push(pool);
      const list: SerfEvent[] = [];
      events.set(name, list);
      pool.subscribe((e) => void list.push(e));
    }
    const [a, b, c] = running as [GossipPool, GossipPool, GossipPool];
    expect(a.localAddr).toMatch(/^127\.0\.0\.1:\d+$/);
    expect(await b.join([a.localAddr])).toBe(1);
    expect(await c.join([a.localAddr])).toBe(1);
    const converged = () => [a, b, c].every((p) => p.members().length === 3 && p.members().every((m) => m.status === "alive"));
    await until("3 alive members everywhere", converged);
    expect(b.members().map((m) => [m.name, m.addr, m.tags])).toEqual(["a", "b", "c"].map((n) => [n, "127.0.0.1", tagsOf(n)]));
    expect(a.members().find((m) => m.name === "c")!.port).toBe(Number(c.localAddr.split(":")[1]));

    await c.leave();
    await until("c left on a and b", () => [a, b].every((p) => p.members().find((m) => m.name === "c")?.status === "left"));
    for (const n of ["a", "b"]) {
      expect(events.get(n)!.some((e) => e.type === "member-leave" && e.member.name === "c")).toBe(true);
      expect(events.get(n)!.some((e) => e.type === "member-failed")).toBe(false);
    }
  }, 20_000); // real sockets and timers: convergence plus a graceful leave can pass 5 s on a loaded machine
});

describe("gossip pool network coordinates (in-memory network, simulated clock)", () => {
  const origin = newCoordinate(COORDINATE_DEFAULTS);

  test("probes move each pool's coordinate and cache every member's; estimates fall in the network's RTT range", async () => {
    const s = await cluster(21);
    await run(s.clock, 30_000);
    for (const n of s.nodes) {
      const local = n.pool.coordinate()!;
      expect(local).not.toEqual(origin);
      expect(n.pool.cachedCoordinate(n.name)).toBe(local);
      expect([...n.pool.cachedCoordinates().keys()]).toEqual(["n0", "n1", "n2", "n3"]);
      for (const m of s.nodes) {
        if (m === n) continue;
        const est = distanceMs(local, n.pool.cachedCoordinate(m.name)!);
        expect(est).toBeGreaterThan(1); // one-way latency is 1-10 ms: RTTs are 2-20 ms
        expect(est).toBeLessThan(25);
      }
      expect(serfStatsOf(n.pool.stats()).coordinate_resets).toBe("0");
    }
    await s.stopAll();
  });

  test("a pool with coordinates disabled sends plain acks: it stays alive for the others, who cache nothing for it", async () => {
    const s = await cluster(22, undefined, (i) => ({ disableCoordinates: i === 3 }));
    await run(s.clock, 30_000);
    const off = s.nodes[3]!;
    expect(off.pool.coordinate()).toBeUndefined();
    expect(off.pool.cachedCoordinates().size).toBe(0);
    expect("coordinate_resets" in serfStatsOf(off.pool.stats())).toBe(false);
    for (const n of s.nodes.slice(0, 3)) {
      expect(statusOf(n, "n3")).toBe("alive");
      expect(n.pool.cachedCoordinate("n3")).toBeUndefined();
      expect([...n.pool.cachedCoordinates().keys()]).toEqual(["n0", "n1", "n2"]);
      expect(n.pool.stats().serf.coordinates!.withoutPayload).toBeGreaterThan(0);
    }
    expect(statusOf(off, "n0")).toBe("alive");
    await s.stopAll();
  });
});

describe("pool metrics", () => {
  test("member events, user events, packets, exchanges and member counts, labelled by network", async () => {
    const s = sim(3);
    const n0 = await s.start(0);
    const registry = new MetricsRegistry({ now: () => s.clock.now() });
    const stop = recordPoolMetrics(n0.pool, registry, "lan", s.clock);
    for (let i = 1; i < 4; i++) await s.start(i);
    const joins = Promise.all(s.nodes.slice(1).map((n) => n.pool.join([addrOf(0)])));
    expect(await run(s.clock, 20_000, () => allAlive(s.nodes, 4))).toBe(true);
    await joins;
    s.nodes[1]!.pool.userEvent("deploy", new Uint8Array([1]));
    await run(s.clock, 3_000);
    const value = (name: string, status?: string) => {
      const x = registry.series().find((m) => m.name === `consul.${name}` && m.labels[0]![1] === "lan" && (status === undefined || m.labels[1]?.[1] === status));
      return x?.kind === "gauge" ? x.value : x?.total;
    };
    expect(value("serf.member.join")).toBe(4); // itself and the three that joined
    expect(value("serf.events")).toBe(1);
    expect(value("serf.members", "alive")).toBe(4);
    expect(value("memberlist.health.score")).toBe(0);
    expect(value("memberlist.tcp.accept")).toBeGreaterThanOrEqual(3);
    expect(value("memberlist.udp.received")!).toBeGreaterThan(0);
    const count = (name: string) => registry.series().find((m) => m.name === `consul.${name}`)!.count;
    expect(count("memberlist.gossip")).toBeGreaterThan(0);
    expect(count("memberlist.probeNode")).toBe(n0.pool.stats().gossip.memberlist.directAcks + n0.pool.stats().gossip.memberlist.indirectAcks + n0.pool.stats().gossip.memberlist.failed);
    stop();
    await s.stopAll();
  });
});
