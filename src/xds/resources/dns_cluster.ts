/**
 * DNS clusters for endpoints addressed by host name (Consul PR #7999, agent/xds/clusters.go
 * makeGatewayCluster with its hostname endpoints). EDS cannot carry host names: Envoy rejects a
 * ClusterLoadAssignment whose socket address is not an IP ("malformed IP address"), and rejecting one
 * response rejects every assignment in it. Such a cluster therefore resolves the name itself: LOGICAL_DNS
 * by default, STRICT_DNS when `envoy_dns_discovery_type` says `strict_dns` (any case), re-resolving every
 * 10 s, IPv4 only, with an inline load assignment of ONE endpoint (LOGICAL_DNS takes a single host; Consul
 * 1.8 sends one for STRICT_DNS too, PR #19268 later allowed more). No ClusterLoadAssignment may be sent
 * for it. Shared by the mesh gateway's datacenter clusters and the sidecar's clusters reached through
 * mesh gateways (./sidecar_dns.ts).
 */
import { Cluster_DiscoveryType, Cluster_DnsLookupFamily } from "../../gen/envoy/config/cluster/v3/cluster_pb.ts";
import type { CheckServiceNode } from "../../model/index.ts";
import { durationMs, isIpLiteral, socketAddress } from "./common.ts";
import { bestAddress, endpointHealthAndWeight, HealthStatus } from "./health.ts";

/** DNS clusters re-resolve every 10 s (Consul's fixed value). */
export const DNS_REFRESH_MS = 10_000;

/**
 * Whether `address` must be resolved by DNS: non-empty and not an IPv4 or IPv6 literal as Go's
 * net.ParseIP reads them (what Consul tests). IPv6 literals are written without brackets (`2001:db8::1`,
 * `::ffff:10.0.0.1`), the only form Envoy's socket address takes; a bracketed (`[::1]`) or zoned
 * (`fe80::1%eth0`) form is not an IP to Go either, so it is treated as a host name (as in Consul): a DNS
 * cluster that fails to resolve it hurts only its own cluster, where EDS would have the response rejected.
 */
export function isHostname(address: string): boolean {
  return address !== "" && !isIpLiteral(address);
}

/**
 * `hostnameEndpoints`: the instances whose best address (WAN for another datacenter than `localDc`) is a
 * host name. With a mix of host names and IPs only the host names are used (Consul warns and does the same:
 * "whenever there is a mix of hostnames and IP addresses associated with a service we use the hostname +
 * CDS rather than the IPs + EDS", PR #7999). Empty when every address is an IP: EDS fits.
 */
export function hostnameEndpoints(localDc: string, nodes: readonly CheckServiceNode[]): CheckServiceNode[] {
  return nodes.filter((n) => isHostname(bestAddress(n, localDc !== n.Node.Datacenter).address));
}

/** The one endpoint a DNS cluster carries (a plain value: it can go into memo keys). */
export interface DnsEndpoint {
  readonly address: string;
  readonly port: number;
  readonly health: HealthStatus;
  readonly weight: number;
}

/**
 * The endpoint of a DNS cluster over `hostnames` (non-empty, from `hostnameEndpoints`): the first one
 * that is healthy by its own checks, else the last unhealthy one (Consul's rule, as LOGICAL_DNS takes a
 * single host). `wan(ep)` says whether its WAN address applies. The endpoint carries `overrideHealth` when
 * given (a gateway standing for the instances behind it), else its own health.
 */
export function pickDnsEndpoint(hostnames: readonly CheckServiceNode[], wan: (ep: CheckServiceNode) => boolean, overrideHealth?: HealthStatus): DnsEndpoint {
  let chosen: DnsEndpoint | undefined;
  let fallback: DnsEndpoint | undefined;
  for (const ep of hostnames) {
    const { address, port } = bestAddress(ep, wan(ep));
    const { health, weight } = endpointHealthAndWeight(ep, false);
    const e = { address, port, health: overrideHealth ?? health, weight };
    if (health !== HealthStatus.UNHEALTHY) {
      chosen = e;
      break;
    }
    fallback = e;
  }
  const picked = chosen ?? fallback;
  if (!picked) throw new RangeError("pickDnsEndpoint: no host names given");
  return picked;
}

/** The discovery type for an `envoy_dns_discovery_type` value: STRICT_DNS for "strict_dns" (any case), else LOGICAL_DNS. */
export function dnsDiscoveryType(setting: unknown): Cluster_DiscoveryType {
  return typeof setting === "string" && setting.toLowerCase() === "strict_dns" ? Cluster_DiscoveryType.STRICT_DNS : Cluster_DiscoveryType.LOGICAL_DNS;
}

/**
 * The fields that make cluster `name` a DNS cluster over `endpoint`: discovery type (from the
 * `envoy_dns_discovery_type` value `setting`), refresh rate, IPv4 lookups and the inline load assignment.
 * Spread into the cluster's init in place of the EDS type and `eds_cluster_config`.
 */
export function dnsClusterFields(name: string, setting: unknown, endpoint: DnsEndpoint) {
  return {
    clusterDiscoveryType: { case: "type" as const, value: dnsDiscoveryType(setting) },
    dnsRefreshRate: durationMs(DNS_REFRESH_MS),
    dnsLookupFamily: Cluster_DnsLookupFamily.V4_ONLY,
    loadAssignment: {
      clusterName: name,
      endpoints: [
        {
          lbEndpoints: [
            {
              hostIdentifier: { case: "endpoint" as const, value: { address: socketAddress(endpoint.address, endpoint.port) } },
              healthStatus: endpoint.health,
              loadBalancingWeight: endpoint.weight,
            },
          ],
        },
      ],
    },
  };
}
