/**
 * Clusters of a mesh gateway (Consul 1.8 agent/xds/clusters.go clustersFromSnapshotMeshGateway,
 * makeGatewayServiceClusters, makeGatewayCluster; v3 shapes): one per remote datacenter
 * (`<dc>.internal.<td>`), one per local service with instances and one per subset of its resolver. A
 * WAN federation gateway adds `server.<dc>.<domain>` per remote datacenter (that datacenter's gateways,
 * a DNS cluster when they are addressed by host name, as its `<dc>.internal` cluster), the catch-all
 * `server.<localdc>.<domain>` and `<node>.server.<localdc>.<domain>` per local server. No TLS (the
 * gateway passes TLS through) and never hash-based load balancing. Sorted by name.
 *
 * Unlike Consul 1.8, `server.<localdc>.<domain>` is made whenever the gateway routes to servers: Consul
 * makes it only while the local datacenter's own federation state lists gateways (its datacenter list
 * is GatewayGroups plus FedStateGateways), yet always sends its endpoints; without the cluster a remote
 * server dialling "any server here" (a secondary joining the primary) finds no route until then.
 */
import { create } from "@bufbuild/protobuf";
import { ClusterSchema, Cluster_DiscoveryType, type Cluster } from "../../gen/envoy/config/cluster/v3/cluster_pb.ts";
import { ApiVersion } from "../../gen/envoy/config/core/v3/config_source_pb.ts";
import type { CheckServiceNode } from "../../model/index.ts";
import type { MeshGatewaySnapshot } from "../../proxycfg/index.ts";
import { parseDuration } from "../../lib/index.ts";
import { byName, durationMs } from "./common.ts";
import { dnsClusterFields, hostnameEndpoints, pickDnsEndpoint } from "./dns_cluster.ts";
import { parseGatewayConfig, type GatewayConfig } from "./mesh_gateway_config.ts";
import {
  datacenterGateways, datacenterSni, localServiceCluster, localServices, remoteDatacenters, routesToServers, serverName, subsetNames,
} from "./mesh_gateway_names.ts";

/** All clusters of the gateway, sorted by name. */
export function meshGatewayClusters(snap: MeshGatewaySnapshot): Cluster[] {
  const cfg = parseGatewayConfig(snap.Proxy.Config).config;
  const out: Cluster[] = [];
  const wanfed = routesToServers(snap);
  for (const dc of remoteDatacenters(snap)) {
    const hostnames = hostnameEndpoints(snap.Datacenter, datacenterGateways(snap, dc));
    out.push(gatewayCluster(cfg, datacenterSni(dc, snap.Roots.TrustDomain), 0, hostnames, true));
    if (wanfed) out.push(gatewayCluster(cfg, serverName(snap, dc), 0, hostnames, true));
  }
  if (wanfed) {
    out.push(gatewayCluster(cfg, serverName(snap, snap.Datacenter), 0, [], false));
    for (const srv of snap.MeshGateway.ConsulServers) out.push(gatewayCluster(cfg, serverName(snap, snap.Datacenter, srv.Node.Node), 0, [], false));
  }
  for (const svc of localServices(snap)) {
    const timeoutMs = resolverTimeoutMs(snap.MeshGateway.ServiceResolvers[svc]?.ConnectTimeout);
    out.push(gatewayCluster(cfg, localServiceCluster(snap, svc, ""), timeoutMs, [], false));
    for (const subset of subsetNames(snap, svc)) out.push(gatewayCluster(cfg, localServiceCluster(snap, svc, subset), timeoutMs, [], false));
  }
  return byName(out, (c) => c.name);
}

/** A resolver's ConnectTimeout in ms, 0 when unset or unreadable (then `connect_timeout_ms` applies). */
function resolverTimeoutMs(text: string | undefined): number {
  if (!text) return 0;
  try {
    return parseDuration(text);
  } catch {
    return 0;
  }
}

/**
 * `makeGatewayCluster`: connect timeout (the resolver's, else `connect_timeout_ms`), outlier detection with
 * Envoy's defaults, and EDS over ADS; when instances are addressed by host name, a DNS cluster
 * (./dns_cluster.ts: LOGICAL_DNS, or STRICT_DNS by `envoy_dns_discovery_type`, one endpoint).
 */
function gatewayCluster(cfg: GatewayConfig, name: string, timeoutMs: number, hostnames: readonly CheckServiceNode[], isRemote: boolean): Cluster {
  const base = {
    name,
    connectTimeout: durationMs(timeoutMs > 0 ? timeoutMs : cfg.connectTimeoutMs),
    outlierDetection: {},
  };
  if (hostnames.length === 0) {
    return create(ClusterSchema, {
      ...base,
      clusterDiscoveryType: { case: "type", value: Cluster_DiscoveryType.EDS },
      edsClusterConfig: { edsConfig: { resourceApiVersion: ApiVersion.V3, configSourceSpecifier: { case: "ads", value: {} } } },
    });
  }
  return create(ClusterSchema, { ...base, ...dnsClusterFields(name, cfg.dnsDiscoveryType, pickDnsEndpoint(hostnames, () => isRemote)) });
}
