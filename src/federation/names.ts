/**
 * Names used when server traffic crosses mesh gateways: the TLS server name a gateway routes by, the
 * WAN pool's `<node>.<dc>` member names, and the ALPN protocols of the WAN gossip tunnels.
 */
import { parseWanName } from "../membership/index.ts";

/**
 * ALPN of WAN gossip packets tunnelled through a gateway (length-prefixed, see packet_framing.ts).
 * Causeway's own name (DESIGN.md section 5), the same string as src/rpc's ALPN["wan-gossip-packet"]
 * (a sibling layer, so not importable here; a test keeps them equal).
 */
export const WAN_GOSSIP_PACKET_ALPN = "causeway/wan-gossip/packet";

/** ALPN of a WAN gossip stream (push/pull) tunnelled through a gateway; equals src/rpc's ALPN["wan-gossip-stream"]. */
export const WAN_GOSSIP_STREAM_ALPN = "causeway/wan-gossip/stream";

/**
 * tlsutil ServerSNI: `<node>.server.<dc>.<domain>`, or `server.<dc>.<domain>` (any server of the
 * datacenter) when `node` is "" or "*". One trailing dot of `domain` is dropped ("consul." -> "consul").
 * Server certificates need the `<node>.server.<dc>.<domain>` name for this to verify (PR #9838).
 */
export function serverSni(dc: string, node: string, domain: string): string {
  const d = domain.endsWith(".") ? domain.slice(0, -1) : domain;
  return node === "" || node === "*" ? `server.${dc}.${d}` : `${node}.server.${dc}.${d}`;
}

/**
 * wanfed.SplitNodeName: a WAN member name `<node>.<dc>` split in two. Throws RangeError with Consul's
 * message unless the name has exactly two dot-separated parts (a node name with a dot, e.g. an FQDN,
 * breaks wanfed: issue #12614). Stricter than Consul in one way: neither part may be empty.
 */
export function splitNodeName(name: string): { readonly node: string; readonly dc: string } {
  const parts = parseWanName(name);
  if (!parts) throw new RangeError(`node name does not encode a datacenter: ${name}`);
  return parts;
}
