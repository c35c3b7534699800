/**
 * When a sidecar's upstream cluster is a DNS cluster. An upstream reached through mesh gateways (failover
 * through gateways in mode local: the local datacenter's gateways at their LAN addresses; mode remote: the
 * target datacenter's gateways at their WAN addresses) has the gateways as its endpoints. Gateways are
 * often addressed by host name (a cloud load balancer's DNS name), which EDS cannot carry (Envoy: "malformed
 * IP address"). Consul shipped this bug for sidecars until hashicorp/consul PR #23543; here the cluster
 * becomes a DNS cluster with the mesh gateway's own rule (PR #7999, ./dns_cluster.ts): LOGICAL_DNS, or
 * STRICT_DNS by the proxy's `envoy_dns_discovery_type`, one endpoint, host names preferred over IPs when
 * mixed, and no ClusterLoadAssignment. When failover returns to a target whose endpoints are IPs (the
 * healthy local instances), the cluster is EDS again.
 */
import type { SidecarSnapshot } from "../../proxycfg/index.ts";
import { hostnameEndpoints, pickDnsEndpoint, type DnsEndpoint } from "./dns_cluster.ts";
import type { EndpointGroup } from "./endpoints.ts";

/**
 * The endpoint of the DNS cluster for a resolver whose endpoint groups (./endpoints.ts
 * resolverEndpointGroups) are `groups`, or undefined when EDS fits. A cluster is a DNS cluster when one of
 * its groups is mesh gateways (a group with an override health) with any host-name address; it carries
 * the first such group's chosen host name, healthy exactly when the instances behind the gateways are
 * (their override health). Any other priority band of such a cluster is dropped (LOGICAL_DNS takes one host;
 * Consul prefers the host names: PR #7999).
 */
export function gatewayDnsEndpoint(groups: readonly EndpointGroup[], localDatacenter: string): DnsEndpoint | undefined {
  for (const g of groups) {
    if (g.overrideHealth === undefined) continue;
    const hostnames = hostnameEndpoints(localDatacenter, g.endpoints);
    if (hostnames.length > 0) return pickDnsEndpoint(hostnames, (ep) => ep.Node.Datacenter !== localDatacenter, g.overrideHealth);
  }
  return undefined;
}

/** The proxy's `envoy_dns_discovery_type` (Proxy.Config, with proxy-defaults merged in): as given, for dnsClusterFields. */
export function sidecarDnsDiscoveryType(snap: SidecarSnapshot): unknown {
  return snap.Proxy.Config?.["envoy_dns_discovery_type"];
}
