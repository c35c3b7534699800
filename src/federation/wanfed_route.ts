/**
 * Where the wanfed transport sends traffic for a gossip address (Consul's wanfed.Transport
 * WriteToAddress / DialAddressTimeout, which route by the memberlist node name): pure, no I/O.
 *
 * Address forms:
 * - `host:port`: the WAN member name the pool knows for it (`nameOf`) picks the datacenter. Unknown
 *   addresses and members of this datacenter go over the ordinary transport.
 * - `<name>/<addr>` (memberlist's resolveAddr syntax): the name before the first `/` is used as it
 *   is. A secondary joins the primary's WAN pool through `*.<primary>/192.0.2.2`: node `*` means any
 *   server of the datacenter (SNI `server.<primary>.<domain>`), and the address is a placeholder that
 *   is never dialled (agent/retry_join.go retryJoinWAN).
 * Another datacenter's member goes through a mesh gateway with SNI `<node>.server.<dc>.<domain>`.
 */
import { serverSni, splitNodeName } from "./names.ts";

/** The ordinary transport, to `addr`; or a mesh gateway, to member `name` of datacenter `dc`. */
export type WanfedRoute =
  | { readonly via: "local"; readonly addr: string }
  | { readonly via: "gateway"; readonly name: string; readonly node: string; readonly dc: string; readonly sni: string };

export interface WanfedRouting {
  readonly localDc: string;
  /** DNS domain of server names ("consul"; one trailing dot is ignored). */
  readonly domain: string;
  /** The WAN member name (`<node>.<dc>`) the pool knows at `addr` ("host:port"), if any. */
  readonly nameOf: (addr: string) => string | undefined;
}

/**
 * The route for gossip address `to`. Throws Error for a `/` form with an empty name (memberlist's
 * "empty node name provided") and RangeError for a member name that does not encode a datacenter
 * (Consul's SplitNodeName error, issue #12614), whether given in the address or by `nameOf`.
 */
export function wanfedRoute(to: string, routing: WanfedRouting): WanfedRoute {
  const slash = to.indexOf("/");
  let name: string | undefined;
  let addr = to;
  if (slash >= 0) {
    if (slash === 0) throw new Error(`gossip address ${JSON.stringify(to)}: empty node name provided`);
    name = to.slice(0, slash);
    addr = to.slice(slash + 1);
  } else {
    name = routing.nameOf(to);
    if (name === undefined) return { via: "local", addr };
  }
  const { node, dc } = splitNodeName(name);
  if (dc === routing.localDc) return { via: "local", addr };
  return { via: "gateway", name, node, dc, sni: serverSni(dc, node, routing.domain) };
}
