/**
 * What a secondary's ACL replication writes (Consul 1.8 agent/consul/acl_replication.go diffACLPolicies,
 * diffACLRoles, diffACLTokens): objects the primary no longer has are deleted, objects it has that are
 * missing here or differ in their Hash are written. Pure; sorted by ID so a round is deterministic.
 */

export interface ReplicationDiff<T> {
  readonly deletions: readonly string[];
  readonly updates: readonly T[];
}

export function diffReplicated<T>(local: readonly T[], remote: readonly T[], idOf: (t: T) => string, hashOf: (t: T) => string): ReplicationDiff<T> {
  const here = new Map(local.map((t) => [idOf(t), hashOf(t)]));
  const there = new Set(remote.map(idOf));
  const byId = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
  return {
    deletions: [...here.keys()].filter((id) => !there.has(id)).sort(byId),
    updates: remote.filter((t) => here.get(idOf(t)) !== hashOf(t)).sort((a, b) => byId(idOf(a), idOf(b))),
  };
}

/** Consul 1.8's ACL replication pacing (agent/consul/config.go): rounds per second and burst, Raft applies per second. */
export const ACL_REPLICATION = { rate: 1, burst: 5, applyLimit: 100, maxRetryWaitMs: 120_000, blockingWaitMs: 5 * 60_000 } as const;
