/**
 * What the mesh gateway's listeners, clusters and endpoints agree on (Consul 1.8 agent/xds and
 * agent/proxycfg): the remote datacenters (configSnapshotMeshGateway.Datacenters), where a datacenter's
 * gateways come from, the datacenter cluster name (connect.DatacenterSNI) and the local services' cluster
 * names; for a WAN federation gateway, the server names it routes (tlsutil ServerSNI). Which gateways are
 * addressed by host name: ./dns_cluster.ts hostnameEndpoints.
 */
import type { CheckServiceNode } from "../../model/index.ts";
import { exposesServers, type MeshGatewaySnapshot } from "../../proxycfg/index.ts";
import { serviceSni } from "../../connect/index.ts";
import { fresherGateways, serverSni } from "../../federation/index.ts";

/** `DatacenterSNI`: `<dc>.internal.<trust domain>`, the cluster of a remote datacenter's gateways. */
export function datacenterSni(dc: string, trustDomain: string): string {
  return `${dc}.internal.${trustDomain}`;
}

/**
 * The other datacenters that have gateways, sorted: those of GatewayGroups and FedStateGateways, without
 * the local one. Datacenters whose lists are empty are left out (Consul never stores them).
 */
export function remoteDatacenters(snap: MeshGatewaySnapshot): string[] {
  const mg = snap.MeshGateway;
  const dcs = new Set<string>();
  for (const groups of [mg.GatewayGroups, mg.FedStateGateways]) {
    for (const [dc, nodes] of Object.entries(groups)) if (nodes.length > 0 && dc !== snap.Datacenter) dcs.add(dc);
  }
  return [...dcs].sort();
}

/**
 * A datacenter's gateways: the fresher of its catalog listing (GatewayGroups) and its federation state's
 * (FedStateGateways), by the largest Service.ModifyIndex (Consul PR #11522, fixing #10132: a remote
 * catalog that cannot be refreshed must not hide the newer address the federation state delivered); the
 * catalog's on a tie or without a federation state. Consul 1.8 preferred the catalog whenever it had any.
 */
export function datacenterGateways(snap: MeshGatewaySnapshot, dc: string): readonly CheckServiceNode[] {
  const mg = snap.MeshGateway;
  return fresherGateways(mg.GatewayGroups[dc], mg.FedStateGateways[dc]).gateways;
}

/** The cluster of a local service (`subset` "" for the unnamed one): its SNI in the gateway's datacenter. */
export function localServiceCluster(snap: MeshGatewaySnapshot, service: string, subset: string): string {
  return serviceSni(service, subset, "default", snap.Datacenter, snap.Roots.TrustDomain);
}

/** The local services with instances, sorted (only those get clusters and endpoints: Consul PR #7294). */
export function localServices(snap: MeshGatewaySnapshot): string[] {
  return Object.entries(snap.MeshGateway.ServiceGroups)
    .filter(([, nodes]) => nodes.length > 0)
    .map(([svc]) => svc)
    .sort();
}

/** A resolver's subset names, sorted. */
export function subsetNames(snap: MeshGatewaySnapshot, service: string): string[] {
  return Object.keys(snap.MeshGateway.ServiceResolvers[service]?.Subsets ?? {}).sort();
}

/**
 * Whether the gateway routes to servers for WAN federation: registered with Meta `consul-wan-federation`
 * = "1" (`-expose-servers`; Consul also needs its ServerSNIFn, which every agent has).
 */
export function routesToServers(snap: MeshGatewaySnapshot): boolean {
  return exposesServers(snap.ServiceMeta);
}

/**
 * A server name in the gateway's domain (ServerSNIFn): `<node>.server.<dc>.<domain>`, or with `node` ""
 * the name for any server of `dc`, `server.<dc>.<domain>`, which is also the cluster's name.
 */
export function serverName(snap: MeshGatewaySnapshot, dc: string, node = ""): string {
  return serverSni(dc, node, snap.Domain);
}
