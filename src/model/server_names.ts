/**
 * Names servers are reached by on the server port: the ALPN protocol names of native TLS and the TLS
 * server names (SNI) that mesh gateways route server traffic by. The one home of these strings: the
 * RPC layer serves and dials them, WAN federation tunnels gossip with them (two layers of the same
 * rank, which may not import each other).
 */

/**
 * ALPN names negotiated in native TLS on the server port. Causeway's own names (DESIGN.md section 5:
 * the wire protocol is not Consul's, so it must not claim Consul's `consul/...` names); `h2` carries
 * gRPC (the internal RPC services).
 */
export const SERVER_PORT_ALPN = {
  rpc: "causeway/rpc",
  raft: "causeway/raft",
  snapshot: "causeway/snapshot",
  "wan-gossip-packet": "causeway/wan-gossip/packet",
  "wan-gossip-stream": "causeway/wan-gossip/stream",
  grpc: "h2",
} as const;

/** ALPN of WAN gossip packets tunnelled through a gateway (uint32 big-endian length-prefixed frames). */
export const WAN_GOSSIP_PACKET_ALPN = SERVER_PORT_ALPN["wan-gossip-packet"];

/** ALPN of a WAN gossip stream (push/pull) tunnelled through a gateway. */
export const WAN_GOSSIP_STREAM_ALPN = SERVER_PORT_ALPN["wan-gossip-stream"];

/**
 * tlsutil ServerSNI: `<node>.server.<dc>.<domain>`, or `server.<dc>.<domain>` (any server of the
 * datacenter) when `node` is "" or "*". One trailing dot of `domain` is dropped ("consul." -> "consul").
 * Server certificates need the `<node>.server.<dc>.<domain>` name for this to verify (PR #9838).
 */
export function serverSni(dc: string, node: string, domain: string): string {
  const d = domain.endsWith(".") ? domain.slice(0, -1) : domain;
  return node === "" || node === "*" ? `server.${dc}.${d}` : `${node}.server.${dc}.${d}`;
}
