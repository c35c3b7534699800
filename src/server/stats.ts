/**
 * The `consul` and `raft` sections of `/v1/agent/self`'s Stats on a server (Consul's
 * Server.Stats: every value a string). Fields Causeway has no counterpart for are left out rather
 * than invented.
 */
import type { ConsensusStatus } from "../consensus/index.ts";

export function serverStats(o: {
  status: ConsensusStatus;
  /** The leader's server address, "" when none is known. */
  leaderAddr: string;
  /** bootstrap (-dev or bootstrap_expect = 1). */
  bootstrap: boolean;
  knownDatacenters: number;
}): Record<string, Record<string, string>> {
  const s = o.status;
  const voters = s.config?.voters ?? [];
  const contact = s.lastLeaderContactMs;
  return {
    consul: {
      acl: "disabled",
      bootstrap: String(o.bootstrap),
      known_datacenters: String(o.knownDatacenters),
      leader: String(s.role === "Leader"),
      leader_addr: o.leaderAddr,
      server: "true",
    },
    raft: {
      applied_index: String(s.applied),
      commit_index: String(s.commit),
      last_contact: s.role === "Leader" ? "0" : contact === undefined ? "never" : `${contact}ms`,
      last_log_index: String(s.lastIndex),
      num_peers: String(voters.filter((v) => v !== s.id).length),
      protocol_version: "3",
      state: s.role,
      term: String(s.term),
    },
  };
}
