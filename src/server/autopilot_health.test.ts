import { describe, expect, test } from "bun:test";
import { AUTOPILOT_DEFAULTS } from "../model/index.ts";
import {
  canRemoveServers, computeClusterHealth, failureTolerance, isServerHealthy, isServerStable,
  type GossipServer, type HealthInputs, type RaftServerStats, type TrackedServerHealth,
} from "./autopilot_health.ts";

const conf = { LastContactThresholdMs: 200, MaxTrailingLogs: 250 };
const ok = { serfStatus: "alive", lastContactMs: 10, lastTerm: 5, lastIndex: 1000 };

describe("isServerHealthy (Consul's ServerHealth.IsHealthy)", () => {
  const cases: [string, Partial<typeof ok> & { lastContactMs?: number | undefined }, boolean][] = [
    ["alive, recent contact, same term, caught up", {}, true],
    ["contact exactly at the threshold", { lastContactMs: 200 }, true],
    ["contact past the threshold", { lastContactMs: 201 }, false],
    ["contact unknown (never heard from)", { lastContactMs: undefined }, false],
    ["negative contact (Consul's -1)", { lastContactMs: -1 }, false],
    ["serf failed", { serfStatus: "failed" }, false],
    ["serf leaving", { serfStatus: "leaving" }, false],
    ["serf none (not in gossip)", { serfStatus: "none" }, false],
    ["older last log term", { lastTerm: 4 }, false],
    ["exactly MaxTrailingLogs behind", { lastIndex: 750 }, true],
    ["one more than MaxTrailingLogs behind", { lastIndex: 749 }, false],
  ];
  for (const [name, over, want] of cases) {
    test(name, () => expect(isServerHealthy({ ...ok, ...over }, 5, 1000, conf)).toBe(want));
  }
  test("a leader whose log is shorter than MaxTrailingLogs never counts anyone as trailing", () => {
    expect(isServerHealthy({ ...ok, lastIndex: 0 }, 5, 250, conf)).toBe(true);
    expect(isServerHealthy({ ...ok, lastIndex: 0 }, 5, 251, conf)).toBe(false);
  });
});

describe("failureTolerance and canRemoveServers", () => {
  const tolerance: [number, number, number][] = [[1, 1, 0], [3, 3, 1], [3, 2, 0], [3, 1, 0], [5, 5, 2], [5, 4, 1], [4, 4, 1], [0, 0, 0]];
  for (const [voters, healthy, want] of tolerance) {
    test(`${healthy} healthy of ${voters} voters tolerate ${want}`, () => expect(failureTolerance(voters, healthy)).toBe(want));
  }
  test("dead servers are removed only as a minority and never below MinQuorum", () => {
    expect(canRemoveServers(3, 0, 1).ok).toBe(true);
    expect(canRemoveServers(3, 0, 2)).toEqual({ ok: false, reason: "denied, because removing the majority of servers 2/3 is not safe" });
    expect(canRemoveServers(5, 0, 2).ok).toBe(true);
    expect(canRemoveServers(5, 4, 2)).toEqual({ ok: false, reason: "denied, because removing 2/5 servers would leave less then minimal allowed quorum of 4 servers" });
    expect(canRemoveServers(5, 3, 2).ok).toBe(true);
  });
});

function inputs(over: Partial<HealthInputs> & { g?: Record<string, GossipServer>; s?: Record<string, RaftServerStats> } = {}): HealthInputs {
  const g: Record<string, GossipServer> = over.g ?? {
    a: { name: "s-a", status: "alive", version: "0.1.0" },
    b: { name: "s-b", status: "alive", version: "0.1.0" },
    c: { name: "s-c", status: "alive", version: "0.1.0" },
  };
  const s: Record<string, RaftServerStats> = over.s ?? {
    a: { lastContactMs: 0, lastTerm: 2, lastIndex: 100 },
    b: { lastContactMs: 30, lastTerm: 2, lastIndex: 100 },
    c: { lastContactMs: 40, lastTerm: 2, lastIndex: 99 },
  };
  return {
    config: conf,
    voters: ["a", "b", "c"],
    learners: [],
    leaderId: "a",
    leaderLastIndex: 100,
    leaderLastTerm: 2,
    addressOf: (id) => `10.0.0.${id}:8300`,
    gossip: (id) => g[id],
    stats: (id) => s[id],
    previous: undefined,
    nowMono: 50_000,
    nowWall: 1_700_000_000_000,
    ...over,
  };
}

