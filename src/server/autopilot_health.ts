/**
 * Autopilot's server health as pure decisions (Consul 1.8's agent/consul/autopilot: updateClusterHealth,
 * ServerHealth.IsHealthy / IsStable, canRemoveServers). The leader feeds what Raft and gossip show; the
 * result is served by /v1/operator/autopilot/health and drives promotion and dead-server cleanup.
 */
import type { AutopilotConfig } from "../model/index.ts";
import type { AutopilotClusterHealth, AutopilotServerHealth } from "../rpc/index.ts";

/** A server's health with the monotonic time its `healthy` last changed (for IsStable). */
export interface TrackedServerHealth extends AutopilotServerHealth {
  readonly stableSinceMono: number | undefined;
}

export interface TrackedClusterHealth extends AutopilotClusterHealth {
  readonly servers: readonly TrackedServerHealth[];
}

/** What gossip shows of a server of this datacenter (left members are not passed). */
export interface GossipServer {
  readonly name: string;
  readonly status: "alive" | "leaving" | "left" | "failed" | "none";
  readonly version: string;
}

/** What the leader's Raft knows of a server's log and contact (Consul fetches these as RaftStats). */
export interface RaftServerStats {
  readonly lastContactMs: number | undefined;
  readonly lastTerm: number | undefined;
  readonly lastIndex: number;
}

export interface HealthInputs {
  readonly config: Pick<AutopilotConfig, "LastContactThresholdMs" | "MaxTrailingLogs">;
  /** The Raft configuration: voters and non-voters (learners), in the order to report them. */
  readonly voters: readonly string[];
  readonly learners: readonly string[];
  readonly leaderId: string;
  /** The leader's last log index and term, taken together. */
  readonly leaderLastIndex: number;
  readonly leaderLastTerm: number;
  /** Server-port address by Raft ID ("" when unknown). */
  addressOf(id: string): string;
  /** What gossip shows of a server, undefined when it does not show it (or shows it left). */
  gossip(id: string): GossipServer | undefined;
  /** Raft stats of a server, undefined when none could be had. */
  stats(id: string): RaftServerStats | undefined;
  /** The previous computation, for StableSince. */
  readonly previous: TrackedClusterHealth | undefined;
  readonly nowMono: number;
  readonly nowWall: number;
}

/**
 * ServerHealth.IsHealthy: alive in gossip, heard from within LastContactThreshold (an unknown contact is
 * unhealthy), on the leader's last log term, and no more than MaxTrailingLogs entries behind its last index.
 */
export function isServerHealthy(
  h: Pick<AutopilotServerHealth, "serfStatus" | "lastContactMs" | "lastTerm" | "lastIndex">,
  leaderLastTerm: number,
  leaderLastIndex: number,
  config: Pick<AutopilotConfig, "LastContactThresholdMs" | "MaxTrailingLogs">,
): boolean {
  if (h.serfStatus !== "alive") return false;
  if (h.lastContactMs === undefined || h.lastContactMs < 0 || h.lastContactMs > config.LastContactThresholdMs) return false;
  if (h.lastTerm !== leaderLastTerm) return false;
  if (leaderLastIndex > config.MaxTrailingLogs && h.lastIndex < leaderLastIndex - config.MaxTrailingLogs) return false;
  return true;
}

/** ServerHealth.IsStable: healthy, and for at least ServerStabilizationTime. */
export function isServerStable(h: TrackedServerHealth | undefined, nowMono: number, config: Pick<AutopilotConfig, "ServerStabilizationTimeMs">): boolean {
  if (!h || !h.healthy || h.stableSinceMono === undefined) return false;
  return nowMono - h.stableSinceMono >= config.ServerStabilizationTimeMs;
}

/** Voters that could fail without an outage: healthy voters beyond a quorum of all voters (never negative). */
export function failureTolerance(voters: number, healthyVoters: number): number {
  const quorum = Math.floor(voters / 2) + 1;
  return healthyVoters > quorum ? healthyVoters - quorum : 0;
}

/**
 * Consul's canRemoveServers: dead-server cleanup may remove `dead` servers out of `voters` only when at
 * least MinQuorum voters remain (0: no floor) and the dead are a minority ((n-1)/2 at most).
 */
export function canRemoveServers(voters: number, minQuorum: number, dead: number): { readonly ok: boolean; readonly reason: string } {
  if (voters - dead < minQuorum) {
    return { ok: false, reason: `denied, because removing ${dead}/${voters} servers would leave less then minimal allowed quorum of ${minQuorum} servers` };
  }
  if (dead > Math.floor((voters - 1) / 2)) return { ok: false, reason: `denied, because removing the majority of servers ${dead}/${voters} is not safe` };
  return { ok: true, reason: "" };
}

/**
 * updateClusterHealth: one entry per server of the Raft configuration. A server gossip does not show
 * is "none" and unhealthy with no stats; one without stats keeps LastContact unknown and StableSince
 * unset (as Consul leaves them when a RaftStats call fails). StableSince carries over while `healthy`
 * stays the same and restarts when it changes or the server is new.
 */
export function computeClusterHealth(i: HealthInputs): TrackedClusterHealth {
  const before = new Map((i.previous?.servers ?? []).map((s) => [s.id, s]));
  const servers: TrackedServerHealth[] = [];
  let healthyCount = 0;
  let healthyVoters = 0;
  const ids = [...i.voters, ...i.learners.filter((id) => !i.voters.includes(id))];
  for (const id of ids) {
    const voter = i.voters.includes(id);
    const g = i.gossip(id);
    const base = { id, address: i.addressOf(id), leader: id === i.leaderId, voter };
    if (!g) {
      servers.push({ ...base, name: "", serfStatus: "none", version: "", healthy: false, lastContactMs: undefined, lastTerm: 0, lastIndex: 0, stableSinceMs: undefined, stableSinceMono: undefined });
      continue;
    }
    const st = i.stats(id);
    if (!st) {
      servers.push({ ...base, name: g.name, serfStatus: g.status, version: g.version, healthy: false, lastContactMs: undefined, lastTerm: 0, lastIndex: 0, stableSinceMs: undefined, stableSinceMono: undefined });
      continue;
    }
    const judged = { serfStatus: g.status, lastContactMs: st.lastContactMs, lastTerm: st.lastTerm ?? 0, lastIndex: st.lastIndex };
    const healthy = isServerHealthy(judged, i.leaderLastTerm, i.leaderLastIndex, i.config);
    const prev = before.get(id);
    const keep = prev !== undefined && prev.healthy === healthy && prev.stableSinceMono !== undefined;
    servers.push({
      ...base,
      ...judged,
      name: g.name,
      version: g.version,
      healthy,
      stableSinceMs: keep ? prev.stableSinceMs : i.nowWall,
      stableSinceMono: keep ? prev.stableSinceMono : i.nowMono,
    });
    if (healthy) {
      healthyCount++;
      if (voter) healthyVoters++;
    }
  }
  return { healthy: healthyCount === servers.length, failureTolerance: failureTolerance(i.voters.length, healthyVoters), servers };
}
