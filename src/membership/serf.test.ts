import { describe, expect, test } from "bun:test";
import { seededRng } from "../platform/index.ts";
import { GossipSim } from "../../test/sim/gossip_sim.ts";
import { LOCAL_PROFILE } from "./config.ts";
import { CONSUL_SERF, SERF_DEFAULTS, Serf, type SerfConfig, type SerfEvent, type SerfOutbox, type SerfRequest } from "./serf.ts";
import { TagsTooLargeError, encodeTags, type Tags } from "./tags.ts";
import type { Member, MemberEvent, MemberState } from "./types.ts";

const HOUR = 3_600_000;
const cfg = (name: string, tags: Tags = { role: "node" }, o: Partial<SerfConfig> = {}): SerfConfig => ({ ...SERF_DEFAULTS, name, tags, ...o });
const mem = (name: string, tags: Tags = {}, state: MemberState = "alive"): Member =>
  ({ name, addr: `${name}:8301`, meta: encodeTags(tags), incarnation: 1, state, stateChange: 0 });
const ev = (type: "join" | "update" | "leave" | "failed", name: string, tags: Tags = {}): MemberEvent => ({ type, member: mem(name, tags) });
const kinds = (o: SerfOutbox) => o.events.map((e) => (e.type === "user" ? `user:${e.name}` : `${e.type}:${e.member.name}`));
const broadcasts = (o: SerfOutbox) => o.requests.filter((r): r is Extract<SerfRequest, { type: "broadcast" }> => r.type === "broadcast");
const asUser = (r: Extract<SerfRequest, { type: "broadcast" }>): MemberEvent => ({ type: "user", key: r.key, payload: r.payload });

/** Serf "a" that knows itself plus `others`, all alive. */
function withMembers(others: string[], o: Partial<SerfConfig> = {}, seed = 1): Serf {
  const s = new Serf(cfg("a", { role: "node" }, o), seededRng(seed), 0);
  for (const n of ["a", ...others]) s.handle(ev("join", n), 0);
  s.outbox();
  return s;
}

/** Ticks every second from `from` to `to`, collecting outboxes. */
function run(s: Serf, from: number, to: number): SerfOutbox {
  const events: SerfEvent[] = [], requests: SerfRequest[] = [], queries: SerfOutbox["queries"][number][] = [];
  for (let t = from; t <= to; t += 1000) {
    s.tick(t);
    const o = s.outbox();
    events.push(...o.events);
    requests.push(...o.requests);
    queries.push(...o.queries);
  }
  return { events, requests, queries };
}

