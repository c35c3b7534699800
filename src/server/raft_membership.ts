/**
 * Raft membership from gossip, as pure decisions (Consul's `maybeBootstrap`, leader reconcile and
 * autopilot's dead-server cleanup): the agent feeds what the LAN pool shows and carries out the result.
 */

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

/**
 * What the leader changes in the Raft configuration so that it matches the servers gossip shows:
 * alive servers missing from it are added (as learners, promoted once caught up); servers that left
 * are removed; servers failed for longer than `graceMs` are removed only while the voters that stay
 * remain a majority of the new configuration (never below quorum by accident). A server in the
 * configuration that gossip no longer shows at all (reaped, or replaced by a new ID under the same
 * name) counts as failed since `failedSince` says. Alive learners are promoted (a learner left behind
 * by an interrupted add). At most one removal per call, so each change commits before the next.
 */
export function reconcileServers(
  voters: readonly string[],
  learners: readonly string[],
  seen: readonly SeenServer[],
  failedSince: ReadonlyMap<string, number>,
  now: number,
  graceMs: number,
): ReconcileStep[] {
  const inConfig = new Set([...voters, ...learners]);
  const steps: ReconcileStep[] = [];
  for (const s of [...seen].sort((a, b) => (a.id < b.id ? -1 : 1))) {
    if (s.status === "alive" && !inConfig.has(s.id)) steps.push({ kind: "add", id: s.id, name: s.name });
    else if (s.status === "alive" && learners.includes(s.id)) steps.push({ kind: "promote", id: s.id, name: s.name });
  }
  const byId = new Map(seen.map((s) => [s.id, s]));
  const healthy = (id: string) => byId.get(id)?.status === "alive";
  for (const id of [...inConfig].sort()) {
    const s = byId.get(id);
    const status = s?.status ?? "failed";
    const gone = status === "left";
    const deadLongEnough = status === "failed" && now - (failedSince.get(id) ?? now) >= graceMs;
    if (!gone && !deadLongEnough) continue;
    const remainingVoters = voters.filter((v) => v !== id);
    const healthyRemaining = remainingVoters.filter(healthy).length;
    if (voters.includes(id) && healthyRemaining <= remainingVoters.length / 2) continue;
    steps.push({ kind: "remove", id, name: s?.name ?? id, reason: gone ? "left the cluster" : s ? `failed for more than ${graceMs} ms` : `not in the gossip pool for more than ${graceMs} ms` });
    break;
  }
  return steps;
}
