/**
 * The leader's reconciliation of gossip members into the catalog (Consul's agent/consul/leader.go
 * reconcileMember, handleAliveMember, handleFailedMember, handleDeregisterMember and reconcileReaped),
 * as pure decisions: given a member and what the catalog holds for its node, the write to make, if any.
 */
import { parseServer, type PoolMember } from "../membership/index.ts";
import {
  CONSUL_SERVICE, SERF_CHECK_ID, SERF_CHECK_NAME, type DeregisterRequest, type HealthStatus, type RegisterRequest,
} from "../model/index.ts";

/** structs.SerfCheckAliveOutput and SerfCheckFailedOutput. */
export const SERF_ALIVE_OUTPUT = "Agent alive and reachable";
export const SERF_FAILED_OUTPUT = "Agent not live or unreachable";

/** What the catalog holds for a member's node. `undefined` node: not registered. */
export interface CatalogNodeFacts {
  readonly node: { readonly Address: string; readonly TaggedAddresses: Readonly<Record<string, string>>; readonly Meta: Readonly<Record<string, string>> } | undefined;
  readonly serviceIds: readonly string[];
  /** Status of the node's serfHealth check, if it has one. */
  readonly serfStatus: HealthStatus | undefined;
}

export type MemberWrite =
  | { readonly kind: "register"; readonly request: RegisterRequest }
  | { readonly kind: "deregister"; readonly request: DeregisterRequest };

/** Consul's member filter: agents (role "node") and servers of this datacenter, nothing else. */
export function handlesMember(m: PoolMember, datacenter: string): boolean {
  if (m.tags["role"] === "node") return m.tags["dc"] === datacenter;
  const server = parseServer({ name: m.name, addr: `${m.addr}:${m.port}`, tags: m.tags, status: m.status });
  return server !== undefined && server.datacenter === datacenter && server.segment === "";
}

/**
 * The catalog write that makes `facts` agree with member `m`, or undefined when it already does.
 * Alive: registered at its gossip address with a passing serfHealth check (and the `consul` service for
 * servers). Failed: serfHealth critical, other node fields untouched. Left or reaped: the node is
 * deregistered, except this server itself (a follower does that after the leader leaves).
 */
export function memberWrite(m: PoolMember, facts: CatalogNodeFacts, o: { datacenter: string; selfName: string; reaped?: boolean }): MemberWrite | undefined {
  const status = o.reaped ? "reaped" : m.status;
  if (status === "left" || status === "reaped") {
    if (m.name === o.selfName || !facts.node) return undefined;
    return { kind: "deregister", request: { Datacenter: o.datacenter, Node: m.name } };
  }
  if (status === "failed") {
    if (!facts.node) return undefined;
    if (facts.node.Address === m.addr && facts.serfStatus === "critical") return undefined;
    return { kind: "register", request: serfRegistration(m, o.datacenter, "critical", { SkipNodeUpdate: true }) };
  }
  if (status !== "alive") return undefined;
  const server = parseServer({ name: m.name, addr: `${m.addr}:${m.port}`, tags: m.tags, status: m.status });
  const needsService = server !== undefined && !facts.serviceIds.includes(CONSUL_SERVICE);
  if (facts.node && facts.node.Address === m.addr && !needsService && facts.serfStatus === "passing") return undefined;
  const request = serfRegistration(m, o.datacenter, "passing", {
    ...(facts.node ? { TaggedAddresses: facts.node.TaggedAddresses, NodeMeta: facts.node.Meta } : {}),
    ...(server
      ? {
          Service: {
            ID: CONSUL_SERVICE,
            Service: CONSUL_SERVICE,
            Tags: [],
            Address: "",
            Meta: {
              non_voter: String(m.tags["nonvoter"] === "1"),
              raft_version: String(server.raftVersion),
              serf_protocol_current: m.tags["vsn"] ?? "",
              serf_protocol_min: m.tags["vsn_min"] ?? "",
              serf_protocol_max: m.tags["vsn_max"] ?? "",
              version: server.build,
            },
            Port: server.port,
            Weights: { Passing: 1, Warning: 1 },
            EnableTagOverride: false,
            Proxy: { MeshGateway: {}, Expose: {} },
            Connect: {},
          },
        }
      : {}),
  });
  return { kind: "register", request };
}

function serfRegistration(m: PoolMember, datacenter: string, status: HealthStatus, extra: Partial<RegisterRequest>): RegisterRequest {
  return {
    Datacenter: datacenter,
    Node: m.name,
    ID: m.tags["id"] ?? "",
    Address: m.addr,
    ...extra,
    Check: {
      Node: m.name,
      CheckID: SERF_CHECK_ID,
      Name: SERF_CHECK_NAME,
      Status: status,
      Notes: "",
      Output: status === "passing" ? SERF_ALIVE_OUTPUT : SERF_FAILED_OUTPUT,
      ServiceID: "",
      ServiceName: "",
      ServiceTags: [],
      Type: "",
      Definition: {},
    },
  };
}

/**
 * Consul's reconcileReaped: catalog nodes that carry a serfHealth check but are no longer gossip
 * members (reaped long after failing, or removed while no leader was watching) are deregistered.
 * Never this server itself.
 */
export function reapedNodes(serfCheckedNodes: readonly string[], members: readonly PoolMember[], selfName: string): string[] {
  const known = new Set(members.map((m) => m.name));
  return serfCheckedNodes.filter((n) => n !== selfName && !known.has(n));
}
