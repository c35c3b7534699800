/**
 * The server port (default 8300): one listener, many protocols (Consul's `agent/consul/rpc.go`
 * handleConn, with Causeway's ALPN names).
 *
 * - A plaintext first byte is a marker from the table in protocols.ts.
 * - Marker 3 upgrades to TLS; inside TLS a second marker byte selects the protocol. A TLS upgrade or a
 *   TLS handshake inside TLS is refused.
 * - A TLS handshake as the first byte is native TLS: mutual TLS is always required there, and the
 *   negotiated ALPN selects the protocol (what mesh gateways pass through by SNI).
 * - With verify_incoming_rpc, plaintext markers other than the TLS upgrade are refused.
 * - WAN gossip (its two ALPN names, native TLS only) is what servers of other datacenters send through
 *   mesh gateways; with verify_server_hostname the client certificate must be a server's
 *   (`server.<dc>.<domain>`, Consul's AuthorizeServerConn rule; see server_cert.ts).
 * - Raft over TLS, with verify_server_hostname, needs the certificate of a server of this datacenter
 *   (Consul's handleRaftRPC, the CVE-2021-37219 fix): over the TLS upgrade when verify_incoming_rpc asks
 *   for client certificates (as AuthorizeServerConn checks only then), always over native TLS (mutual
 *   TLS is forced there). Plaintext Raft is governed by verify_incoming_rpc alone.
 *
 * Every protocol in the table has a handler: those not served yet close the connection with a log line.
 */
import type * as net from "node:net";
import type * as tls from "node:tls";
import {
  createProtocolMux, createTlsServer, formatPeer, TLS_HANDSHAKE_BYTE,
  type Clock, type Logger, type MuxConnectionInfo, type ProtocolMux, type TlsMaterial,
} from "../platform/index.ts";
import { ALL_PROTOCOLS, alpnOf, MARKER, markerOf, protocolOfMarker, type ServerProtocol } from "./protocols.ts";
import { certificateNamesServerOf, serverCertificateDatacenter } from "./server_cert.ts";

export interface ServerPortConnection {
  readonly protocol: ServerProtocol;
  readonly remote: string;
  /** How the connection arrived: plaintext marker, TLS upgrade plus marker, or native TLS with ALPN. */
  readonly via: "plaintext" | "tls-upgrade" | "native-tls";
  readonly servername?: string;
  readonly peerCertificate?: tls.PeerCertificate;
}

/** Owns the socket from the call on (delivered paused, nothing lost): must handle 'error' and close it. */
export type ServerPortHandler = (socket: net.Socket | tls.TLSSocket, conn: ServerPortConnection) => void;

/**
 * Receives a WAN gossip connection from a server of another datacenter (through a mesh gateway): the
 * TLS socket after the handshake (mutual TLS, verified), delivered paused with nothing lost, and the
 * peer ("ip:port", the gateway's as a rule). The handler owns the socket: it must handle 'error' and close it.
 */
export type WanGossipHandler = (conn: tls.TLSSocket, remote: string) => void;

/** The WAN pool's ends of the two tunnelled gossip protocols (the wanfed transport's ingest side). */
export interface WanGossipHandlers {
  /** ALPN causeway/wan-gossip/packet: uint32 big-endian length-prefixed gossip packets. */
  readonly packet: WanGossipHandler;
  /** ALPN causeway/wan-gossip/stream: one gossip stream (push/pull). */
  readonly stream: WanGossipHandler;
}

export interface ServerPortOptions {
  readonly logger: Logger;
  /** Deadlines of the TLS upgrade path. */
  readonly clock: Clock;
  /**
   * Without TLS material, native TLS and the TLS upgrade are refused. verifyServerHostname
   * (verify_server_hostname): WAN gossip is accepted only with a server's client certificate, Raft over
   * TLS only with one of this datacenter's servers.
   */
  readonly tls?: { readonly material: TlsMaterial; readonly verifyIncomingRpc: boolean; readonly verifyServerHostname?: boolean };
  /** DNS domain of server names (`server.<dc>.<domain>`) for verifyServerHostname; default "consul". */
  readonly domain?: string;
  /** This server's datacenter, whose servers alone may speak Raft over TLS with verifyServerHostname; absent: a server of any datacenter. */
  readonly datacenter?: string;
  /**
   * Serve the WAN gossip protocols with these (the same as serve() for "wan-gossip-packet" and
   * "wan-gossip-stream"). Absent: those connections are closed with a log line until served.
   */
  readonly wanGossip?: WanGossipHandlers;
  /** Deadline for the first byte and the TLS handshake (and the marker inside TLS). Default 5000 ms. */
  readonly handshakeTimeoutMs?: number;
}

export interface ServerPort {
  /** Serves `protocol` with `handler` (on its marker and on its ALPN name). Once per protocol. */
  serve(protocol: ServerProtocol, handler: ServerPortHandler): void;
  /** Takes a freshly accepted socket (listenTcp's onConnection). Never throws. */
  accept(socket: net.Socket): void;
  close(): void;
}

/** Protocols only servers of other datacenters open (through mesh gateways): verify_server_hostname applies. */
const SERVERS_ONLY: ReadonlySet<ServerProtocol> = new Set(["wan-gossip-packet", "wan-gossip-stream"]);

