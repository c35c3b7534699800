/**
 * How one server opens a connection to another's server port for a protocol (Consul's
 * `tlsutil.wrapALPNTLSClient` / pool dialing):
 *
 * - Within the datacenter: native TLS with the protocol's ALPN name when verify_outgoing is on,
 *   otherwise plaintext with the protocol's marker byte.
 * - Across datacenters: always native TLS with ServerName `<node>.server.<dc>.<domain>` (or
 *   `server.<dc>.<domain>` for any server), the protocol's ALPN, mutual TLS and hostname verification,
 *   whatever the verify settings say: the connection may cross a mesh gateway that routes by SNI.
 */
import type { Duplex } from "node:stream";
import { dialTcp, dialTls, type TlsMaterial } from "../platform/index.ts";
import { ALPN, MARKER } from "./protocols.ts";

export type DialProtocol = "raft" | "rpc";

export interface ServerDialSettings {
  readonly datacenter: string;
  /** DNS domain of server names, e.g. "consul". */
  readonly domain: string;
  readonly tls?: { readonly material: TlsMaterial; readonly verifyOutgoing: boolean };
  readonly timeoutMs?: number;
}

/** The TLS server name for a server (`node` given) or any server of a datacenter. */
export function serverName(datacenter: string, domain: string, node?: string): string {
  const d = domain.replace(/\.$/, "");
  return node && node !== "*" ? `${node}.server.${datacenter}.${d}` : `server.${datacenter}.${d}`;
}

/**
 * Opens a stream to `address` ("host:port") that speaks `protocol` from its first byte (TLS and ALPN,
 * or the marker, already done). RPC goes over HTTP/2: ALPN `h2` in native TLS, the multiplexed-RPC
 * marker in plaintext.
 */
export async function dialServer(
  settings: ServerDialSettings,
  address: string,
  target: { readonly datacenter: string; readonly node?: string },
  protocol: DialProtocol,
): Promise<Duplex> {
  const i = address.lastIndexOf(":");
  const host = address.slice(0, i).replace(/^\[|\]$/g, "");
  const port = Number(address.slice(i + 1));
  const crossDc = target.datacenter !== settings.datacenter;
  if (crossDc && !settings.tls) {
    throw new Error(`cannot dial a server in ${target.datacenter} without TLS (set ca_file, cert_file and key_file)`);
  }
  if (settings.tls && (settings.tls.verifyOutgoing || crossDc)) {
    return dialTls({
      host,
      port,
      ...settings.tls.material,
      servername: serverName(target.datacenter, settings.domain, target.node),
      alpn: [protocol === "raft" ? ALPN.raft : ALPN.grpc],
      verifyHostname: true,
      timeoutMs: settings.timeoutMs,
    });
  }
  const socket = await dialTcp({ host, port, timeoutMs: settings.timeoutMs });
  socket.write(Buffer.from([protocol === "raft" ? MARKER.raft : MARKER["multiplexed-rpc"]]));
  return socket;
}
