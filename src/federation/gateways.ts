/**
 * Mesh gateways as federation sees them: which gateways may carry server traffic between datacenters,
 * the address a server dials for each, and which of two listings of a datacenter's gateways is the
 * fresher. Pure functions over catalog values.
 */
import type { CheckServiceNode } from "../model/index.ts";
import { joinHostPort } from "../membership/index.ts";

/**
 * Service meta key (and value "1") marking a mesh gateway that carries WAN federation traffic
 * (Consul's `structs.MetaWANFederationKey`); set by `-expose-servers`.
 */
export const WAN_FEDERATION_META_KEY = "consul-wan-federation";

/**
 * `CheckServiceNode.BestAddress(wan)` (agent/structs/structs.go): the service address, replaced by the
 * service's `wan` tagged address (and its port, when non-zero) if `wan` is asked and that tag exists;
 * when the result is empty, the node's address (its `wan` tagged address if asked and non-empty).
 * A `wan` tag with an empty Address yields the node's address, as in Consul.
 */
export function bestAddress(csn: CheckServiceNode, wan: boolean): { readonly address: string; readonly port: number } {
  let address = csn.Service.Address;
  let port = csn.Service.Port;
  const tagged = wan ? csn.Service.TaggedAddresses?.["wan"] : undefined;
  if (tagged) {
    address = tagged.Address;
    if (tagged.Port !== 0) port = tagged.Port;
  }
  if (address === "") address = (wan ? csn.Node.TaggedAddresses?.["wan"] : undefined) || csn.Node.Address;
  return { address, port };
}

/**
 * Whether a gateway may carry federation traffic (gateway_locator.go retainGateways): its service meta
 * has `consul-wan-federation` = "1" and none of its checks is critical (warning counts as usable).
 */
export function isWanFederationGateway(csn: CheckServiceNode): boolean {
  return csn.Service.Meta?.[WAN_FEDERATION_META_KEY] === "1" && !(csn.Checks ?? []).some((c) => c.Status === "critical");
}

/**
 * The dialable `host:port` of every usable gateway in `gateways` (see isWanFederationGateway), by
 * BestAddress(wan), IPv6 hosts in brackets (ipaddr.FormatAddressPort), sorted and without duplicates.
 */
export function gatewayAddresses(gateways: readonly CheckServiceNode[] | undefined, wan: boolean): readonly string[] {
  const out = new Set<string>();
  for (const csn of gateways ?? []) {
    if (!isWanFederationGateway(csn)) continue;
    const { address, port } = bestAddress(csn, wan);
    out.add(joinHostPort(address, port));
  }
  return [...out].sort();
}

/** The largest `Service.ModifyIndex` among `gateways` (0 for none). */
export function maxServiceModifyIndex(gateways: readonly CheckServiceNode[] | undefined): number {
  let max = 0;
  for (const csn of gateways ?? []) max = Math.max(max, csn.Service.ModifyIndex ?? 0);
  return max;
}

/**
 * Which listing of one datacenter's mesh gateways to trust (Consul PR #11522, the fix of issue #10132):
 * the federation state's gateways when their largest `Service.ModifyIndex` is strictly greater than the
 * largest of the catalog's listing (a service dump from that datacenter), otherwise the catalog's. Both
 * carry the owning datacenter's own Raft indexes, so they compare. A tie, or no federation state, keeps
 * the catalog listing. Consul applies this where a mesh gateway picks endpoints for a remote datacenter:
 * a remote dump that cannot be refreshed (its path is the broken one) must not hide the newer address
 * the remote's anti-entropy already delivered through the federation state.
 */
export function fresherGateways(
  catalog: readonly CheckServiceNode[] | undefined,
  federationState: readonly CheckServiceNode[] | undefined,
): { readonly source: "catalog" | "federation-state"; readonly gateways: readonly CheckServiceNode[] } {
  return maxServiceModifyIndex(federationState) > maxServiceModifyIndex(catalog)
    ? { source: "federation-state", gateways: federationState ?? [] }
    : { source: "catalog", gateways: catalog ?? [] };
}
