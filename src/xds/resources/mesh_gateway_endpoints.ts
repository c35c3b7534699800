/**
 * ClusterLoadAssignments of a mesh gateway (Consul 1.8 agent/xds/endpoints.go
 * endpointsFromSnapshotMeshGateway, endpointsFromServicesAndResolvers, filterSubsetEndpoints): each remote
 * datacenter's gateways at their WAN addresses (none for a datacenter addressed by host name: its cluster
 * carries them, EDS cannot), and each local service's instances at their LAN addresses, one assignment
 * per resolver subset filtered by the subset's bexpr filter with its OnlyPassing; the unnamed cluster
 * takes the DefaultSubset's group when one is set (Consul PR #7294). Health is carried as endpoint
 * status, never filtered. A WAN federation gateway adds `server.<dc>.<domain>` per remote datacenter (the
 * same gateways as `<dc>.internal.<td>`) and its local servers' assignments. Sorted by cluster name.
 */
import { create } from "@bufbuild/protobuf";
import { ClusterLoadAssignmentSchema, type ClusterLoadAssignment } from "../../gen/envoy/config/endpoint/v3/endpoint_pb.ts";
import { CHECK_SERVICE_NODE_SCHEMA, compileFilter, filterList } from "../../connect/index.ts";
import type { CheckServiceNode, ServiceResolverSubset } from "../../model/index.ts";
import type { MeshGatewaySnapshot } from "../../proxycfg/index.ts";
import { byName, ResourceGenerationError, socketAddress } from "./common.ts";
import { bestAddress } from "./health.ts";
import { makeLoadAssignment, type EndpointGroup } from "./endpoints.ts";
import { hostnameEndpoints } from "./dns_cluster.ts";
import {
  datacenterGateways, datacenterSni, localServiceCluster, localServices, remoteDatacenters, routesToServers, serverName, subsetNames,
} from "./mesh_gateway_names.ts";

/** All load assignments of the gateway, sorted by cluster name. Throws ResourceGenerationError on a bad subset filter. */
export function meshGatewayEndpoints(snap: MeshGatewaySnapshot): ClusterLoadAssignment[] {
  const out: ClusterLoadAssignment[] = [];
  const wanfed = routesToServers(snap);
  for (const dc of remoteDatacenters(snap)) {
    const gateways = datacenterGateways(snap, dc);
    if (hostnameEndpoints(snap.Datacenter, gateways).length > 0) continue;
    const group = [{ endpoints: gateways, onlyPassing: false }];
    out.push(makeLoadAssignment(datacenterSni(dc, snap.Roots.TrustDomain), group, snap.Datacenter));
    if (wanfed) out.push(makeLoadAssignment(serverName(snap, dc), group, snap.Datacenter));
  }
  if (wanfed) out.push(...localServerEndpoints(snap));
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

/**
 * A WAN federation gateway's own servers: `<node>.server.<dc>.<domain>` with that server alone, and the
 * catch-all `server.<dc>.<domain>` with all of them (in the server list's order), each at its LAN
 * address and the "consul" service's port (the server RPC port), health UNKNOWN and no weight (Consul
 * 1.8 endpointsFromSnapshotMeshGateway: the server port sniffs TLS and dispatches by ALPN).
 */
function localServerEndpoints(snap: MeshGatewaySnapshot): ClusterLoadAssignment[] {
  const endpoint = (srv: CheckServiceNode) => {
    const { address, port } = bestAddress(srv, false);
    return { hostIdentifier: { case: "endpoint" as const, value: { address: socketAddress(address, port) } } };
  };
  const servers = snap.MeshGateway.ConsulServers;
  const out = servers.map((srv) =>
    create(ClusterLoadAssignmentSchema, { clusterName: serverName(snap, snap.Datacenter, srv.Node.Node), endpoints: [{ lbEndpoints: [endpoint(srv)] }] }),
  );
  out.push(create(ClusterLoadAssignmentSchema, { clusterName: serverName(snap, snap.Datacenter), endpoints: [{ lbEndpoints: servers.map(endpoint) }] }));
  return out;
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
