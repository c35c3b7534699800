import { describe, expect, test } from "bun:test";
import { seededRng } from "../platform/index.ts";
import { coordinate, encodeCoordinatePayload, newCoordinate, COORDINATE_DEFAULTS } from "./coordinate.ts";
import { SERF_DEFAULTS, Serf } from "./serf.ts";
import { SerfCoordinates } from "./serf_coordinates.ts";
import { serfStatsOf } from "./pool.ts";
import { encodeTags } from "./tags.ts";
import type { Member } from "./types.ts";

const peer = coordinate([0.01, 0, 0, 0, 0, 0, 0, 0], 0.2, 0, 1e-5);

describe("SerfCoordinates (serf's ping delegate and coordinate cache)", () => {
  test("caches itself at the origin, and the peer's coordinate and ours after each ping", () => {
    const c = new SerfCoordinates("a", seededRng(1));
    expect(c.cached("a")).toEqual(newCoordinate(COORDINATE_DEFAULTS));
    expect(c.cached("b")).toBeUndefined();
    const before = c.ackPayload();
    c.notifyPingComplete("b", 20, encodeCoordinatePayload(peer));
    expect(c.cached("b")).toEqual(peer);
    expect(c.cached("a")).toBe(c.local());
    expect(c.local()).not.toEqual(newCoordinate(COORDINATE_DEFAULTS));
    expect(c.ackPayload()).not.toEqual(before); // the payload follows the moved coordinate
    expect(c.ackPayload()).toEqual(encodeCoordinatePayload(c.local()));
    expect([...c.all().keys()]).toEqual(["a", "b"]);
    expect(c.stats()).toEqual({ resets: 0, updates: 1, rejected: 0, badPayloads: 0, withoutPayload: 0 });
  });

  test("plain acks, bad payloads and rejected observations change nothing and are counted", () => {
    const c = new SerfCoordinates("a", seededRng(1));
    const start = c.local();
    c.notifyPingComplete("b", 20, new Uint8Array(0));
    c.notifyPingComplete("b", 20, Uint8Array.of(2, 0)); // another ping version
    c.notifyPingComplete("b", 20, encodeCoordinatePayload(peer).subarray(0, 50));
    c.notifyPingComplete("b", 20, encodeCoordinatePayload(coordinate([NaN, 0, 0, 0, 0, 0, 0, 0], 1, 0, 0)));
    c.notifyPingComplete("b", 20, encodeCoordinatePayload(coordinate([0, 0, 0], 1, 0, 0))); // 3 dimensions
    c.notifyPingComplete("b", 20_000, encodeCoordinatePayload(peer)); // over 10 s
    expect(c.local()).toBe(start);
    expect(c.cached("b")).toBeUndefined();
    expect(c.stats()).toEqual({ resets: 0, updates: 0, rejected: 3, badPayloads: 2, withoutPayload: 1 });
  });

  test("forget drops a peer but never ourselves", () => {
    const c = new SerfCoordinates("a", seededRng(1));
    c.notifyPingComplete("b", 20, encodeCoordinatePayload(peer));
    c.forget("b");
    c.forget("a");
    expect(c.cached("b")).toBeUndefined();
    expect(c.cached("a")).toBeDefined();
  });
});

const member = (name: string, state: Member["state"] = "alive"): Member => ({ name, addr: `${name}:1`, meta: encodeTags({}), incarnation: 1, state, stateChange: 0 });

describe("Serf with coordinates", () => {
  test("on by default: the ping delegate feeds the cache; a reaped member's coordinate is forgotten", () => {
    const s = new Serf({ ...SERF_DEFAULTS, name: "a", tags: {} }, seededRng(1), 0);
    expect(s.pingDelegate).toBeDefined();
    s.handle({ type: "join", member: member("a") }, 0);
    s.handle({ type: "join", member: member("b") }, 0);
    s.pingDelegate!.notifyPingComplete("b", 20, encodeCoordinatePayload(peer));
    expect(s.cachedCoordinate("b")).toEqual(peer);
    expect(s.cachedCoordinate("a")).toBe(s.coordinate()!);
    expect(s.stats.coordinates?.updates).toBe(1);

    s.handle({ type: "failed", member: member("b", "dead") }, 10);
    expect(s.cachedCoordinate("b")).toEqual(peer); // failed members keep it until reaped
    s.tick(10 + SERF_DEFAULTS.reconnectTimeoutMs + 1);
    expect(s.outbox().events.map((e) => e.type)).toContain("member-reap");
    expect(s.cachedCoordinate("b")).toBeUndefined();
    expect([...s.cachedCoordinates().keys()]).toEqual(["a"]);
  });

  test("force-leave with prune forgets at once", () => {
    const s = new Serf({ ...SERF_DEFAULTS, name: "a", tags: {} }, seededRng(1), 0);
    s.handle({ type: "join", member: member("a") }, 0);
    s.handle({ type: "join", member: member("b") }, 0);
    s.pingDelegate!.notifyPingComplete("b", 20, encodeCoordinatePayload(peer));
    s.handle({ type: "failed", member: member("b", "dead") }, 10);
    s.forceLeave("b", 11, true);
    expect(s.cachedCoordinate("b")).toBeUndefined();
  });

  test("disableCoordinates: no delegate, no coordinate, no stats entry", () => {
    const s = new Serf({ ...SERF_DEFAULTS, disableCoordinates: true, name: "a", tags: {} }, seededRng(1), 0);
    expect(s.pingDelegate).toBeUndefined();
    expect(s.coordinate()).toBeUndefined();
    expect(s.cachedCoordinate("a")).toBeUndefined();
    expect(s.cachedCoordinates().size).toBe(0);
    expect(s.stats.coordinates).toBeUndefined();
  });

  test("serfStatsOf reports coordinate_resets only with coordinates on", () => {
    const base = { members: { alive: 1, leaving: 0, left: 0, failed: 0 }, gossip: {} as never, healthScore: 0, encrypted: false, reconnectsOk: 0, reconnectsFailed: 0 };
    const on = new Serf({ ...SERF_DEFAULTS, name: "a", tags: {} }, seededRng(1), 0);
    const off = new Serf({ ...SERF_DEFAULTS, disableCoordinates: true, name: "a", tags: {} }, seededRng(1), 0);
    expect(serfStatsOf({ ...base, serf: on.stats }).coordinate_resets).toBe("0");
    expect("coordinate_resets" in serfStatsOf({ ...base, serf: off.stats })).toBe(false);
  });
});
