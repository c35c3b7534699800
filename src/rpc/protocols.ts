/**
 * The server port's protocols: the plaintext marker byte table (numbers as Consul's
 * `agent/pool/conn.go`, so a packet capture reads the same) and Causeway's own ALPN names for native
 * TLS (DESIGN.md section 5: the wire protocol is not Consul's, so it must not claim Consul's names).
 */
import { SERVER_PORT_ALPN } from "../model/index.ts";

export type ServerProtocol =
  | "rpc"
  | "raft"
  | "multiplexed-rpc"
  | "snapshot"
  | "gossip"
  | "grpc"
  | "wan-gossip-packet"
  | "wan-gossip-stream";

/** Plaintext first bytes. 3 upgrades the connection to TLS, inside which a second marker follows. */
export const MARKER = {
  rpc: 0,
  raft: 1,
  tlsUpgrade: 3,
  "multiplexed-rpc": 4,
  snapshot: 5,
  gossip: 6,
  grpc: 8,
} as const;

/**
 * ALPN names negotiated in native TLS. `h2` carries gRPC (the internal RPC services). The strings live
 * in src/model (server_names.ts), shared with WAN federation, which tunnels gossip with them.
 */
export const ALPN = SERVER_PORT_ALPN;

/** The protocol a plaintext marker selects, or undefined for an unknown byte (and for the TLS upgrade). */
export function protocolOfMarker(byte: number): ServerProtocol | undefined {
  for (const [name, value] of Object.entries(MARKER)) if (value === byte && name !== "tlsUpgrade") return name as ServerProtocol;
  return undefined;
}

/** The marker byte of a protocol, if it has one (the wan-gossip protocols exist only in native TLS). */
export function markerOf(protocol: ServerProtocol): number | undefined {
  return (MARKER as Record<string, number>)[protocol];
}

/** The ALPN name of a protocol, if it has one. */
export function alpnOf(protocol: ServerProtocol): string | undefined {
  return (ALPN as Record<string, string>)[protocol];
}

export const ALL_PROTOCOLS: readonly ServerProtocol[] = [
  "rpc", "raft", "multiplexed-rpc", "snapshot", "gossip", "grpc", "wan-gossip-packet", "wan-gossip-stream",
];
