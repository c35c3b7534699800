/**
 * ClusterLoadAssignments of a connect-proxy sidecar (Consul 1.8 agent/xds/endpoints.go, v3 shapes). Every
 * instance is sent with its health (HEALTHY / UNHEALTHY), never filtered out, so Envoy can fail over.
 * Failover without gateways is one priority band per target with an overprovisioning factor of 100000
 * (the next band takes traffic only when no endpoint of the previous is healthy). Failover through mesh
 * gateways cannot vary SNI per endpoint, so the first healthy target is chosen here: its gateways become
 * the endpoints, with the health of the target's real instances. Gateways addressed by host name cannot
 * go into EDS: their cluster is a DNS cluster instead and gets no assignment (./sidecar_dns.ts).
 * Returned sorted by cluster name.
 */
import { create } from "@bufbuild/protobuf";
import {
  ClusterLoadAssignmentSchema,
  type ClusterLoadAssignment,
} from "../../gen/envoy/config/endpoint/v3/endpoint_pb.ts";
import type { LbEndpoint } from "../../gen/envoy/config/endpoint/v3/endpoint_components_pb.ts";
import type { CompiledDiscoveryChain, DiscoveryGraphNode } from "../../connect/index.ts";
import type { CheckServiceNode, Upstream } from "../../model/index.ts";
import { upstreamDatacenter, upstreamIdentifier, type SidecarSnapshot } from "../../proxycfg/index.ts";
import { byName, customizeClusterName, isDefaultChain, resolverNodes, socketAddress, willFailoverThroughMeshGateway } from "./common.ts";
import { parseUpstreamConfig } from "./config.ts";
import { clusterFromUserConfig } from "./escape_hatch.ts";
import { bestAddress, endpointHealthAndWeight, firstHealthyTarget, HealthStatus } from "./health.ts";
import { createMemo } from "./memo.ts";
import { upstreamSni } from "./names.ts";
import { gatewayDnsEndpoint } from "./sidecar_dns.ts";

/** Failover bands: no traffic to band N+1 while band N has any healthy endpoint. */
export const FAILOVER_OVERPROVISIONING_FACTOR = 100000;

/** One priority band: instances, whether only passing counts as healthy, and a health override. */
export interface EndpointGroup {
  readonly endpoints: readonly CheckServiceNode[];
  readonly onlyPassing: boolean;
  /** Set for gateway endpoints: the health of the real instances behind them. */
  readonly overrideHealth?: HealthStatus;
}

/** All load assignments of the sidecar, sorted by cluster name. */
export function sidecarEndpoints(snap: SidecarSnapshot): ClusterLoadAssignment[] {
  const out = new Map<string, ClusterLoadAssignment>();
  for (const u of snap.Proxy.Upstreams ?? []) {
    for (const cla of upstreamLoadAssignments(snap, u)) if (!out.has(cla.clusterName)) out.set(cla.clusterName, cla);
  }
  return byName([...out.values()], (c) => c.clusterName);
}

/** The name EDS must use when `envoy_cluster_json` replaced the cluster (Consul #7319), else `name`. */
function edsName(u: Upstream, id: string, name: string, chain: CompiledDiscoveryChain | undefined): string {
  const json = parseUpstreamConfig(u.Config, id).config.clusterJson;
  if (json === "" || (chain !== undefined && !isDefaultChain(chain))) return name;
  return clusterFromUserConfig(`upstream ${id} envoy_cluster_json`, json).name || name;
}

/**
 * The load assignments of one upstream: one per resolver of its chain, or one for a prepared query. A
 * resolver whose cluster is a DNS cluster (reached through mesh gateways addressed by host name,
 * ./sidecar_dns.ts) gets none: its cluster carries the endpoint, and EDS cannot carry host names. Not
 * even under an `envoy_cluster_json` cluster: one assignment with a host name would have Envoy reject the
 * whole EDS response (every cluster's endpoints), a missing one only leaves that cluster without hosts.
 */
export function upstreamLoadAssignments(snap: SidecarSnapshot, u: Upstream): ClusterLoadAssignment[] {
  const id = upstreamIdentifier(u);
  const cp = snap.ConnectProxy;
  if (u.DestinationType === "prepared_query") {
    const eps = cp.PreparedQueryEndpoints[id];
    if (!eps) return [];
    const name = edsName(u, id, upstreamSni(snap, u, upstreamDatacenter(u, snap.Datacenter)), undefined);
    return [makeLoadAssignment(name, [{ endpoints: eps, onlyPassing: false }], snap.Datacenter)];
  }
  const chain = cp.DiscoveryChain[id];
  if (!chain) return [];
  const out: ClusterLoadAssignment[] = [];
  for (const node of resolverNodes(chain)) {
    const primary = chain.Targets[node.Resolver!.Target];
    if (!primary) continue;
    const groups = resolverEndpointGroups(snap, id, chain, node);
    if (!groups) continue; // still populating the snapshot
    if (gatewayDnsEndpoint(groups, snap.Datacenter)) continue;
    const name = edsName(u, id, customizeClusterName(primary.Name, chain), chain);
    out.push(makeLoadAssignment(name, groups, snap.Datacenter));
  }
  return out;
}