describe("statuses", () => {
  test("join emits member-join with decoded tags; self is a member", () => {
    const s = new Serf(cfg("a"), seededRng(1), 0);
    s.handle(ev("join", "a", { role: "node" }), 0);
    s.handle(ev("join", "b", { role: "consul", dc: "dc1" }), 5);
    const o = s.outbox();
    expect(kinds(o)).toEqual(["member-join:a", "member-join:b"]);
    expect(s.member("b")).toEqual({ name: "b", addr: "b:8301", tags: { role: "consul", dc: "dc1" }, status: "alive", statusChange: 5 });
    expect(s.members().map((m) => m.name)).toEqual(["a", "b"]);
  });

  test("remote join -> leaving (leave intent) -> left (core leave)", () => {
    const a = withMembers(["b"]);
    const b = new Serf(cfg("b"), seededRng(2), 0);
    b.handle(ev("join", "b"), 0);
    b.leave(10);
    const bo = b.outbox();
    expect(b.state).toBe("leaving");
    expect(b.member("b")?.status).toBe("leaving");
    expect(bo.requests.map((r) => r.type)).toEqual(["broadcast", "leave"]);

    const intent = asUser(broadcasts(bo)[0]!);
    a.handle(intent, 20);
    expect(a.member("b")?.status).toBe("leaving");
    expect(broadcasts(a.outbox()).length).toBe(1); // news: re-broadcast once
    a.handle(intent, 21);
    expect(a.outbox().requests).toEqual([]); // duplicate: not re-broadcast

    a.handle(ev("leave", "b"), 30);
    const o = a.outbox();
    expect(kinds(o)).toEqual(["member-leave:b"]);
    expect(a.member("b")).toMatchObject({ status: "left", statusChange: 30 });

    b.handle(ev("leave", "b"), 40); // the core reports our own graceful leave
    expect(b.state).toBe("left");
    expect(kinds(b.outbox())).toEqual(["member-leave:b"]);
    b.leave(50);
    expect(b.outbox().requests).toEqual([]); // idempotent
  });

  test("a leaving member that the core declares failed is left, not failed (serf handleNodeLeave)", () => {
    const a = withMembers(["b"]);
    const b = new Serf(cfg("b"), seededRng(2), 0);
    b.handle(ev("join", "b"), 0);
    b.leave(0);
    a.handle(asUser(broadcasts(b.outbox())[0]!), 1);
    a.handle(ev("failed", "b"), 2);
    expect(kinds(a.outbox())).toEqual(["member-leave:b"]);
    expect(a.member("b")?.status).toBe("left");
  });

  test("join -> failed -> reconnect request -> alive again with a new member-join", () => {
    const s = withMembers(["b", "c"]);
    s.handle(ev("failed", "c"), 1000);
    expect(kinds(s.outbox())).toEqual(["member-failed:c"]);
    expect(s.member("c")?.status).toBe("failed");
    expect(s.stats.failed).toBe(1);

    const out = run(s, 2000, 300_000);
    const joins = out.requests.filter((r) => r.type === "join");
    expect(joins.length).toBeGreaterThan(0);
    expect(joins.length).toBeLessThan(10); // throttled: probability failed/alive = 1/2 per 30 s interval
    expect(joins[0]).toEqual({ type: "join", addresses: ["c/c:8301"], reason: "reconnect", node: "c" }); // serf: name/addr

    s.handle(ev("join", "c"), 301_000);
    expect(kinds(s.outbox())).toEqual(["member-join:c"]);
    expect(s.member("c")?.status).toBe("alive");
    expect(run(s, 302_000, 600_000).requests).toEqual([]); // nothing failed: no more reconnects
  });

  test("reconnects stop while leaving", () => {
    const s = withMembers(["b"]);
    s.handle(ev("failed", "b"), 0);
    s.leave(1);
    s.outbox();
    expect(run(s, 0, 300_000).requests).toEqual([]);
  });

  test("failed members are reaped after reconnectTimeout, left ones after tombstoneTimeout", () => {
    const s = withMembers(["b", "c"], { reconnectTimeoutMs: 2 * HOUR, tombstoneTimeoutMs: HOUR });
    s.handle(ev("failed", "b"), 0);
    s.handle(ev("leave", "c"), 0);
    s.outbox();
    expect(s.nextDeadline()).toBe(30_000); // the reconnect schedule comes first
    s.tick(HOUR);
    expect(kinds(s.outbox())).toEqual([]); // not strictly past the timeout yet
    s.tick(HOUR + 1);
    const o = s.outbox();
    expect(kinds(o)).toEqual(["member-reap:c"]);
    expect((o.events[0] as { member: { status: string } }).member.status).toBe("left");
    expect(s.member("c")).toBeUndefined();
    s.tick(2 * HOUR + 1);
    expect(kinds(s.outbox())).toEqual(["member-reap:b"]);
    expect(s.members().map((m) => m.name)).toEqual(["a"]);
    expect(run(s, 2 * HOUR + 2, 3 * HOUR).requests.filter((r) => r.type === "join")).toEqual([]);
  });

  test("nextDeadline reports the earliest reap", () => {
    const s = withMembers(["b"], { reconnectIntervalMs: 10 * HOUR, reconnectTimeoutMs: HOUR });
    s.handle(ev("failed", "b"), 500);
    expect(s.nextDeadline()).toBe(500 + HOUR + 1);
  });

  test("Consul's pools keep failed members for 72 hours, serf's default is 24", () => {
    expect(SERF_DEFAULTS.reconnectTimeoutMs).toBe(24 * HOUR);
    expect(SERF_DEFAULTS.tombstoneTimeoutMs).toBe(24 * HOUR);
    expect(SERF_DEFAULTS.reconnectIntervalMs).toBe(30_000);
    expect(CONSUL_SERF.reconnectTimeoutMs).toBe(72 * HOUR);
    const s = withMembers(["b"], CONSUL_SERF);
    s.handle(ev("failed", "b"), 0);
    s.tick(48 * HOUR);
    expect(s.member("b")?.status).toBe("failed");
  });
});

