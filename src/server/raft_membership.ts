/**
 * Raft membership from gossip, as pure decisions (Consul's `maybeBootstrap`, leader reconcile and
 * autopilot's dead-server cleanup): the agent feeds what the LAN pool shows and carries out the result.
 */
import { canRemoveServers } from "./autopilot_health.ts";

/** A server of this datacenter as the LAN pool shows it. */
export interface SeenServer {
  readonly id: string;
  readonly name: string;
  readonly rpcAddr: string;
  readonly expect: number;
  readonly status: "alive" | "leaving" | "left" | "failed" | "none";
}

export type BootstrapDecision =
  | { readonly kind: "wait"; readonly reason: string }
  | { readonly kind: "bootstrap"; readonly voters: readonly string[] }
  | { readonly kind: "refuse"; readonly reason: string };

/**
 * Whether a server with an empty Raft log should bootstrap a new cluster now. With bootstrap_expect N
 * it does once N servers (itself included) are alive in the pool and all of them expect N; every one
 * of them then makes the same decision from the same set, so they agree on the first configuration.
 */
export function decideBootstrap(expect: number, selfId: string, seen: readonly SeenServer[]): BootstrapDecision {
  if (expect <= 0) return { kind: "wait", reason: "bootstrap_expect is not set" };
  const alive = seen.filter((s) => s.status === "alive");
  if (!alive.some((s) => s.id === selfId)) return { kind: "wait", reason: "this server is not in the pool yet" };
  const mismatched = alive.filter((s) => s.expect !== expect);
  if (mismatched.length > 0) {
    return { kind: "refuse", reason: `servers disagree on bootstrap_expect: ${mismatched.map((s) => `${s.name} expects ${s.expect || "none"}`).join(", ")}; this server expects ${expect}` };
  }
  if (alive.length < expect) return { kind: "wait", reason: `${alive.length} of ${expect} expected servers seen` };
  return { kind: "bootstrap", voters: alive.map((s) => s.id).sort() };
}

export type ReconcileStep =
  | { readonly kind: "add"; readonly id: string; readonly name: string }
  | { readonly kind: "promote"; readonly id: string; readonly name: string }
  | { readonly kind: "remove"; readonly id: string; readonly name: string; readonly reason: string };

/** What autopilot's configuration and health allow (Consul 1.8's promoteServers and pruneDeadServers). */
export interface AutopilotPolicy {
  /** CleanupDeadServers: remove failed servers and servers gossip no longer shows (left ones go regardless). */
  readonly cleanupDeadServers: boolean;
  /** MinQuorum: dead-server cleanup never leaves fewer voters than this (0: no floor). */
  readonly minQuorum: number;
  /** Whether a learner may be promoted now (healthy for ServerStabilizationTime). */
  promotable(id: string): boolean;
}

/** Cleanup on, no floor, promote at once: the policy when autopilot is not consulted. */
export const PERMISSIVE_POLICY: AutopilotPolicy = { cleanupDeadServers: true, minQuorum: 0, promotable: () => true };

/**
 * What the leader changes in the Raft configuration so that it matches the servers gossip shows:
 * alive servers missing from it are added as learners; alive learners are promoted when the policy
 * says they are stable; servers that left are removed. Dead servers (failed for longer than
 * `graceMs`, or in the configuration but no longer shown by gossip at all, e.g. reaped or replaced by
 * a new ID under the same name, counting from `failedSince`) are removed only with CleanupDeadServers,
 * and a dead voter only while Consul's canRemoveServers allows it (the dead voters are a minority and
 * at least MinQuorum voters remain) and the healthy voters that stay remain a majority of the new
 * configuration. At most one removal per call, so each change commits before the next.
 */
export function reconcileServers(
  voters: readonly string[],
  learners: readonly string[],
  seen: readonly SeenServer[],
  failedSince: ReadonlyMap<string, number>,
  now: number,
  graceMs: number,
  policy: AutopilotPolicy = PERMISSIVE_POLICY,
): ReconcileStep[] {
  const inConfig = new Set([...voters, ...learners]);
  const steps: ReconcileStep[] = [];
  for (const s of [...seen].sort((a, b) => (a.id < b.id ? -1 : 1))) {
    if (s.status === "alive" && !inConfig.has(s.id)) steps.push({ kind: "add", id: s.id, name: s.name });
    else if (s.status === "alive" && learners.includes(s.id) && policy.promotable(s.id)) steps.push({ kind: "promote", id: s.id, name: s.name });
  }
  const byId = new Map(seen.map((s) => [s.id, s]));
  const healthy = (id: string) => byId.get(id)?.status === "alive";
  const dead = (id: string) => {
    const status = byId.get(id)?.status ?? "failed";
    return status === "failed" && now - (failedSince.get(id) ?? now) >= graceMs;
  };
  const deadVoters = voters.filter(dead).length;
  const cleanup = canRemoveServers(voters.length, policy.minQuorum, deadVoters).ok;
  for (const id of [...inConfig].sort()) {
    const s = byId.get(id);
    const gone = s?.status === "left";
    if (!gone && !(dead(id) && policy.cleanupDeadServers)) continue;
    const remainingVoters = voters.filter((v) => v !== id);
    const healthyRemaining = remainingVoters.filter(healthy).length;
    if (voters.includes(id) && (healthyRemaining <= remainingVoters.length / 2 || (!gone && !cleanup))) continue;
    steps.push({ kind: "remove", id, name: s?.name ?? id, reason: gone ? "left the cluster" : s ? `failed for more than ${graceMs} ms` : `not in the gossip pool for more than ${graceMs} ms` });
    break;
  }
  return steps;
}
