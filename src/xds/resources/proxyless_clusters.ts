/**
 * Clusters and ClusterLoadAssignments of a proxyless gRPC client (gRFC A27). Per resolver of every
 * upstream chain: an EDS cluster (named as the sidecar's, the target's SNI-style name with the `<hash>~`
 * prefix when overrides customized the chain) whose endpoints come over ADS, ROUND_ROBIN; and its load
 * assignment: one LocalityLbEndpoints per priority band -- the resolver's target, then each failover
 * target in order -- with the target's datacenter as locality region and `load_balancing_weight` 1.
 * Endpoints are the target service's own instances (a proxyless client dials them directly, without
 * Connect TLS; mesh gateways are never used), each with its health and weight as the sidecar computes
 * them (./health.ts). gRPC uses only HEALTHY/UNKNOWN endpoints, and a band with none is skipped, so
 * failover needs no overprovisioning factor (gRPC clients announce
 * `envoy.lb.does_not_support_overprovisioning`). gRPC accepts only IP literals and no duplicate address in
 * one assignment: an instance whose address is a host name, or that an earlier band already holds, is
 * left out. Returned sorted by name.
 */
import { create } from "@bufbuild/protobuf";
import { ClusterSchema, Cluster_DiscoveryType, Cluster_LbPolicy, type Cluster } from "../../gen/envoy/config/cluster/v3/cluster_pb.ts";
import { ApiVersion } from "../../gen/envoy/config/core/v3/config_source_pb.ts";
import { ClusterLoadAssignmentSchema, type ClusterLoadAssignment } from "../../gen/envoy/config/endpoint/v3/endpoint_pb.ts";
import type { CheckServiceNode } from "../../model/index.ts";
import type { ProxylessSnapshot } from "../../proxycfg/index.ts";
import { byName, customizeClusterName, goDuration, isIpLiteral, resolverNodes, ResourceGenerationError, socketAddress } from "./common.ts";
import { bestAddress, endpointHealthAndWeight } from "./health.ts";

/** One EDS cluster per resolver of every upstream chain, sorted by name (first occurrence wins). */
export function proxylessClusters(snap: ProxylessSnapshot): Cluster[] {
  const out = new Map<string, Cluster>();
  for (const u of Object.values(snap.Upstreams)) {
    for (const node of resolverNodes(u.Chain)) {
      const r = node.Resolver!;
      const target = u.Chain.Targets[r.Target];
      if (!target) throw new ResourceGenerationError(`discovery chain for ${u.Chain.ServiceName} has no target ${r.Target}`);
      const name = customizeClusterName(target.Name, u.Chain);
      if (out.has(name)) continue;
      out.set(name, create(ClusterSchema, {
        name,
        altStatName: name,
        clusterDiscoveryType: { case: "type", value: Cluster_DiscoveryType.EDS },
        edsClusterConfig: { edsConfig: { resourceApiVersion: ApiVersion.V3, configSourceSpecifier: { case: "ads", value: {} } } },
        connectTimeout: goDuration(r.ConnectTimeout || "5s"),
        lbPolicy: Cluster_LbPolicy.ROUND_ROBIN,
      }));
    }
  }
  return byName([...out.values()], (c) => c.name);
}

/**
 * The load assignment of every cluster whose primary target's instances are known (a cluster without one
 * yet is left out, as the sidecar's are), sorted by cluster name. Failover targets not fetched yet are
 * skipped; the bands that are present keep consecutive priorities.
 */
export function proxylessEndpoints(snap: ProxylessSnapshot): ClusterLoadAssignment[] {
  const out = new Map<string, ClusterLoadAssignment>();
  for (const u of Object.values(snap.Upstreams)) {
    for (const node of resolverNodes(u.Chain)) {
      const r = node.Resolver!;
      const primary = u.Chain.Targets[r.Target];
      if (!primary || !u.TargetEndpoints[r.Target]) continue;
      const name = customizeClusterName(primary.Name, u.Chain);
      if (out.has(name)) continue;
      const seen = new Set<string>();
      const bands = [r.Target, ...(r.Failover?.Targets ?? [])].flatMap((tid) => {
        const t = u.Chain.Targets[tid];
        const eps = u.TargetEndpoints[tid];
        return t && eps ? [{ datacenter: t.Datacenter, endpoints: lbEndpoints(eps, t.Subset.OnlyPassing ?? false, snap.Datacenter, seen) }] : [];
      });
      out.set(name, create(ClusterLoadAssignmentSchema, {
        clusterName: name,
        endpoints: bands.map((b, priority) => ({ locality: { region: b.datacenter }, priority, loadBalancingWeight: 1, lbEndpoints: b.endpoints })),
      }));
    }
  }
  return byName([...out.values()], (c) => c.clusterName);
}

/** The band's endpoints ordered by address and port; host names and addresses already `seen` left out. */
function lbEndpoints(instances: readonly CheckServiceNode[], onlyPassing: boolean, localDatacenter: string, seen: Set<string>) {
  const eps = instances.flatMap((ep) => {
    const { address, port } = bestAddress(ep, ep.Node.Datacenter !== localDatacenter);
    const key = `${address}\u0000${String(port).padStart(5, "0")}`;
    if (!isIpLiteral(address) || seen.has(key)) return [];
    seen.add(key);
    const hw = endpointHealthAndWeight(ep, onlyPassing);
    return [{ key, init: { hostIdentifier: { case: "endpoint" as const, value: { address: socketAddress(address, port) } }, healthStatus: hw.health, loadBalancingWeight: hw.weight } }];
  });
  return eps.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0)).map((e) => e.init);
}
