/**
 * ClusterLoadAssignments of a mesh gateway (Consul 1.8 agent/xds/endpoints.go
 * endpointsFromSnapshotMeshGateway, endpointsFromServicesAndResolvers, filterSubsetEndpoints): each remote
 * datacenter's gateways at their WAN addresses (none for a datacenter addressed by host name: its cluster
 * carries them, EDS cannot), and each local service's instances at their LAN addresses, one assignment
 * per resolver subset filtered by the subset's bexpr filter with its OnlyPassing; the unnamed cluster
 * takes the DefaultSubset's group when one is set (Consul PR #7294). Health is carried as endpoint
 * status, never filtered. Sorted by cluster name.
 */
import type { ClusterLoadAssignment } from "../../gen/envoy/config/endpoint/v3/endpoint_pb.ts";
import { CHECK_SERVICE_NODE_SCHEMA, compileFilter, filterList } from "../../connect/index.ts";
import type { CheckServiceNode, ServiceResolverSubset } from "../../model/index.ts";
import type { MeshGatewaySnapshot } from "../../proxycfg/index.ts";
import { byName, ResourceGenerationError } from "./common.ts";
import { makeLoadAssignment, type EndpointGroup } from "./endpoints.ts";
import { hostnameEndpoints } from "./dns_cluster.ts";
import { datacenterGateways, datacenterSni, localServiceCluster, localServices, subsetNames, remoteDatacenters } from "./mesh_gateway_names.ts";

/** All load assignments of the gateway, sorted by cluster name. Throws ResourceGenerationError on a bad subset filter. */
export function meshGatewayEndpoints(snap: MeshGatewaySnapshot): ClusterLoadAssignment[] {
  const out: ClusterLoadAssignment[] = [];
  for (const dc of remoteDatacenters(snap)) {
    const gateways = datacenterGateways(snap, dc);
    if (hostnameEndpoints(snap.Datacenter, gateways).length > 0) continue;
    out.push(makeLoadAssignment(datacenterSni(dc, snap.Roots.TrustDomain), [{ endpoints: gateways, onlyPassing: false }], snap.Datacenter));
  }
  for (const svc of localServices(snap)) {
    const instances = snap.MeshGateway.ServiceGroups[svc]!;
    const resolver = snap.MeshGateway.ServiceResolvers[svc];
    const groups = new Map<string, EndpointGroup>([["", { endpoints: instances, onlyPassing: false }]]);
    for (const name of subsetNames(snap, svc)) {
      const subset = resolver!.Subsets![name]!;
      const group = { endpoints: subsetEndpoints(svc, name, subset, instances), onlyPassing: subset.OnlyPassing ?? false };
      groups.set(name, group);
      if (name === resolver!.DefaultSubset) groups.set("", group);
    }
    for (const [name, group] of groups) out.push(makeLoadAssignment(localServiceCluster(snap, svc, name), [group], snap.Datacenter));
  }
  return byName(out, (c) => c.clusterName);
}

/** `filterSubsetEndpoints`: the instances the subset's filter selects (all of them without a filter). */
function subsetEndpoints(service: string, name: string, subset: ServiceResolverSubset, instances: readonly CheckServiceNode[]): readonly CheckServiceNode[] {
  if (!subset.Filter) return instances;
  try {
    return filterList(instances, compileFilter(subset.Filter, CHECK_SERVICE_NODE_SCHEMA));
  } catch (err) {
    throw new ResourceGenerationError(`service-resolver ${service} subset ${name}: ${err instanceof Error ? err.message : String(err)}`);
  }
}