/**
 * The endpoint groups of one resolver's cluster: the target's, then one per failover target (priority
 * bands); with failover through mesh gateways only the first healthy target's (its gateways). Undefined
 * while the first group is not fetched yet. Shared with ./clusters.ts, which decides the cluster's type
 * from them.
 */
export function resolverEndpointGroups(snap: SidecarSnapshot, id: string, chain: CompiledDiscoveryChain, node: DiscoveryGraphNode): EndpointGroup[] | undefined {
  const health = snap.ConnectProxy.WatchedUpstreamEndpoints[id];
  const gateways = snap.ConnectProxy.WatchedGatewayEndpoints[id];
  let targetId = node.Resolver!.Target;
  let failovers = node.Resolver!.Failover?.Targets ?? [];
  if (willFailoverThroughMeshGateway(chain, node)) {
    targetId = firstHealthyTarget(chain, health, targetId, failovers);
    failovers = [];
  }
  const first = endpointGroup(chain, health, gateways, targetId, snap.Datacenter);
  if (!first) return undefined;
  const groups = [first];
  for (const f of failovers) {
    const g = endpointGroup(chain, health, gateways, f, snap.Datacenter);
    if (g) groups.push(g);
  }
  return groups;
}

/**
 * `makeLoadAssignmentEndpointGroup`: the target's instances, or for mode local/remote the gateways of the
 * local or target datacenter, marked HEALTHY when any real instance is. Undefined while not yet fetched.
 */
export function endpointGroup(
  chain: CompiledDiscoveryChain,
  health: Readonly<Record<string, readonly CheckServiceNode[]>> | undefined,
  gateways: Readonly<Record<string, readonly CheckServiceNode[]>> | undefined,
  targetId: string,
  localDatacenter: string,
): EndpointGroup | undefined {
  const real = health?.[targetId];
  const target = chain.Targets[targetId];
  if (!real || !target) return undefined;
  const onlyPassing = target.Subset.OnlyPassing ?? false;
  const mode = target.MeshGateway.Mode ?? "";
  const gatewayDc = mode === "remote" ? target.Datacenter : mode === "local" ? localDatacenter : "";
  if (gatewayDc === "") return { endpoints: real, onlyPassing };
  const gws = gateways?.[gatewayDc];
  if (!gws) return undefined;
  const anyHealthy = real.some((ep) => endpointHealthAndWeight(ep, onlyPassing).health === HealthStatus.HEALTHY);
  return { endpoints: gws, onlyPassing: false, overrideHealth: anyHealthy ? HealthStatus.HEALTHY : HealthStatus.UNHEALTHY };
}

/**
 * `makeLoadAssignment`: one LocalityLbEndpoints per group with priority = its index; more than one group
 * sets the overprovisioning factor. Addresses are WAN ones for instances in another datacenter.
 * Endpoints within a band are ordered by address and port, so result order never churns versions.
 * Memoized by the identity of the groups' endpoint arrays (./memo.ts): the result is shared, never mutate it.
 */
export function makeLoadAssignment(clusterName: string, groups: readonly EndpointGroup[], localDatacenter: string): ClusterLoadAssignment {
  // Every proxy with an upstream to the same target holds the same health array: one message for all.
  const key = JSON.stringify([clusterName, localDatacenter, ...groups.map((g) => [g.onlyPassing, g.overrideHealth ?? null])]);
  return loadAssignments.get(groups.map((g) => g.endpoints), key, () => buildLoadAssignment(clusterName, groups, localDatacenter));
}

const loadAssignments = createMemo<ClusterLoadAssignment>();

function buildLoadAssignment(clusterName: string, groups: readonly EndpointGroup[], localDatacenter: string): ClusterLoadAssignment {
  return create(ClusterLoadAssignmentSchema, {
    clusterName,
    endpoints: groups.map((g, priority) => ({
      priority,
      lbEndpoints: sortEndpoints(
        g.endpoints.map((ep) => {
          const { address, port } = bestAddress(ep, localDatacenter !== ep.Node.Datacenter);
          const hw = endpointHealthAndWeight(ep, g.onlyPassing);
          return {
            hostIdentifier: { case: "endpoint" as const, value: { address: socketAddress(address, port) } },
            healthStatus: g.overrideHealth ?? hw.health,
            loadBalancingWeight: hw.weight,
          };
        }),
      ),
    })),
    ...(groups.length > 1 ? { policy: { overprovisioningFactor: FAILOVER_OVERPROVISIONING_FACTOR } } : {}),
  });
}

type LbEndpointInit = { hostIdentifier: { case: "endpoint"; value: { address: ReturnType<typeof socketAddress> } } } & Partial<Pick<LbEndpoint, "healthStatus" | "loadBalancingWeight">>;

function sortEndpoints<T extends LbEndpointInit>(eps: T[]): T[] {
  const key = (e: T) => {
    const a = e.hostIdentifier.value.address.address;
    return a.case === "socketAddress" ? `${a.value.address}\u0000${String(a.value.portSpecifier.value).padStart(5, "0")}` : "";
  };
  return eps.sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
}
