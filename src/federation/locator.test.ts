import { describe, expect, test } from "bun:test";
import { check, gateway, state } from "../model/federation_state_fixtures.test.ts";
import type { FederationState } from "../model/index.ts";
import { seededRng } from "../platform/index.ts";
import { GatewayLocator, noPathMessage, type LocatorEvent } from "./locator.ts";

/** A wanfed gateway of `dc` with LAN address `lan` and WAN address `wan` (both port 443 / 8443). */
const gw = (dc: string, name: string, lan: string, wan: string, more: { meta?: Record<string, string>; status?: "passing" | "warning" | "critical" } = {}) =>
  gateway(
    { Node: name, Datacenter: dc, Address: lan, TaggedAddresses: { lan, wan } },
    { ID: name, Address: lan, Port: 8443, TaggedAddresses: { lan: { Address: lan, Port: 8443 }, wan: { Address: wan, Port: 443 } }, Meta: more.meta ?? { "consul-wan-federation": "1" } },
    [check({ Node: name, Status: more.status ?? "passing" })],
  );
const fs = (dc: string, ...gws: ReturnType<typeof gw>[]): FederationState => state({ Datacenter: dc, MeshGateways: gws });

/** dc1 is the primary (gateways 1.1.1.x), dc2 a secondary (2.2.2.x), dc3 another secondary. */
const DC1 = fs("dc1", gw("dc1", "p1", "10.1.0.1", "1.1.1.1"), gw("dc1", "p2", "10.1.0.2", "1.1.1.2"));
const DC2 = fs("dc2", gw("dc2", "s1", "10.2.0.1", "2.2.2.1"), gw("dc2", "s2", "10.2.0.2", "2.2.2.2"));
const DC3 = fs("dc3", gw("dc3", "t1", "10.3.0.1", "3.3.3.1"));
const ALL = [DC1, DC2, DC3];
const P = ["1.1.1.1:443", "1.1.1.2:443"]; // primary gateways by WAN address
const L2 = ["10.2.0.1:8443", "10.2.0.2:8443"]; // dc2's own gateways by LAN address
const FALLBACK = ["7.7.7.7:443", "8.8.8.8:443"];

type Step =
  | { readonly states: readonly FederationState[] }
  | { readonly fallback: readonly string[] }
  | { readonly repl: readonly ("ok" | "error")[] }
  | { readonly leader: boolean };

interface Row {
  readonly name: string;
  readonly localDc: string;
  readonly disableFallback?: boolean;
  readonly steps: readonly Step[];
  /** Expected candidates per target datacenter. */
  readonly want: Readonly<Record<string, readonly string[]>>;
  readonly throughLocal: boolean;
}

function run(localDc: string, steps: readonly Step[], disableFallback = false): { loc: GatewayLocator; events: LocatorEvent[] } {
  const loc = new GatewayLocator({ localDc, primaryDc: "dc1", disablePrimaryGatewayFallback: disableFallback }, 0);
  const events: LocatorEvent[] = [];
  let now = 0;
  for (const s of steps) {
    now += 1000;
    if ("states" in s) events.push(...loc.setFederationStates(s.states));
    else if ("fallback" in s) events.push(...loc.setFallbackAddresses(s.fallback));
    else if ("leader" in s) events.push(...loc.setLeader(s.leader, now));
    else for (const r of s.repl) events.push(...loc.replicationResult(r, (now += 1)));
  }
  return { loc, events };
}

const leader = { leader: true } as const;
const states = { states: ALL } as const;
const fallback = { fallback: FALLBACK } as const;
const UNION = [...P, ...FALLBACK];

