/**
 * Names used when server traffic crosses mesh gateways: the TLS server name a gateway routes by, the
 * WAN pool's `<node>.<dc>` member names, and the ALPN protocols of the WAN gossip tunnels.
 */
import { parseWanName } from "../membership/index.ts";

/** The WAN gossip ALPN names and tlsutil's ServerSNI, shared with src/rpc through src/model. */
export { serverSni, WAN_GOSSIP_PACKET_ALPN, WAN_GOSSIP_STREAM_ALPN } from "../model/index.ts";

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
