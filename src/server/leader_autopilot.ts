/**
 * Leader routine: autopilot (Consul 1.8's initializeAutopilot / getOrCreateAutopilotConfig in
 * agent/consul/leader.go and the autopilot server-health loop). On gaining leadership the leader writes
 * the configured defaults when the state holds no autopilot configuration yet (retrying while it stays
 * leader), and every HEALTH_INTERVAL_MS it judges every server of the Raft configuration from what its
 * Raft and gossip show. The health is served by /v1/operator/autopilot/health and read by the Raft
 * membership routine for promotion (ServerStabilizationTime) and dead-server cleanup.
 */
import type { ConsensusNode } from "../consensus/index.ts";
import type { AutopilotConfig } from "../model/index.ts";
import type { Cancel, Clock, Logger } from "../platform/index.ts";
import type { AutopilotHealthSource } from "../rpc/index.ts";
import type { GaugeHandle } from "../telemetry/index.ts";
import { computeClusterHealth, type GossipServer, type TrackedClusterHealth, type TrackedServerHealth } from "./autopilot_health.ts";
import type { DutyProposer, LeaderRoutine } from "./leader_routines.ts";

/** Consul's ServerHealthInterval (agent/consul/config.go): how often the leader judges server health. */
export const HEALTH_INTERVAL_MS = 2_000;
/** Retry delay of a failed write of the default configuration while this server stays leader. */
export const CONFIG_INIT_RETRY_MS = 5_000;

/** The configuration to write when none is stored: the agent's `autopilot` block over Consul's defaults. */
export type AutopilotSeed = Omit<AutopilotConfig, "CreateIndex" | "ModifyIndex">;

export interface AutopilotRoutine extends LeaderRoutine, AutopilotHealthSource {
  /** The latest health (with monotonic StableSince); undefined before the first computation of this leadership. */
  health(): TrackedClusterHealth | undefined;
  /** The latest health of one server, if judged. */
  serverHealth(id: string): TrackedServerHealth | undefined;
}

export function autopilotRoutine(o: {
  nodeId: string;
  seed: AutopilotSeed;
  /** The stored configuration, or null before any was written. */
  readConfig: () => AutopilotConfig | null;
  proposeDuty: DutyProposer;
  consensus: Pick<ConsensusNode<unknown>, "status" | "progress">;
  /** Server-port address by Raft ID ("" when unknown). */
  addressOf: (id: string) => string;
  /** What gossip shows of a server of this datacenter (undefined when it does not, or shows it left). */
  gossip: (id: string) => GossipServer | undefined;
  clock: Clock;
  logger: Logger;
  /** Consul's `autopilot.healthy` (1 or 0) and `autopilot.failure_tolerance` gauges, set after each health check on the leader. */
  metrics?: { readonly healthy: GaugeHandle; readonly failureTolerance: GaugeHandle };
}): AutopilotRoutine {
  let active = false;
  let timers: Cancel[] = [];
  let current: TrackedClusterHealth | undefined;

  const initialize = async () => {
    if (!active || o.readConfig() !== null) return;
    // cas 0: only while none is stored, so an operator's write that lands first is not overwritten.
    await o.proposeDuty("writing the default autopilot configuration", { type: "autopilot", op: "set-config", config: o.seed, cas: 0 });
    if (active && o.readConfig() === null) timers.push(o.clock.setTimer(CONFIG_INIT_RETRY_MS, () => void initialize()));
  };

  const update = () => {
    if (!active) return;
    const config = o.readConfig();
    // Consul's updateClusterHealth bails out until the configuration exists.
    if (!config) return;
    const st = o.consensus.status();
    if (st.role !== "Leader") return;
    current = computeClusterHealth({
      config,
      voters: st.config.voters,
      learners: st.config.learners,
      leaderId: o.nodeId,
      leaderLastIndex: st.lastIndex,
      leaderLastTerm: st.lastLogTerm,
      addressOf: o.addressOf,
      gossip: o.gossip,
      stats: (id) => {
        const p = o.consensus.progress(id);
        return p ? { lastContactMs: p.lastContactMs, lastTerm: p.matchTerm, lastIndex: p.match } : undefined;
      },
      previous: current,
      nowMono: o.clock.monotonic(),
      nowWall: o.clock.now(),
    });
    o.metrics?.healthy.set(current.healthy ? 1 : 0);
    o.metrics?.failureTolerance.set(current.failureTolerance);
  };

  return {
    name: "autopilot",
    start() {
      active = true;
      current = undefined;
      void initialize();
      timers.push(o.clock.setInterval(HEALTH_INTERVAL_MS, update));
    },
    stop() {
      active = false;
      for (const cancel of timers) cancel();
      timers = [];
      current = undefined;
    },
    health: () => current,
    serverHealth: (id) => current?.servers.find((s) => s.id === id),
  };
}