const ROWS: readonly Row[] = [
  { name: "primary, no data yet: nothing for any datacenter", localDc: "dc1", steps: [], want: { dc1: [], dc2: [] }, throughLocal: false },
  { name: "primary, populated with no states: still nothing", localDc: "dc1", steps: [{ states: [] }], want: { dc1: [], dc2: [] }, throughLocal: false },
  {
    name: "primary with data: the primary target by its own WAN addresses, other datacenters through its gateways' LAN addresses",
    localDc: "dc1", steps: [leader, states], want: { dc1: P, dc2: ["10.1.0.1:8443", "10.1.0.2:8443"], dc3: ["10.1.0.1:8443", "10.1.0.2:8443"] }, throughLocal: false,
  },
  {
    name: "primary: the replication signal and the fallback play no part (dialPrimaryThroughLocalGateway false)",
    localDc: "dc1", steps: [leader, fallback, states, { repl: ["error", "error", "error"] }], want: { dc1: P }, throughLocal: false,
  },
  { name: "#9342: a secondary's new leader trusts its local gateways before any replication round", localDc: "dc2", steps: [leader], want: { dc1: [] }, throughLocal: true },
  { name: "#9342: nothing is picked before federation states were read, fallback or not", localDc: "dc2", steps: [leader, fallback], want: { dc1: [], dc3: [] }, throughLocal: true },
  {
    name: "#9342: populated with no states: the leader (trusting local, but none) reaches the primary by the fallback",
    localDc: "dc2", steps: [leader, fallback, { states: [] }], want: { dc1: FALLBACK, dc3: [] }, throughLocal: true,
  },
  {
    name: "#9341/#9366: a follower with the fallback only: fallback for the primary, nothing for others",
    localDc: "dc2", steps: [fallback, { states: [] }], want: { dc1: FALLBACK, dc3: [] }, throughLocal: true,
  },
  { name: "#9341/#9366: a follower with data reaches the primary through local gateways", localDc: "dc2", steps: [fallback, states], want: { dc1: L2, dc3: L2 }, throughLocal: true },
  {
    name: "#9341/#9366: a follower ignores replication failures (it has no signal) and keeps local gateways",
    localDc: "dc2", steps: [fallback, states, { repl: ["error", "error", "error", "error"] }], want: { dc1: L2 }, throughLocal: true,
  },
  {
    name: "#9366: a leader that steps down after failures goes back to local gateways",
    localDc: "dc2", steps: [leader, fallback, states, { repl: ["error", "error", "error"] }, { leader: false }], want: { dc1: L2 }, throughLocal: true,
  },
  {
    name: "#9366: regaining leadership restarts from a success",
    localDc: "dc2", steps: [leader, fallback, states, { repl: ["error", "error", "error"] }, leader], want: { dc1: L2 }, throughLocal: true,
  },
  { name: "secondary leader, replication ok: local gateways", localDc: "dc2", steps: [leader, fallback, states, { repl: ["ok"] }], want: { dc1: L2, dc3: L2 }, throughLocal: true },
  {
    name: "secondary leader, ok then 2 failures: still local gateways (fewer than 3)",
    localDc: "dc2", steps: [leader, fallback, states, { repl: ["ok", "error", "error"] }], want: { dc1: L2 }, throughLocal: true,
  },
  {
    name: "#7931: secondary leader, ok then 3 failures: the union of replicated primary gateways and the fallback",
    localDc: "dc2", steps: [leader, fallback, states, { repl: ["ok", "error", "error", "error"] }], want: { dc1: UNION, dc3: L2 }, throughLocal: false,
  },
  {
    name: "secondary leader, 3 failures then ok: local gateways again",
    localDc: "dc2", steps: [leader, fallback, states, { repl: ["error", "error", "error", "ok"] }], want: { dc1: L2 }, throughLocal: true,
  },
  {
    name: "#7339/#7931: stale replicated primary addresses (gateways rotated away) do not hide the configured fallback",
    localDc: "dc2",
    steps: [leader, { fallback: ["1.1.1.2:443", "9.9.9.9:443"] }, states, { repl: ["error", "error", "error"] }],
    want: { dc1: ["1.1.1.1:443", "1.1.1.2:443", "9.9.9.9:443"] }, throughLocal: false,
  },
  {
    name: "#15032: rotating primary gateways, after replication: the new replicated addresses replace the old ones; the fallback stays",
    localDc: "dc2",
    steps: [leader, fallback, states, { repl: ["error", "error", "error"] }, { states: [fs("dc1", gw("dc1", "p9", "10.1.0.9", "1.1.1.9")), DC2] }],
    want: { dc1: ["1.1.1.9:443", ...FALLBACK] }, throughLocal: false,
  },
  {
    name: "#15032: rotating primary gateways, before replication: the old replicated addresses stay candidates beside the fallback",
    localDc: "dc2", steps: [leader, states, { fallback: ["1.1.1.9:443"] }, { repl: ["error", "error", "error"] }],
    want: { dc1: [...P, "1.1.1.9:443"] }, throughLocal: false,
  },
  {
    name: "secondary leader dialling directly: other datacenters are still reached through local gateways only",
    localDc: "dc2", steps: [leader, fallback, states, { repl: ["error", "error", "error"] }], want: { dc3: L2, dc4: L2 }, throughLocal: false,
  },
  {
    name: "secondary without local gateways (not registered yet): the leader trusting local falls through to the union",
    localDc: "dc2", steps: [leader, fallback, { states: [DC1, DC3] }], want: { dc1: UNION, dc3: [] }, throughLocal: true,
  },
  {
    name: "#9637 disable_primary_gateway_fallback: 3 failures, the leader still goes through local gateways",
    localDc: "dc2", disableFallback: true, steps: [leader, fallback, states, { repl: ["error", "error", "error"] }], want: { dc1: L2 }, throughLocal: true,
  },
  {
    name: "#9637 disable_primary_gateway_fallback: no local gateways means no path, never direct",
    localDc: "dc2", disableFallback: true, steps: [leader, fallback, { states: [DC1] }], want: { dc1: [], dc3: [] }, throughLocal: true,
  },
  {
    name: "#10139/#9199: local gateways without the wanfed meta are not candidates",
    localDc: "dc2", steps: [{ states: [DC1, fs("dc2", gw("dc2", "s1", "10.2.0.1", "2.2.2.1", { meta: {} }))] }], want: { dc3: [] }, throughLocal: true,
  },
  {
    name: "#10139: a critical local gateway is dropped, a warning one kept",
    localDc: "dc2",
    steps: [{ states: [DC1, fs("dc2", gw("dc2", "s1", "10.2.0.1", "2.2.2.1", { status: "critical" }), gw("dc2", "s2", "10.2.0.2", "2.2.2.2", { status: "warning" }))] }],
    want: { dc3: ["10.2.0.2:8443"] }, throughLocal: true,
  },
  {
    name: "#10139: a critical primary gateway is dropped from the direct candidates",
    localDc: "dc2",
    steps: [leader, { repl: ["error", "error", "error"] }, { states: [fs("dc1", gw("dc1", "p1", "10.1.0.1", "1.1.1.1", { status: "critical" }), gw("dc1", "p2", "10.1.0.2", "1.1.1.2"))] }],
    want: { dc1: ["1.1.1.2:443"] }, throughLocal: false,
  },
  {
    name: "IPv6 gateway addresses are bracketed and sorted",
    localDc: "dc2",
    steps: [{ states: [fs("dc2", gw("dc2", "s1", "fd00::2", "2001:db8::2"), gw("dc2", "s2", "10.2.0.1", "2.2.2.1"))] }],
    want: { dc3: ["10.2.0.1:8443", "[fd00::2]:8443"] }, throughLocal: true,
  },
];

