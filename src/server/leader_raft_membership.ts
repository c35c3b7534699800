/**
 * Leader routine: Raft membership from gossip (Consul's leader reconcile of servers and autopilot's
 * promotion and dead-server cleanup). Every second and whenever the LAN pool changes, the leader
 * carries out what reconcileServers decides under the stored autopilot configuration: alive servers are
 * added as learners (Consul's non-voters) and promoted once autopilot has judged them healthy for
 * ServerStabilizationTime and they have caught up; servers that left are removed; failed ones past the
 * grace period only with CleanupDeadServers and within MinQuorum, never below quorum. Until the
 * configuration exists (a new leader writes it first) nothing is promoted or cleaned up, as in Consul.
 * One change at a time.
 */
import type { ConsensusNode } from "../consensus/index.ts";
import type { AutopilotConfig } from "../model/index.ts";
import type { Cancel, Clock, Logger } from "../platform/index.ts";
import { isServerStable, type TrackedServerHealth } from "./autopilot_health.ts";
import type { LeaderRoutine } from "./leader_routines.ts";
import { reconcileServers, type AutopilotPolicy } from "./raft_membership.ts";
import type { ServerDirectory } from "./server_directory.ts";

/** How long a failed server keeps its Raft seat before the leader removes it. */
export const FAILED_SERVER_GRACE_MS = 30_000;
const RECONCILE_INTERVAL_MS = 1_000;

export interface RaftMembershipRoutine extends LeaderRoutine {
  /** Gossip changed: reconcile now (while leader). */
  kick(): void;
}

export function raftMembershipRoutine(o: {
  nodeId: string;
  consensus: ConsensusNode<unknown>;
  directory: ServerDirectory;
  clock: Clock;
  logger: Logger;
  /** The stored autopilot configuration (null before any) and the leader's latest server health. */
  autopilot: { readConfig(): AutopilotConfig | null; serverHealth(id: string): TrackedServerHealth | undefined };
}): RaftMembershipRoutine {
  const { consensus, directory, clock, logger: log } = o;
  let active = false;
  let interval: Cancel | undefined;
  let reconciling = false;

  const reconcile = async () => {
    const st = consensus.status();
    if (!active || st.role !== "Leader" || reconciling) return;
    // Configured servers that gossip no longer shows count as failed from the moment we notice.
    const seen = directory.seen();
    const seenIds = new Set(seen.map((x) => x.id));
    for (const id of [...st.config.voters, ...st.config.learners]) {
      if (id !== o.nodeId && !seenIds.has(id) && !directory.failedSince.has(id)) directory.failedSince.set(id, clock.monotonic());
    }
    const config = o.autopilot.readConfig();
    const now = clock.monotonic();
    const policy: AutopilotPolicy = config
      ? { cleanupDeadServers: config.CleanupDeadServers, minQuorum: config.MinQuorum, promotable: (id) => isServerStable(o.autopilot.serverHealth(id), now, config) }
      : { cleanupDeadServers: false, minQuorum: 0, promotable: () => false };
    const steps = reconcileServers(st.config.voters, st.config.learners, seen, directory.failedSince, now, FAILED_SERVER_GRACE_MS, policy);
    if (!steps.length) return;
    reconciling = true;
    try {
      for (const step of steps) {
        if (step.kind === "add") {
          log.info("adding server as a non-voter", { id: step.id, node: step.name });
          await consensus.changeMembership({ transition: "Auto", changes: [{ type: "AddLearnerNode", nodeId: step.id }] });
        } else if (step.kind === "promote") {
          // Stable by autopilot's measure; also caught up, so that its vote cannot stall commits (Raft thesis §4.2.1).
          const p = consensus.progress(step.id);
          if (!p || p.match < consensus.status().commit) continue;
          log.info("promoting server", { id: step.id, node: step.name });
          await consensus.changeMembership({ transition: "Auto", changes: [{ type: "AddNode", nodeId: step.id }] });
        } else {
          log.info("removing server", { id: step.id, node: step.name, reason: step.reason });
          await consensus.changeMembership({ transition: "Auto", changes: [{ type: "RemoveNode", nodeId: step.id }] });
        }
      }
    } catch (err) {
      log.warn("server reconcile step failed; will retry", { error: err });
    } finally {
      reconciling = false;
    }
  };

  return {
    name: "Raft membership",
    start() {
      active = true;
      interval = clock.setInterval(RECONCILE_INTERVAL_MS, () => void reconcile());
      void reconcile();
    },
    stop() {
      active = false;
      interval?.();
      interval = undefined;
    },
    kick: () => void reconcile(),
  };
}
