import { describe, expect, test } from "bun:test";
import type { ConsensusStatus, PeerProgress } from "../consensus/index.ts";
import { AUTOPILOT_DEFAULTS, type AutopilotConfig } from "../model/index.ts";
import { silentLogger } from "../platform/index.ts";
import type { StateCommand } from "../state/index.ts";
import { MetricsRegistry } from "../telemetry/index.ts";
import { simClock } from "../../test/harness/sim_clock.ts";
import { autopilotRoutine, CONFIG_INIT_RETRY_MS, HEALTH_INTERVAL_MS } from "./leader_autopilot.ts";

const settle = () => new Promise<void>((r) => setImmediate(r));

function setup(o: { stored?: AutopilotConfig | null; failWrites?: number } = {}) {
  const clock = simClock();
  let stored: AutopilotConfig | null = o.stored ?? null;
  let failures = o.failWrites ?? 0;
  const proposed: StateCommand[] = [];
  const metrics = new MetricsRegistry({ now: () => clock.now() });
  const gauge = (name: string) => metrics.series().find((s) => s.name === `consul.autopilot.${name}`)?.value;
  const status: ConsensusStatus = {
    id: "a", leader: "a", role: "Leader", term: 3, commit: 40, applied: 40, lastIndex: 40, lastLogTerm: 3,
    config: { voters: ["a", "b", "c"], learners: [], votersOutgoing: [], learnersNext: [], autoLeave: false }, lastLeaderContactMs: 0,
  };
  const progress: Record<string, PeerProgress> = {
    a: { match: 40, isLearner: false, matchTerm: 3, lastContactMs: 0 },
    b: { match: 40, isLearner: false, matchTerm: 3, lastContactMs: 20 },
    c: { match: 39, isLearner: false, matchTerm: 3, lastContactMs: 50 },
  };
  const routine = autopilotRoutine({
    nodeId: "a",
    seed: { ...AUTOPILOT_DEFAULTS, CleanupDeadServers: false, MaxTrailingLogs: 10 },
    readConfig: () => stored,
    proposeDuty: async (_what, cmd) => {
      proposed.push(cmd);
      if (failures > 0) {
        failures--;
        return;
      }
      if (cmd.type === "autopilot") stored = { ...cmd.config, CreateIndex: 41, ModifyIndex: 41 };
    },
    consensus: { status: () => status, progress: (id) => progress[id] },
    addressOf: (id) => `10.0.0.${id}:8300`,
    gossip: (id) => ({ name: `s-${id}`, status: "alive", version: "0.1.0" }),
    clock,
    logger: silentLogger(),
    metrics: { healthy: metrics.gauge("autopilot.healthy"), failureTolerance: metrics.gauge("autopilot.failure_tolerance") },
  });
  return { clock, routine, proposed, progress, config: () => stored, gauge };
}

describe("autopilot leader routine", () => {
  test("a new leader writes the seeded defaults when no configuration is stored (getOrCreateAutopilotConfig)", async () => {
    const t = setup();
    t.routine.start();
    await settle();
    expect(t.proposed).toEqual([{ type: "autopilot", op: "set-config", config: { ...AUTOPILOT_DEFAULTS, CleanupDeadServers: false, MaxTrailingLogs: 10 }, cas: 0 }]);
    expect(t.config()?.CleanupDeadServers).toBe(false);
    t.routine.stop();
  });

  test("a stored configuration is left alone", async () => {
    const t = setup({ stored: { ...AUTOPILOT_DEFAULTS, MinQuorum: 3, CreateIndex: 5, ModifyIndex: 9 } });
    t.routine.start();
    await settle();
    expect(t.proposed).toEqual([]);
    t.routine.stop();
  });

  test("a failed write is retried while leader, and not after stepping down", async () => {
    const t = setup({ failWrites: 2 });
    t.routine.start();
    await settle();
    expect(t.proposed).toHaveLength(1);
    t.clock.advance(CONFIG_INIT_RETRY_MS);
    await settle();
    expect(t.proposed).toHaveLength(2);
    t.routine.stop();
    t.clock.advance(CONFIG_INIT_RETRY_MS * 3);
    await settle();
    expect(t.proposed).toHaveLength(2);
    expect(t.config()).toBeNull();
  });

  test("health is judged every interval from Raft progress and gossip, and dropped on stepping down", async () => {
    const t = setup();
    t.routine.start();
    await settle();
    expect(t.routine.health()).toBeUndefined();
    t.clock.advance(HEALTH_INTERVAL_MS);
    const h = t.routine.health()!;
    expect(h.healthy).toBe(true);
    expect(h.failureTolerance).toBe(1);
    expect([t.gauge("healthy"), t.gauge("failure_tolerance")]).toEqual([1, 1]);
    expect(h.servers.map((s) => [s.id, s.name, s.leader, s.lastContactMs, s.lastIndex, s.version])).toEqual([
      ["a", "s-a", true, 0, 40, "0.1.0"], ["b", "s-b", false, 20, 40, "0.1.0"], ["c", "s-c", false, 50, 39, "0.1.0"],
    ]);
    const since = t.routine.serverHealth("c")!.stableSinceMono;
    // c stops answering: past LastContactThreshold it turns unhealthy and its StableSince restarts.
    t.progress.c = { ...t.progress.c!, lastContactMs: 5_000 };
    t.clock.advance(HEALTH_INTERVAL_MS);
    expect(t.routine.serverHealth("c")).toMatchObject({ healthy: false });
    expect(t.routine.serverHealth("c")!.stableSinceMono).toBe(since! + HEALTH_INTERVAL_MS);
    expect(t.routine.health()!.failureTolerance).toBe(0);
    expect([t.gauge("healthy"), t.gauge("failure_tolerance")]).toEqual([0, 0]);
    t.routine.stop();
    expect(t.routine.health()).toBeUndefined();
  });
});