describe("gateway locator table", () => {
  for (const row of ROWS) {
    test(row.name, () => {
      const { loc } = run(row.localDc, row.steps, row.disableFallback);
      for (const [dc, want] of Object.entries(row.want)) expect({ dc, got: loc.candidates(dc) }).toEqual({ dc, got: want });
      expect(loc.dialPrimaryThroughLocalGateway()).toBe(row.throughLocal);
    });
  }
});

describe("pick", () => {
  test("a uniformly random candidate from a seeded rng, every candidate reachable", () => {
    const seed = 1234;
    const { loc } = run("dc2", [leader, fallback, states, { repl: ["error", "error", "error"] }]);
    const rng = seededRng(seed);
    const seen = new Map<string, number>();
    for (let i = 0; i < 400; i++) {
      const p = loc.pick("dc1", rng);
      if (!p.ok) throw new Error(`seed ${seed}: no path`);
      seen.set(p.address, (seen.get(p.address) ?? 0) + 1);
    }
    expect([...seen.keys()].sort()).toEqual(UNION);
    for (const [addr, n] of seen) expect({ addr, fair: n > 50 }).toEqual({ addr, fair: true });
  });

  test("a single candidate needs no draw", () => {
    const { loc } = run("dc2", [{ states: [fs("dc2", gw("dc2", "s1", "10.2.0.1", "2.2.2.1"))] }]);
    const rng = { next: () => { throw new Error("drawn"); }, int: () => { throw new Error("drawn"); }, bytes: () => new Uint8Array() };
    expect(loc.pick("dc3", rng)).toEqual({ ok: true, address: "10.2.0.1:8443" });
  });

  test("#9342: before federation states are read: no path, reason not-populated, the operator message", () => {
    const { loc } = run("dc2", [fallback]);
    expect(loc.pick("dc1", seededRng(1))).toEqual({ ok: false, datacenter: "dc1", reason: "not-populated", message: "no path to datacenter dc1: no healthy mesh gateway" });
  });

  test("#10139: populated but no healthy gateway: no path, reason no-gateway", () => {
    const { loc } = run("dc2", [{ states: [DC1] }]);
    expect(loc.pick("dc3", seededRng(1))).toEqual({ ok: false, datacenter: "dc3", reason: "no-gateway", message: noPathMessage("dc3") });
  });
});

