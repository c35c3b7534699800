/**
 * How one server opens a connection to another's server port for a protocol (Consul's
 * `tlsutil.wrapALPNTLSClient` / pool dialing):
 *
 * - Within the datacenter: native TLS with the protocol's ALPN name when verify_outgoing is on,
 *   otherwise plaintext with the protocol's marker byte.
 * - Across datacenters, dialled directly: always native TLS, checking `server.<dc>.<domain>` (Consul's
 *   wrapTLSClient), the protocol's ALPN, mutual TLS and hostname verification, whatever the verify
 *   settings say.
 * - Across datacenters with WAN federation through mesh gateways (`viaGateway` given): the same TLS,
 *   but the TCP connection goes to the gateway the locator picks for the datacenter, never to the
 *   server's own address (Consul's `agent/pool/pool.go` DialRPCViaMeshGateway).
 */
import type { Duplex } from "node:stream";
import { serverSni } from "../model/index.ts";
import { dialTcp, dialTls, splitHostPort, type TlsMaterial } from "../platform/index.ts";
import { NoPathError } from "./errors.ts";
import { ALPN, MARKER } from "./protocols.ts";

/** What a dialled connection speaks. The WAN gossip protocols exist only in native TLS (no marker). */
export type DialProtocol = "raft" | "rpc" | "wan-gossip-packet" | "wan-gossip-stream";

/** ALPN per dial protocol: RPC is gRPC over HTTP/2, so `h2`. */
const DIAL_ALPN: Readonly<Record<DialProtocol, string>> = {
  raft: ALPN.raft,
  rpc: ALPN.grpc,
  "wan-gossip-packet": ALPN["wan-gossip-packet"],
  "wan-gossip-stream": ALPN["wan-gossip-stream"],
};

/** Plaintext marker per dial protocol (RPC: the multiplexed-RPC marker, as Consul's pool). */
const DIAL_MARKER: Readonly<Partial<Record<DialProtocol, number>>> = { raft: MARKER.raft, rpc: MARKER["multiplexed-rpc"] };

/**
 * The gateway to dial for a datacenter (the gateway locator's pick): an address "host:port", or why
 * there is none; `message` is the operator-facing error, used as it is (e.g. "no path to datacenter
 * dc3: no healthy mesh gateway").
 */
export type GatewayRoute = { readonly ok: true; readonly address: string } | { readonly ok: false; readonly message: string };

export interface ServerDialSettings {
  readonly datacenter: string;
  /** DNS domain of server names, e.g. "consul". */
  readonly domain: string;
  readonly tls?: { readonly material: TlsMaterial; readonly verifyOutgoing: boolean };
  readonly timeoutMs?: number;
  /**
   * WAN federation through mesh gateways is on: servers of other datacenters are dialled through the
   * gateway this returns for their datacenter. Absent: they are dialled directly. Never consulted for
   * this datacenter.
   */
  readonly viaGateway?: (datacenter: string) => GatewayRoute;
}

/** The TLS server name for a server (`node` given) or any server of a datacenter. */
export function serverName(datacenter: string, domain: string, node?: string): string {
  return serverSni(datacenter, node ?? "", domain);
}

/**
 * Opens a stream to `address` ("host:port") that speaks `protocol` from its first byte (TLS and ALPN,
 * or the marker, already done). Over TLS the server's certificate must name `server.<dc>.<domain>` of
 * the target's datacenter. RPC goes over HTTP/2: ALPN `h2` in native TLS, the multiplexed-RPC
 * marker in plaintext. For a server of another datacenter with `viaGateway` set, `address` is not
 * dialled: see dialThroughGateway.
 */
export async function dialServer(
  settings: ServerDialSettings,
  address: string,
  target: { readonly datacenter: string; readonly node?: string },
  protocol: DialProtocol,
): Promise<Duplex> {
  const crossDc = target.datacenter !== settings.datacenter;
  if (crossDc && settings.viaGateway) return dialThroughGateway(settings, target, protocol);
  if (crossDc && !settings.tls) {
    throw new Error(`cannot dial a server in ${target.datacenter} without TLS (set ca_file, cert_file and key_file)`);
  }
  const { host, port } = splitHostPort(address);
  if (settings.tls && (settings.tls.verifyOutgoing || crossDc)) {
    // A direct dial checks `server.<dc>.<domain>`, not the node's name (Consul's wrapTLSClient): the
    // certificates `tls cert create -server` makes without -node name no node, and the address, not
    // the name, picks the server here.
    return dialAlpn(settings.tls.material, host, port, serverName(target.datacenter, settings.domain), protocol, settings.timeoutMs);
  }
  const marker = DIAL_MARKER[protocol];
  if (marker === undefined) throw new Error(`${protocol} is spoken only in native TLS: set verify_outgoing to dial it`);
  const socket = await dialTcp({ host, port, timeoutMs: settings.timeoutMs });
  socket.write(Buffer.from([marker]));
  return socket;
}

/**
 * Opens a stream to a server of another datacenter through a mesh gateway (Consul's
 * DialRPCViaMeshGateway and wrapALPNTLSClient): TCP to the gateway `settings.viaGateway` picks for the
 * datacenter, then TLS with SNI `<node>.server.<dc>.<domain>` (`server.<dc>.<domain>` without a node:
 * the remote gateway picks any server), the protocol's ALPN, our certificate and full hostname
 * verification, whatever verify_server_hostname says.
 *
 * Rejects before dialling with "cannot dial via a mesh gateway when outgoing TLS is disabled" (Consul's
 * words) without TLS or verify_outgoing, and with a NoPathError carrying the locator's message when
 * there is no gateway for the datacenter.
 */
export async function dialThroughGateway(
  settings: ServerDialSettings,
  target: { readonly datacenter: string; readonly node?: string },
  protocol: DialProtocol,
): Promise<Duplex> {
  if (!settings.viaGateway) throw new Error("dialing through a mesh gateway needs a gateway resolver (viaGateway)");
  if (target.datacenter === settings.datacenter) throw new Error(`servers of this datacenter (${target.datacenter}) are not dialled through a mesh gateway`);
  if (!settings.tls?.verifyOutgoing) throw new Error("cannot dial via a mesh gateway when outgoing TLS is disabled");
  const route = settings.viaGateway(target.datacenter);
  if (!route.ok) throw new NoPathError(route.message);
  const { host, port } = splitHostPort(route.address);
  return dialAlpn(settings.tls.material, host, port, serverName(target.datacenter, settings.domain, target.node), protocol, settings.timeoutMs);
}

/** Native TLS to host:port with our certificate, `servername` as SNI and checked name, and the protocol's ALPN. */
function dialAlpn(material: TlsMaterial, host: string, port: number, servername: string, protocol: DialProtocol, timeoutMs: number | undefined): Promise<Duplex> {
  return dialTls({ host, port, ...material, servername, alpn: [DIAL_ALPN[protocol]], verifyHostname: true, timeoutMs });
}
