/**
 * The federation-state feature gate (Consul 1.8 DatacenterSupportsFederationStates in
 * agent/consul/leader_federation_state_ae.go and server_serf.go's `ft_fs` tag): replication and
 * anti-entropy stay off until every server that counts advertises the feature, so that a cluster
 * mid-upgrade never writes a Raft command older servers cannot apply (PR #8014).
 */
import { FEATURE_FEDERATION_STATES, parseServer, type MemberStatus, type PoolMember } from "../membership/index.ts";

/** A server as the gate sees it: its gossip status and feature flags (parseServer's `status`, `features`). */
export interface GatedServer {
  readonly status: MemberStatus;
  readonly features: Readonly<Record<string, number>>;
}

export interface FederationStatesGate {
  /**
   * Whether federation states may be replicated and synced. True once the local datacenter's servers
   * (and, in a secondary, the primary's) all advertise `ft_fs=1`, with at least one found in each, or
   * once any federation state is stored (PR #9519: states exist, so every server already applies them);
   * latched from then on, for the life of this server.
   */
  supported(): boolean;
}

/** The servers of `datacenter` among a gossip pool's members (members that are not Consul servers are skipped). */
export function gatedServers(members: readonly PoolMember[], datacenter: string): GatedServer[] {
  return members.flatMap((m) => {
    const s = parseServer({ name: m.name, addr: `${m.addr}:${m.port}`, tags: m.tags, status: m.status });
    return s && s.datacenter === datacenter ? [{ status: s.status, features: s.features }] : [];
  });
}

/**
 * Consul's serversFederationStatesInfo.update over one datacenter's servers: alive and failed servers
 * must advertise the feature with value 1; leaving and left ones count as meeting it. "found" is false
 * when no alive or failed server was seen at all.
 */
export function datacenterSupportsFederationStates(servers: readonly GatedServer[]): boolean {
  let found = false;
  for (const s of servers) {
    if (s.status !== "alive" && s.status !== "failed") continue;
    found = true;
    if (s.features[FEATURE_FEDERATION_STATES] !== 1) return false;
  }
  return found;
}

/**
 * The gate of one server. `servers(dc)` lists what gossip shows of a datacenter's servers (the LAN
 * pool for the local one, the WAN pool for the primary); `hasStates()` whether the local state holds any
 * federation state. Both are read at each check until the gate latches.
 */
export function federationStatesGate(o: {
  localDc: string;
  primaryDc: string;
  servers: (datacenter: string) => readonly GatedServer[];
  hasStates: () => boolean;
}): FederationStatesGate {
  let latched = false;
  return {
    supported() {
      if (latched) return true;
      if (o.hasStates()) return (latched = true);
      if (o.primaryDc !== o.localDc && !datacenterSupportsFederationStates(o.servers(o.primaryDc))) return false;
      if (!datacenterSupportsFederationStates(o.servers(o.localDc))) return false;
      return (latched = true);
    },
  };
}