describe("tags", () => {
  test("a core update with new metadata emits member-update with the new tags", () => {
    const s = withMembers(["b"]);
    s.handle(ev("update", "b", { role: "consul", ft_fs: "1" }), 10);
    const o = s.outbox();
    expect(kinds(o)).toEqual(["member-update:b"]);
    expect(s.member("b")?.tags).toEqual({ role: "consul", ft_fs: "1" });
    s.handle(ev("update", "zz"), 11); // unknown member: ignored like serf
    expect(s.outbox().events).toEqual([]);
  });

  test("setTags requests update-meta; too large tags throw and change nothing", () => {
    const s = new Serf(cfg("a", { role: "node" }), seededRng(1), 0);
    expect(s.localMeta).toEqual(encodeTags({ role: "node" }));
    const meta = s.setTags({ role: "node", ft_fs: "1" }, 1);
    expect(s.outbox().requests).toEqual([{ type: "update-meta", meta }]);
    expect(s.tags).toEqual({ role: "node", ft_fs: "1" });
    expect(() => s.setTags({ big: "x".repeat(600) }, 2)).toThrow(TagsTooLargeError);
    expect(s.tags).toEqual({ role: "node", ft_fs: "1" });
    expect(s.outbox().requests).toEqual([]);
    expect(() => new Serf(cfg("a", { big: "x".repeat(600) }), seededRng(1), 0)).toThrow(TagsTooLargeError);
  });

  test("malformed metadata reads as no tags and is counted", () => {
    const s = new Serf(cfg("a"), seededRng(1), 0);
    s.handle({ type: "join", member: { ...mem("b"), meta: Uint8Array.of(1, 2, 3) } }, 0);
    expect(s.member("b")?.tags).toEqual({});
    expect(s.stats.badTags).toBe(1);
  });
});

describe("intents, force-leave and user events", () => {
  test("force-leave turns a failed member left (member-leave), stops reconnects, prune reaps", () => {
    const s = withMembers(["b", "c"]);
    s.handle(ev("failed", "b"), 0);
    s.handle(ev("failed", "c"), 0);
    s.outbox();
    expect(s.forceLeave("b", 5)).toBe(true);
    const o = s.outbox();
    expect(kinds(o)).toEqual(["member-leave:b"]);
    expect(broadcasts(o).length).toBe(1);
    expect(s.forceLeave("c", 6, true)).toBe(true);
    expect(kinds(s.outbox())).toEqual(["member-leave:c", "member-reap:c"]);
    expect(s.forceLeave("nobody", 7)).toBe(false);
    expect(run(s, 0, 600_000).requests.filter((r) => r.type === "join")).toEqual([]);

    const peer = withMembers(["b"], {}, 3); // another member agrees once the intent arrives
    peer.handle(ev("failed", "b"), 0);
    peer.outbox();
    peer.handle(asUser(broadcasts(o)[0]!), 10);
    expect(kinds(peer.outbox())).toEqual(["member-leave:b"]);
  });

  test("a stale leave intent about ourselves is refuted with a join intent that restores alive elsewhere", () => {
    const old = new Serf(cfg("b"), seededRng(1), 0); // b's previous life
    old.handle(ev("join", "b"), 0);
    old.leave(0);
    const staleLeave = asUser(broadcasts(old.outbox())[0]!);

    const a = withMembers(["b"]);
    a.handle(staleLeave, 1);
    expect(a.member("b")?.status).toBe("leaving");

    const b = new Serf(cfg("b"), seededRng(2), 0); // restarted, alive
    b.handle(ev("join", "b"), 0);
    b.outbox();
    b.handle(staleLeave, 2);
    const bo = b.outbox();
    expect(b.member("b")?.status).toBe("alive");
    expect(bo.requests.some((r) => r.type === "leave")).toBe(false);
    const refute = broadcasts(bo);
    expect(refute.length).toBe(1);
    a.handle(asUser(refute[0]!), 3);
    expect(a.member("b")?.status).toBe("alive");
    a.handle(staleLeave, 4); // older than the refutation: ignored
    expect(a.member("b")?.status).toBe("alive");
  });

  test("a leave intent for a not-yet-known member applies when it joins", () => {
    const b = new Serf(cfg("b"), seededRng(2), 0);
    b.leave(0);
    const a = withMembers([]);
    a.handle(asUser(broadcasts(b.outbox())[0]!), 1);
    a.handle(ev("join", "b"), 2);
    expect(a.member("b")?.status).toBe("leaving");
  });

  test("user events: delivered locally, broadcast, deduplicated at receivers, size-limited", () => {
    const a = withMembers(["b"]);
    a.userEvent("deploy", Uint8Array.of(1, 2), 0);
    const ao = a.outbox();
    expect(ao.events).toEqual([{ type: "user", name: "deploy", payload: Uint8Array.of(1, 2), ltime: 1 }]);
    const msg = asUser(broadcasts(ao)[0]!);
    const b = withMembers(["a"], {}, 2);
    b.handle(msg, 1);
    b.handle(msg, 2);
    const bo = b.outbox();
    expect(kinds(bo)).toEqual(["user:deploy"]);
    expect(broadcasts(bo).length).toBe(1);
    a.userEvent("deploy", Uint8Array.of(1, 2), 3); // a new event with the same name is a new event
    b.handle(asUser(broadcasts(a.outbox())[0]!), 4);
    expect(kinds(b.outbox())).toEqual(["user:deploy"]);
    expect(() => a.userEvent("x", new Uint8Array(600), 5)).toThrow(RangeError);
    b.handle({ type: "user", key: "junk", payload: Uint8Array.of(9, 9) }, 6);
    expect(b.stats.badUserMessages).toBe(1);
    expect(b.outbox()).toEqual({ events: [], requests: [], queries: [] });
  });
});