describe("events", () => {
  const types = (events: readonly LocatorEvent[]) => events.map((e) => e.type);

  test("#6884: primary-gateways-ready fires once, when a federation state first gives primary gateways", () => {
    const loc = new GatewayLocator({ localDc: "dc2", primaryDc: "dc1" }, 0);
    expect(types(loc.setFallbackAddresses(FALLBACK))).toEqual(["fallback-changed"]); // the fallback is not "known"
    expect(loc.primaryGatewaysKnown).toBe(false);
    expect(types(loc.setFederationStates([DC2]))).toContain("gateways-changed");
    expect(loc.primaryGatewaysKnown).toBe(false);
    expect(types(loc.setFederationStates(ALL))).toEqual(["gateways-changed", "primary-gateways-ready"]);
    expect(loc.primaryGatewaysKnown).toBe(true);
    expect(types(loc.setFederationStates([DC2]))).toEqual(["gateways-changed"]);
    expect(types(loc.setFederationStates(ALL))).toEqual(["gateways-changed"]);
    expect(loc.primaryGatewaysKnown).toBe(true);
  });

  test("#9519: federation-states-present fires once, on the first non-empty list", () => {
    const loc = new GatewayLocator({ localDc: "dc1", primaryDc: "dc1" }, 0);
    expect(types(loc.setFederationStates([]))).toEqual([]);
    expect(types(loc.setFederationStates([DC2]))).toEqual(["federation-states-present"]); // dc2 changes no list of dc1
    expect(types(loc.setFederationStates([DC2, DC3]))).toEqual([]);
  });

  test("gateways-changed carries the new lists, and only fires on a change", () => {
    const loc = new GatewayLocator({ localDc: "dc2", primaryDc: "dc1" }, 0);
    const ev = loc.setFederationStates(ALL).find((e) => e.type === "gateways-changed");
    expect(ev).toEqual({ type: "gateways-changed", primary: P, local: L2 });
    expect(loc.setFederationStates([DC3, DC2, DC1])).toEqual([]);
    expect(loc.setFallbackAddresses([...FALLBACK].reverse())).toEqual([{ type: "fallback-changed", addresses: FALLBACK }]);
    expect(loc.setFallbackAddresses(FALLBACK)).toEqual([]);
  });

  test("#7931: primary-route-changed reports direct fallback -> local gateways -> direct", () => {
    const loc = new GatewayLocator({ localDc: "dc2", primaryDc: "dc1" }, 0);
    loc.setLeader(true, 1);
    loc.setFallbackAddresses(FALLBACK);
    expect(loc.setFederationStates([DC1])).toContainEqual({ type: "primary-route-changed", route: "direct" });
    expect(loc.setFederationStates(ALL)).toContainEqual({ type: "primary-route-changed", route: "local-gateways" });
    expect(loc.replicationResult("error", 2)).toEqual([]);
    expect(loc.replicationResult("error", 3)).toEqual([]);
    expect(loc.replicationResult("error", 4)).toEqual([{ type: "primary-route-changed", route: "direct" }]);
    expect(loc.status()).toMatchObject({ consecutiveFailures: 3, lastFailureAt: 4, lastSuccessAt: 1, primaryRoute: "direct" });
    expect(loc.replicationResult("ok", 5)).toEqual([{ type: "primary-route-changed", route: "local-gateways" }]);
  });

  test("the primary reports no route changes", () => {
    const { events } = run("dc1", [leader, states, { states: [] }]);
    expect(types(events)).not.toContain("primary-route-changed");
  });
});

test("the constructor refuses empty datacenter names", () => {
  expect(() => new GatewayLocator({ localDc: "", primaryDc: "dc1" }, 0)).toThrow(RangeError);
  expect(() => new GatewayLocator({ localDc: "dc1", primaryDc: "" }, 0)).toThrow(RangeError);
});

test("#9342: construction records a replication success at the given time (startup is not a failure)", () => {
  const loc = new GatewayLocator({ localDc: "dc2", primaryDc: "dc1" }, 5);
  expect(loc.status()).toMatchObject({ lastSuccessAt: 5, lastFailureAt: undefined, consecutiveFailures: 0, useReplicationSignal: false, populated: false, primaryRoute: "none" });
  loc.setLeader(true, 9);
  expect(loc.status()).toMatchObject({ lastSuccessAt: 9, useReplicationSignal: true });
  expect(loc.dialPrimaryThroughLocalGateway()).toBe(true);
});
