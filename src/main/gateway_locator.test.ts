/**
 * The locator's run-time loop over fakes and a simulated clock: the primary_gateways fallback is
 * resolved and refreshed until the primary's gateways arrive in a federation state, path changes are
 * logged, a failed read is retried with back-off, and close stops everything (aborting the read in flight).
 */
import { describe, expect, test } from "bun:test";
import type { FederationState } from "../model/index.ts";
import { memoryLogger, seededRng } from "../platform/index.ts";
import { simClock } from "../../test/harness/sim_clock.ts";
import { gateway, state } from "../model/federation_state_fixtures.test.ts";
import { startGatewayLocator } from "./gateway_locator.ts";
import { MetricsRegistry } from "../telemetry/index.ts";

const flush = async () => {
  for (let i = 0; i < 20; i++) await Promise.resolve();
};

function setup(primaryGateways: readonly string[] = ["gw.dc1.example:443"]) {
  const clock = simClock();
  const metrics = new MetricsRegistry({ now: () => clock.now() });
  let pathChanges = 0;
  const logger = memoryLogger("info");
  const reads: ((r: { states: readonly FederationState[]; index: number } | Error) => void)[] = [];
  const signals: AbortSignal[] = [];
  let resolves = 0;
  const rt = startGatewayLocator({
    localDc: "dc2", primaryDc: "dc1", disablePrimaryGatewayFallback: false, primaryGateways, primaryGatewaysIntervalMs: 30_000,
    readStates: (_minIndex, _maxWaitMs, signal) => {
      signals.push(signal);
      return new Promise((resolve, reject) => reads.push((r) => (r instanceof Error ? reject(r) : resolve(r))));
    },
    resolve: async (host) => (resolves++, host === "gw.dc1.example" ? ["198.18.1.1", "198.18.1.2"] : []),
    clock, rng: seededRng(1), logger, onPathChange: () => pathChanges++, metrics,
  });
  const answer = async (r: { states: readonly FederationState[]; index: number } | Error) => {
    await flush();
    reads.shift()!(r);
    await flush();
  };
  /** The locator's gauges as `name{label}` -> value. */
  const gauges = () => Object.fromEntries(metrics.series().map((x) => [`${x.name.replace("consul.federation.locator.", "")}${x.labels.map(([, v]) => `{${v}}`).join("")}`, x.value]));
  return { rt, clock, logger, answer, reads, signals, resolves: () => resolves, pathChanges: () => pathChanges, gauges };
}

describe("gateway locator at run time", () => {
  test("a secondary reaches the primary through the resolved primary_gateways until the primary's gateways replicate", async () => {
    const { rt, clock, logger, answer, resolves, pathChanges, gauges } = setup();
    // Not populated before the first read: no path yet.
    expect(rt.pick("dc1")).toMatchObject({ ok: false, reason: "not-populated" });
    await answer({ states: [], index: 3 });
    // The fallback resolved and the path appeared (connections made before, if any, go).
    const afterFallback = pathChanges();
    expect(afterFallback).toBeGreaterThan(0);
    expect(["198.18.1.1:443", "198.18.1.2:443"]).toContain((rt.pick("dc1") as { address: string }).address);
    expect(logger.lines.some((l) => l.includes("primary_gateways resolved") && l.includes("198.18.1.1:443,198.18.1.2:443"))).toBe(true);
    expect(gauges()).toMatchObject({ "primary_route{direct}": 1, "primary_route{none}": 0, "gateways{fallback}": 2, "gateways{primary}": 0 });
    clock.advance(30_000);
    await flush();
    expect(resolves()).toBe(2);
    // The primary's wanfed gateway replicates: the refresher stops, the path is logged.
    const primary = state({ Datacenter: "dc1", MeshGateways: [gateway({ Datacenter: "dc1" }, { TaggedAddresses: { wan: { Address: "198.18.9.9", Port: 443 } } })] });
    await answer({ states: [primary], index: 4 });
    const afterReplication = pathChanges();
    expect(afterReplication).toBeGreaterThan(afterFallback);
    // The same states again change nothing: the connections stay.
    clock.advance(0);
    await answer({ states: [primary], index: 5 });
    expect(pathChanges()).toBe(afterReplication);
    expect(logger.lines.some((l) => l.includes("no longer refreshing primary_gateways"))).toBe(true);
    expect(logger.lines.some((l) => l.includes("mesh gateway locations changed") && l.includes("198.18.9.9:443"))).toBe(true);
    expect(gauges()).toMatchObject({ "primary_route{direct}": 1, "gateways{primary}": 1, "failures": 0 });
    clock.advance(60_000);
    await flush();
    expect(resolves()).toBe(2);
    // Another datacenter: only through local gateways, and there are none.
    expect(rt.pick("dc3")).toMatchObject({ ok: false, message: "no path to datacenter dc3: no healthy mesh gateway" });
    rt.close();
  });

  test("a failed read is retried with back-off; close stops the loop", async () => {
    const { rt, clock, answer, reads } = setup([]);
    await answer(new Error("No cluster leader"));
    expect(reads).toHaveLength(0);
    clock.advance(999);
    await flush();
    expect(reads).toHaveLength(0);
    clock.advance(1);
    await flush();
    expect(reads).toHaveLength(1);
    await answer(new Error("again"));
    clock.advance(2_000);
    await flush();
    expect(reads).toHaveLength(1);
    rt.close();
    await answer({ states: [], index: 1 });
    expect(rt.pick("dc1")).toMatchObject({ ok: false, reason: "not-populated" });
  });

  test("close aborts the read in flight; its rejection is not retried and no timer is left", async () => {
    const { rt, clock, logger, answer, reads, signals } = setup([]);
    await answer({ states: [], index: 3 });
    clock.advance(0);
    await answer({ states: [], index: 4 });
    clock.advance(0);
    await Promise.resolve();
    expect([reads.length, signals.length, signals.map((s) => s.aborted)]).toEqual([1, 3, [false, false, false]]);
    logger.lines.length = 0;
    rt.close();
    expect(signals.map((s) => s.aborted)).toEqual([false, false, true]);
    expect(clock.pending()).toBe(0);
    const aborted = new Error("the operation was aborted");
    aborted.name = "AbortError";
    await answer(aborted);
    clock.advance(60_000);
    await Promise.resolve();
    expect([signals.length, clock.pending(), logger.lines]).toEqual([3, 0, []]);
  });
});