export function createServerPort(options: ServerPortOptions): ServerPort {
  const log = options.logger;
  const timeoutMs = options.handshakeTimeoutMs ?? 5000;
  const handlers = new Map<ServerProtocol, ServerPortHandler>();
  const verifyIncomingRpc = options.tls?.verifyIncomingRpc ?? false;
  const verifyServerHostname = options.tls?.verifyServerHostname ?? false;
  const domain = options.domain ?? "consul";
  const mux: ProtocolMux = createProtocolMux({
    logger: log,
    handshakeTimeoutMs: timeoutMs,
    // Native TLS always requires a client certificate (Consul forces mTLS there).
    tls: options.tls ? { material: options.tls.material, requireClientCert: true } : undefined,
    allowPlaintextMarker: (m) => !verifyIncomingRpc || m === MARKER.tlsUpgrade,
  });

  /** Why verify_server_hostname refuses this connection, or undefined when it may go on. */
  const serverOnlyRefusal = (protocol: ServerProtocol, conn: ServerPortConnection): string | undefined => {
    if (!verifyServerHostname) return undefined;
    const certDc = serverCertificateDatacenter(conn.peerCertificate, domain);
    if (SERVERS_ONLY.has(protocol)) {
      return certDc === undefined ? `verify_server_hostname: the client certificate does not name a server (server.<dc>.${domain})` : undefined;
    }
    const raftOverTls = protocol === "raft" && (conn.via === "native-tls" || (conn.via === "tls-upgrade" && verifyIncomingRpc));
    if (!raftOverTls) return undefined;
    const dc = options.datacenter;
    if (dc === undefined ? certDc !== undefined : certificateNamesServerOf(conn.peerCertificate, dc, domain)) return undefined;
    return `verify_server_hostname: raft needs the certificate of a server of this datacenter (server.${dc ?? "<dc>"}.${domain})`;
  };

  const dispatch = (protocol: ServerProtocol, socket: net.Socket | tls.TLSSocket, conn: ServerPortConnection) => {
    const handler = handlers.get(protocol);
    const refusal = handler ? serverOnlyRefusal(protocol, conn) : undefined;
    if (refusal) {
      log.warn("server port: connection refused", { protocol, remote: conn.remote, reason: refusal });
      return void socket.destroy();
    }
    if (handler) return handler(socket, conn);
    log.warn("server port: protocol not served yet, closing", { protocol, remote: conn.remote, via: conn.via });
    socket.destroy();
  };

  for (const protocol of ALL_PROTOCOLS) {
    const marker = markerOf(protocol);
    if (marker !== undefined) {
      mux.registerMarker(marker, (s, info) => dispatch(protocol, s, { protocol, remote: peerOf(info), via: "plaintext" }));
    }
    const alpn = alpnOf(protocol);
    if (alpn !== undefined) {
      mux.registerAlpn(alpn, (s, info) =>
        dispatch(protocol, s, { protocol, remote: peerOf(info), via: "native-tls", servername: info.servername, peerCertificate: info.peerCertificate }),
      );
    }
  }
  mux.registerMarker(MARKER.tlsUpgrade, (socket, info) => upgrade(socket as net.Socket, peerOf(info)));
  if (options.wanGossip) {
    const { packet, stream } = options.wanGossip;
    handlers.set("wan-gossip-packet", (s, c) => packet(s as tls.TLSSocket, c.remote));
    handlers.set("wan-gossip-stream", (s, c) => stream(s as tls.TLSSocket, c.remote));
  }

  /** Marker 3: TLS handshake (client certificate required with verify_incoming_rpc), then an inner marker. */
  function upgrade(socket: net.Socket, remote: string): void {
    socket.on("error", () => {});
    if (!options.tls) {
      log.warn("server port: connection refused", { remote, reason: "tls upgrade requested but tls is not configured" });
      return void socket.destroy();
    }
    let done = false;
    const refuse = (reason: string, s: net.Socket | tls.TLSSocket = socket) => {
      if (done) return;
      done = true;
      cancelTimer();
      log.warn("server port: connection refused", { remote, reason });
      s.destroy();
      socket.destroy();
    };
    const cancelTimer = options.clock.setTimer(timeoutMs, () => refuse(`tls upgrade not completed within ${timeoutMs}ms`));
    const server = createTlsServer({ material: options.tls.material, requireClientCert: verifyIncomingRpc, handshakeTimeoutMs: timeoutMs });
    server.on("tlsClientError", (err: Error) => refuse(`tls upgrade handshake failed: ${err.message}`));
    server.on("error", () => {});
    server.on("secureConnection", (t: tls.TLSSocket) => {
      t.on("error", () => {});
      t.once("close", () => refuse("closed before the inner marker"));
      t.once("data", (chunk: Uint8Array) => {
        t.pause();
        if (done) return;
        const inner = chunk[0]!;
        if (inner === MARKER.tlsUpgrade || inner === TLS_HANDSHAKE_BYTE) return refuse("TLS inside TLS", t);
        const protocol = protocolOfMarker(inner);
        if (!protocol) return refuse(`unknown marker 0x${inner.toString(16).padStart(2, "0")} inside TLS`, t);
        done = true;
        cancelTimer();
        t.removeAllListeners("close");
        if (chunk.length > 1) t.unshift(chunk.subarray(1));
        const cert = verifyIncomingRpc ? t.getPeerCertificate() : undefined;
        dispatch(protocol, t, { protocol, remote, via: "tls-upgrade", peerCertificate: cert && Object.keys(cert).length ? cert : undefined });
      });
      t.resume();
    });
    server.emit("connection", socket);
  }

  return {
    serve(protocol, handler) {
      if (handlers.has(protocol)) throw new Error(`server port: ${protocol} is already served`);
      handlers.set(protocol, handler);
    },
    accept: (socket) => mux.accept(socket),
    close: () => mux.close(),
  };
}

function peerOf(info: MuxConnectionInfo): string {
  return formatPeer(info.remoteAddress, info.remotePort);
}
