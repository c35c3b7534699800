/**
 * Clusters of a connect-proxy sidecar (Consul 1.8 agent/xds/clusters.go, v3 shapes): `local_app`, one
 * cluster per exposed local port, one EDS cluster per resolver of every upstream chain (named by the
 * target's SNI, `<hash>~` when overrides customized the chain; a DNS cluster when reached through mesh
 * gateways addressed by host name: ./sidecar_dns.ts), and one per prepared-query upstream.
 * Upstream clusters carry mTLS (leaf, roots, SNI, accepted SPIFFE IDs), the connect timeout, outlier
 * detection (`passive_health_check`, Envoy defaults when empty) and circuit breakers (`limits`).
 * Returned sorted by name, first occurrence winning for duplicate names.
 */
import { create } from "@bufbuild/protobuf";
import { ClusterSchema, Cluster_DiscoveryType, type Cluster } from "../../gen/envoy/config/cluster/v3/cluster_pb.ts";
import { ApiVersion } from "../../gen/envoy/config/core/v3/config_source_pb.ts";
import type { CompiledDiscoveryChain, DiscoveryGraphNode } from "../../connect/index.ts";
import type { Upstream } from "../../model/index.ts";
import { upstreamDatacenter, upstreamIdentifier, type SidecarSnapshot } from "../../proxycfg/index.ts";
import { byName, customizeClusterName, durationMs, goDuration, isDefaultChain, LOCAL_APP_CLUSTER, resolverNodes, ResourceGenerationError, socketAddress, willFailoverThroughMeshGateway } from "./common.ts";
import { parseProxyConfig, parseUpstreamConfig, withUpstreamDefaults, type UpstreamConfig } from "./config.ts";
import { dnsClusterFields, type DnsEndpoint } from "./dns_cluster.ts";
import { resolverEndpointGroups } from "./endpoints.ts";
import { clusterFromUserConfig } from "./escape_hatch.ts";
import { firstHealthyTarget } from "./health.ts";
import { createMemo } from "./memo.ts";
import { exposeClusterName, exposedPaths, upstreamSni } from "./names.ts";
import { gatewayDnsEndpoint, sidecarDnsDiscoveryType } from "./sidecar_dns.ts";
import { serviceSpiffeId, upstreamTlsSocket } from "./tls.ts";

/** All clusters of the sidecar, sorted by name. Throws ResourceGenerationError on a bad escape hatch. */
export function sidecarClusters(snap: SidecarSnapshot): Cluster[] {
  const out = new Map<string, Cluster>();
  const add = (c: Cluster) => {
    if (!out.has(c.name)) out.set(c.name, c);
  };
  add(appCluster(snap, LOCAL_APP_CLUSTER, "", snap.Proxy.LocalServicePort ?? 0));
  for (const u of snap.Proxy.Upstreams ?? []) {
    if (u.DestinationType === "prepared_query") add(preparedQueryCluster(snap, u));
    else for (const c of chainClusters(snap, u)) add(c);
  }
  for (const p of exposedPaths(snap)) {
    const port = p.LocalPathPort ?? 0;
    if (port !== (snap.Proxy.LocalServicePort ?? 0)) add(appCluster(snap, exposeClusterName(port), p.Protocol ?? "", port));
  }
  return byName([...out.values()], (c) => c.name);
}

/**
 * `makeAppCluster`: STATIC to LocalServiceAddress (default 127.0.0.1) and `port`, timeout
 * `local_connect_timeout_ms`; `envoy_local_cluster_json` replaces it (also for exposed-path clusters, as in
 * Consul).
 */
export function appCluster(snap: SidecarSnapshot, name: string, pathProtocol: string, port: number): Cluster {
  const { config: cfg } = parseProxyConfig(snap.Proxy.Config);
  if (cfg.localClusterJson !== "") return clusterFromUserConfig("envoy_local_cluster_json", cfg.localClusterJson);
  const protocol = pathProtocol || cfg.protocol;
  return create(ClusterSchema, {
    name,
    clusterDiscoveryType: { case: "type", value: Cluster_DiscoveryType.STATIC },
    connectTimeout: durationMs(cfg.localConnectTimeoutMs),
    loadAssignment: {
      clusterName: name,
      endpoints: [{ lbEndpoints: [{ hostIdentifier: { case: "endpoint", value: { address: socketAddress(snap.Proxy.LocalServiceAddress || "127.0.0.1", port) } } }] }],
    },
    ...(protocol === "http2" || protocol === "grpc" ? { http2ProtocolOptions: {} } : {}),
  });
}