describe("determinism and simulation", () => {
  const script = (seed: number) => {
    const s = withMembers(["b", "c", "d", "e"], {}, seed);
    for (const n of ["b", "c", "d"]) s.handle(ev("failed", n), 0);
    return JSON.stringify(run(s, 0, 1_000_000).requests);
  };

  test("same seed, same requests; the rng decides which failed member is tried", () => {
    expect(script(7)).toBe(script(7));
    const seeds = [1, 2, 3, 4, 5, 6].map(script);
    expect(new Set(seeds).size).toBeGreaterThan(1);
  });

  /** Three nodes over the simulated network, each with a Serf; `c` is cut off for `partitionMs`. */
  function partitionRun(executeJoins: boolean, partitionMs: number) {
    const sim = new GossipSim({ seed: 11, profile: LOCAL_PROFILE });
    const names = ["a", "b", "c"];
    const serfs = new Map<string, Serf>();
    const log: { at: number; node: string; ev: SerfEvent }[] = [];
    let reconnects = 0;
    const pump = (name: string) => {
      const s = serfs.get(name)!, ml = sim.node(name).ml;
      const out = s.outbox();
      for (const e of out.events) log.push({ at: sim.now, node: name, ev: e });
      for (const r of out.requests) {
        if (r.type === "join") { reconnects++; if (executeJoins) sim.join(name, r.addresses); }
        else if (r.type === "broadcast") ml.broadcastUser(r.key, r.payload);
        else if (r.type === "update-meta") ml.updateMeta(r.meta, sim.now);
        else sim.leave(name);
      }
    };
    for (const n of names) serfs.set(n, new Serf(cfg(n, { role: "node" }, { reconnectIntervalMs: 5000 }), seededRng(100 + n.charCodeAt(0)), 0));
    sim.onEvent((rec) => {
      serfs.get(rec.node)!.handle(rec.event, rec.at);
      sim.at(sim.now, () => pump(rec.node));
    });
    const tickAll = (): void => {
      for (const n of names) { serfs.get(n)!.tick(sim.now); pump(n); }
      sim.at(sim.now + 1000, tickAll);
    };
    for (const n of names) sim.addNode(n, serfs.get(n)!.localMeta);
    sim.at(1000, tickAll);
    sim.join("b", ["a"]);
    sim.join("c", ["a"]);
    sim.runFor(5000);
    const joined = serfs.get("a")!.members().map((m) => `${m.name}:${m.status}`);

    sim.blocked = (x, y) => (x === "c") !== (y === "c");
    const failedAt = sim.runUntilTrue(() => ["a", "b"].every((n) => serfs.get(n)!.member("c")?.status === "failed"), 60_000);
    sim.runFor(partitionMs); // longer than gossipToTheDeadTimeMs: the core stops talking to c by itself
    sim.blocked = () => false;
    const healedAt = sim.runUntilTrue(() => names.every((n) => names.every((m) => serfs.get(n)!.member(m)?.status === "alive")), 120_000);
    return { joined, failedAt, healedAt, reconnects, log };
  }

  test("a partitioned member is marked failed, then rejoined by reconnect after the partition heals", () => {
    const r = partitionRun(true, 40_000);
    expect(r.joined).toEqual(["a:alive", "b:alive", "c:alive"]);
    expect(r.failedAt).toBeDefined();
    expect(r.healedAt).toBeDefined();
    expect(r.reconnects).toBeGreaterThan(0);
    expect(r.log.some((l) => l.node === "a" && l.ev.type === "member-join" && l.ev.member.name === "c" && l.at > r.failedAt!)).toBe(true);
    expect(r.log.some((l) => l.node === "c" && l.ev.type === "member-join" && l.ev.member.name === "a" && l.at > r.failedAt!)).toBe(true);
  });

  test("control: without executing the reconnect requests the long partition never heals", () => {
    const r = partitionRun(false, 40_000);
    expect(r.failedAt).toBeDefined();
    expect(r.reconnects).toBeGreaterThan(0);
    expect(r.healedAt).toBeUndefined();
  });
});