describe("computeClusterHealth (Consul's updateClusterHealth)", () => {
  test("three healthy voters: healthy, failure tolerance 1, one entry per server", () => {
    const h = computeClusterHealth(inputs());
    expect(h.healthy).toBe(true);
    expect(h.failureTolerance).toBe(1);
    expect(h.servers.map((x) => [x.id, x.name, x.address, x.leader, x.voter, x.healthy, x.serfStatus])).toEqual([
      ["a", "s-a", "10.0.0.a:8300", true, true, true, "alive"],
      ["b", "s-b", "10.0.0.b:8300", false, true, true, "alive"],
      ["c", "s-c", "10.0.0.c:8300", false, true, true, "alive"],
    ]);
    expect(h.servers.every((x) => x.stableSinceMs === 1_700_000_000_000 && x.stableSinceMono === 50_000)).toBe(true);
  });

  test("a failed server: unhealthy cluster, failure tolerance 0; a server gossip does not show is 'none' with no stats", () => {
    const h = computeClusterHealth(inputs({
      g: { a: { name: "s-a", status: "alive", version: "0.1.0" }, b: { name: "s-b", status: "failed", version: "0.1.0" } },
    }));
    expect(h.healthy).toBe(false);
    expect(h.failureTolerance).toBe(0);
    expect(h.servers[1]).toMatchObject({ id: "b", serfStatus: "failed", healthy: false });
    expect(h.servers[2]).toEqual({
      id: "c", name: "", address: "10.0.0.c:8300", leader: false, voter: true, serfStatus: "none", version: "", healthy: false,
      lastContactMs: undefined, lastTerm: 0, lastIndex: 0, stableSinceMs: undefined, stableSinceMono: undefined,
    });
  });

  test("a learner counts for Healthy but not for the failure tolerance", () => {
    const h = computeClusterHealth(inputs({
      voters: ["a", "b"], learners: ["c"],
    }));
    expect(h.healthy).toBe(true);
    expect(h.failureTolerance).toBe(0);
    expect(h.servers.map((x) => x.voter)).toEqual([true, true, false]);
  });

  test("StableSince carries over while health holds and restarts when it changes", () => {
    const first = computeClusterHealth(inputs());
    const later = computeClusterHealth(inputs({
      previous: first, nowMono: 60_000, nowWall: 1_700_000_010_000,
      s: { a: { lastContactMs: 0, lastTerm: 2, lastIndex: 100 }, b: { lastContactMs: 30, lastTerm: 2, lastIndex: 100 }, c: { lastContactMs: 900, lastTerm: 2, lastIndex: 100 } },
    }));
    expect(later.servers.map((x) => x.stableSinceMono)).toEqual([50_000, 50_000, 60_000]);
    expect(later.servers[2]!.stableSinceMs).toBe(1_700_000_010_000);
    expect(later.servers[2]!.healthy).toBe(false);
    expect(later.failureTolerance).toBe(0);
  });

  test("isServerStable: healthy for at least ServerStabilizationTime", () => {
    const h = computeClusterHealth(inputs()).servers[1] as TrackedServerHealth;
    const c = { ServerStabilizationTimeMs: AUTOPILOT_DEFAULTS.ServerStabilizationTimeMs };
    expect(isServerStable(h, 50_000 + 9_999, c)).toBe(false);
    expect(isServerStable(h, 60_000, c)).toBe(true);
    expect(isServerStable({ ...h, healthy: false }, 90_000, c)).toBe(false);
    expect(isServerStable(undefined, 90_000, c)).toBe(false);
  });
});