/**
 * How an upstream cluster finds its endpoints: EDS over ADS, or when `dns` is given a DNS cluster carrying
 * that endpoint inline (./sidecar_dns.ts, ./dns_cluster.ts), `setting` being `envoy_dns_discovery_type`.
 */
function discovery(name: string, dns: DnsEndpoint | undefined, setting: unknown) {
  if (dns) return dnsClusterFields(name, setting, dns);
  return {
    clusterDiscoveryType: { case: "type" as const, value: Cluster_DiscoveryType.EDS },
    edsClusterConfig: { edsConfig: { resourceApiVersion: ApiVersion.V3, configSourceSpecifier: { case: "ads" as const, value: {} } } },
  };
}

/** Name, connect timeout, circuit breakers and outlier detection of an upstream cluster (its discovery aside). */
function upstreamClusterInit(name: string, connectTimeout: ReturnType<typeof durationMs>, cfg: UpstreamConfig) {
  const lim = cfg.limits;
  const limited = lim.maxConnections !== undefined || lim.maxPendingRequests !== undefined || lim.maxConcurrentRequests !== undefined;
  const phc = cfg.passiveHealthCheck;
  return {
    name,
    connectTimeout,
    circuitBreakers: {
      thresholds: limited
        ? [{ maxConnections: nonNegative(lim.maxConnections), maxPendingRequests: nonNegative(lim.maxPendingRequests), maxRequests: nonNegative(lim.maxConcurrentRequests) }]
        : [],
    },
    // An empty OutlierDetection turns passive health checking on with Envoy's defaults.
    outlierDetection: {
      ...(phc.intervalMs > 0 ? { interval: durationMs(phc.intervalMs) } : {}),
      ...(phc.maxFailures > 0 ? { consecutive5xx: phc.maxFailures } : {}),
    },
  };
}

function nonNegative(n: number | undefined): number | undefined {
  return n === undefined || n < 0 ? undefined : Math.min(n, 0xffffffff);
}

/**
 * `makeUpstreamClustersForDiscoveryChain`: one cluster per resolver node, EDS unless it is reached through
 * mesh gateways addressed by host name (then a DNS cluster: ./sidecar_dns.ts). With failover through mesh
 * gateways the cluster keeps the primary's name but dials the first healthy target's SNI. The server's
 * certificate must carry the SPIFFE ID of the target or of one of its failover targets.
 * `envoy_cluster_json` replaces the cluster of a default chain only (Connect TLS is still injected).
 * Memoized by input identity (./memo.ts): the clusters are shared, never mutate them.
 */
export function chainClusters(snap: SidecarSnapshot, u: Upstream): readonly Cluster[] {
  const id = upstreamIdentifier(u);
  const chain = snap.ConnectProxy.DiscoveryChain[id];
  if (!chain) return []; // not fetched yet
  const nodes = resolverNodes(chain);
  // Failover through mesh gateways depends on the targets' health (a per-snapshot record): not memoized.
  if (nodes.some((n) => willFailoverThroughMeshGateway(chain, n))) return buildChainClusters(snap, u, id, chain);
  // Otherwise the clusters depend on the chain, the leaf, the roots, the trust domain and the upstream's
  // identifier and Config, and, for a target reached through gateways addressed by host name, on the
  // endpoint its DNS cluster carries and the proxy's `envoy_dns_discovery_type` (which decide the type).
  // (The roots array is the agent cache's; proxycfg wraps it per proxy.)
  const dns = nodes.map((n) => resolverDnsEndpoint(snap, id, chain, n) ?? null);
  const dnsKey = dns.some((d) => d !== null) ? [dns, sidecarDnsDiscoveryType(snap) ?? null] : null;
  const key = JSON.stringify([id, u.Config ?? null, snap.Roots.TrustDomain, dnsKey]);
  return chainClusterMemo.get([chain, snap.ConnectProxy.Leaf, snap.Roots.Roots], key, () => buildChainClusters(snap, u, id, chain));
}

const chainClusterMemo = createMemo<readonly Cluster[]>();

