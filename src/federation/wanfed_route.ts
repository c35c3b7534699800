/**
 * Where the wanfed transport sends traffic for a gossip destination (Consul's wanfed.Transport
 * WriteToAddress / DialAddressTimeout, which route by the memberlist node name): pure, no I/O.
 *
 * The member name is, in order:
 * - `toName`, the name the gossip core passes with every send to a known member (memberlist's
 *   NodeAwareTransport Address.Name). It is exact: two datacenters may well both have a server at
 *   10.0.0.5:8302, and only the name tells them apart.
 * - the name in a `<name>/<addr>` address (memberlist's resolveAddr syntax, see splitNamedAddress):
 *   the name before the `/`. A secondary joins the primary's WAN pool through `*.<primary>/192.0.2.2`: node `*` means any
 *   server of the datacenter (SNI `server.<primary>.<domain>`), and the address is a placeholder that
 *   is never dialled (agent/retry_join.go retryJoinWAN).
 * - for a bare `host:port` without a name (a join to an address): the WAN member name the pool knows
 *   there (`nameOf`). Unknown addresses go over the ordinary transport. Consul has no such fallback:
 *   a nameless address fails SplitNodeName there.
 * Members of this datacenter go over the ordinary transport, to the address; another datacenter's
 * member goes through a mesh gateway with SNI `<node>.server.<dc>.<domain>`.
 */
import { splitNamedAddress } from "../membership/index.ts";
import { serverSni, splitNodeName } from "./names.ts";

/** The ordinary transport, to `addr`; or a mesh gateway, to member `name` of datacenter `dc`. */
export type WanfedRoute =
  | { readonly via: "local"; readonly addr: string }
  | { readonly via: "gateway"; readonly name: string; readonly node: string; readonly dc: string; readonly sni: string };

export interface WanfedRouting {
  readonly localDc: string;
  /** DNS domain of server names ("consul"; one trailing dot is ignored). */
  readonly domain: string;
  /** The WAN member name (`<node>.<dc>`) the pool knows at `addr` ("host:port"), if any; asked only when no name was given. */
  readonly nameOf: (addr: string) => string | undefined;
}

/**
 * The route for gossip address `to`, sent to member `toName` when the sender knows it (an empty
 * `toName` counts as none). Throws Error for a `/` form with an empty name (memberlist's "empty node
 * name provided") and RangeError for a member name that does not encode a datacenter (Consul's
 * SplitNodeName error, issue #12614), however the name was learnt.
 */
export function wanfedRoute(to: string, routing: WanfedRouting, toName?: string): WanfedRoute {
  const { addr, name: inAddress } = splitNamedAddress(to);
  if (inAddress === "") throw new Error(`gossip address ${JSON.stringify(to)}: empty node name provided`);
  const name = toName || inAddress || routing.nameOf(addr);
  if (name === undefined) return { via: "local", addr };
  const { node, dc } = splitNodeName(name);
  if (dc === routing.localDc) return { via: "local", addr };
  return { via: "gateway", name, node, dc, sni: serverSni(dc, node, routing.domain) };
}