/** The endpoint of the resolver's DNS cluster, undefined when it is an EDS cluster. */
function resolverDnsEndpoint(snap: SidecarSnapshot, id: string, chain: CompiledDiscoveryChain, node: DiscoveryGraphNode): DnsEndpoint | undefined {
  const groups = resolverEndpointGroups(snap, id, chain, node);
  return groups && gatewayDnsEndpoint(groups, snap.Datacenter);
}

function buildChainClusters(snap: SidecarSnapshot, u: Upstream, id: string, chain: CompiledDiscoveryChain): Cluster[] {
  const cfg = parseUpstreamConfig(u.Config, id).config;
  const protocol = cfg.protocol || chain.Protocol || "tcp";
  const dnsSetting = sidecarDnsDiscoveryType(snap);
  const out: Cluster[] = [];
  for (const node of resolverNodes(chain)) {
    const r = node.Resolver!;
    const target = chain.Targets[r.Target];
    if (!target) throw new ResourceGenerationError(`discovery chain for ${chain.ServiceName} has no target ${r.Target}`);
    const failovers = r.Failover?.Targets ?? [];
    let sni = target.SNI;
    if (willFailoverThroughMeshGateway(chain, node)) {
      const actual = firstHealthyTarget(chain, snap.ConnectProxy.WatchedUpstreamEndpoints[id], r.Target, failovers);
      if (actual !== r.Target) sni = chain.Targets[actual]!.SNI;
    }
    const name = customizeClusterName(target.Name, chain);
    const c = create(ClusterSchema, {
      ...upstreamClusterInit(name, goDuration(r.ConnectTimeout || "5s"), cfg),
      ...discovery(name, resolverDnsEndpoint(snap, id, chain, node), dnsSetting),
      altStatName: name,
      // A zero panic threshold: never spread load over unhealthy hosts.
      commonLbConfig: { healthyPanicThreshold: {} },
      transportSocket: upstreamTlsSocket(snap, sni, targetSpiffeIds(snap, chain, [r.Target, ...failovers])),
      ...(protocol === "http2" || protocol === "grpc" ? { http2ProtocolOptions: {} } : {}),
    });
    out.push(c);
  }
  if (cfg.clusterJson !== "" && isDefaultChain(chain)) {
    if (out.length !== 1) throw new ResourceGenerationError("cannot inject escape hatch cluster when discovery chain had no nodes");
    const hatch = clusterFromUserConfig(`upstream ${id} envoy_cluster_json`, cfg.clusterJson);
    hatch.transportSocket = out[0]!.transportSocket;
    return [hatch];
  }
  return out;
}

function targetSpiffeIds(snap: SidecarSnapshot, chain: CompiledDiscoveryChain, targetIds: readonly string[]): string[] {
  const ids = new Set<string>();
  for (const tid of targetIds) {
    const t = chain.Targets[tid];
    if (t) ids.add(serviceSpiffeId(snap, t.Service, t.Namespace, t.Datacenter));
  }
  return [...ids].sort();
}

/**
 * `makeUpstreamClusterForPreparedQuery`: EDS cluster named by the query SNI, timeout `connect_timeout_ms`
 * (default 5000); the accepted SPIFFE IDs are those of the services the query returned.
 * `envoy_cluster_json` replaces it (TLS injected).
 */
export function preparedQueryCluster(snap: SidecarSnapshot, u: Upstream): Cluster {
  const id = upstreamIdentifier(u);
  const cfg = withUpstreamDefaults(parseUpstreamConfig(u.Config, id).config);
  const sni = upstreamSni(snap, u, upstreamDatacenter(u, snap.Datacenter));
  const c =
    cfg.clusterJson !== ""
      ? clusterFromUserConfig(`upstream ${id} envoy_cluster_json`, cfg.clusterJson)
      : create(ClusterSchema, {
          ...upstreamClusterInit(sni, durationMs(cfg.connectTimeoutMs), cfg),
          ...discovery(sni, undefined, undefined),
          ...(cfg.protocol === "http2" || cfg.protocol === "grpc" ? { http2ProtocolOptions: {} } : {}),
        });
  const ids = new Set<string>();
  for (const ep of snap.ConnectProxy.PreparedQueryEndpoints[id] ?? []) {
    const svc = ep.Service.Connect.Native ? ep.Service.Service : (ep.Service.Proxy.DestinationServiceName ?? "");
    if (svc !== "") ids.add(serviceSpiffeId(snap, svc, "default", ep.Node.Datacenter));
  }
  c.transportSocket = upstreamTlsSocket(snap, sni, [...ids].sort());
  return c;
}
