/**
 * One port, many protocols: the server-port protocol mux.
 *
 * The first byte of a connection decides: a TLS handshake record (0x16) goes to a `tls.Server`
 * (handed over with `emit("connection", sock)`, DESIGN.md section 3) and the negotiated ALPN picks the
 * handler; any other byte is a plaintext marker that picks the handler directly and is consumed.
 */
import type * as net from "node:net";
import type * as tls from "node:tls";
import type { Logger } from "./logger.ts";
import { setImmediate } from "node:timers";
import { formatPeer } from "./tcp.ts";
import { createTlsServer } from "./tls.ts";
import type { TlsServerOptions } from "./tls.ts";

/** First byte of a TLS handshake record (ContentType handshake, RFC 8446 section 5.1). */
export const TLS_HANDSHAKE_BYTE = 0x16;

/** What the mux learned about a connection before handing it over. */
export interface MuxConnectionInfo {
  readonly remoteAddress: string;
  readonly remotePort: number;
  /** The plaintext marker byte (plaintext connections only). */
  readonly marker?: number;
  /** The negotiated ALPN protocol (TLS connections only). */
  readonly alpn?: string;
  /** The SNI server name the client sent, if any (TLS connections only). */
  readonly servername?: string;
  /** The verified client certificate (TLS with requireClientCert only). */
  readonly peerCertificate?: tls.PeerCertificate;
}

/**
 * Receives a connection. From this call on the handler owns the socket: it must add an 'error'
 * listener and close it. The socket is delivered PAUSED with nothing lost (for a marker connection
 * the stream starts right after the marker byte): attach 'data' listeners then call `resume()`, or
 * use `pipe()` / `for await`, which resume by themselves.
 */
export type MuxHandler = (socket: net.Socket | tls.TLSSocket, info: MuxConnectionInfo) => void;

/** TLS settings of the mux: those of createTlsServer; the ALPN list is the set of registered names. */
export type MuxTlsOptions = Omit<TlsServerOptions, "alpn">;

export interface ProtocolMuxOptions {
  readonly logger: Logger;
  /** Absent: TLS connections are refused (logged as "tls not configured"). */
  readonly tls?: MuxTlsOptions;
  /** Deadline covering the first byte and the TLS handshake, in ms; default 5000. */
  readonly handshakeTimeoutMs?: number;
  /**
   * Hook for policy on plaintext markers (e.g. verify_incoming_rpc): return false to refuse a
   * connection that starts with `marker`. Consulted before the handler lookup. Default: allow all.
   */
  readonly allowPlaintextMarker?: (marker: number) => boolean;
}

export interface ProtocolMux {
  /** Routes plaintext connections starting with `marker` (0..255, not 0x16). Throws on a duplicate. */
  registerMarker(marker: number, handler: MuxHandler): void;
  /** Routes TLS connections that negotiate `protocol`; the server offers every registered name. Throws on a duplicate. */
  registerAlpn(protocol: string, handler: MuxHandler): void;
  /**
   * Takes ownership of a freshly accepted socket (use as listenTcp's onConnection). Refused
   * connections (unknown marker/ALPN, failed handshake, deadline) are destroyed and logged at warn
   * with `remote=ip:port reason=...`. Never throws.
   */
  accept(socket: net.Socket): void;
  /** Refuses further connections and destroys those still being classified. Handed-over sockets are untouched. */
  close(): void;
}

interface Pending {
  readonly raw: net.Socket;
  readonly peer: string;
  readonly remoteAddress: string;
  readonly remotePort: number;
  timer?: ReturnType<typeof setTimeout>;
  done: boolean;
  /** The socket was handed to the tls.Server. */
  inTls: boolean;
}

/** Creates a protocol mux. See ProtocolMux for the contract. */
export function createProtocolMux(options: ProtocolMuxOptions): ProtocolMux {
  const log = options.logger;
  const timeoutMs = options.handshakeTimeoutMs ?? 5000;
  const markers = new Map<number, MuxHandler>();
  const alpns = new Map<string, MuxHandler>();
  const pending = new Map<net.Socket, Pending>();
  let tlsServer: tls.Server | undefined;
  let closed = false;

  const refuse = (p: Pending, reason: string) => {
    if (p.done) return;
    p.done = true;
    clearTimeout(p.timer);
    pending.delete(p.raw);
    log.warn("mux: connection refused", { remote: p.peer, reason });
    p.raw.destroy();
  };

  const handOver = (p: Pending, socket: net.Socket, handler: MuxHandler, info: MuxConnectionInfo) => {
    p.done = true;
    clearTimeout(p.timer);
    pending.delete(p.raw);
    socket.pause();
    log.debug("mux: connection accepted", { remote: p.peer, marker: info.marker, alpn: info.alpn });
    try {
      handler(socket, info);
    } catch (err) {
      log.error("mux: handler threw", { remote: p.peer, error: err });
      socket.destroy();
    }
  };

  // The ALPN list is fixed per tls.Server, so a registration marks it stale and the next TLS
  // connection gets a fresh server. Servers are never listened on: nothing else to close.
  const getTlsServer = (tlsOptions: MuxTlsOptions): tls.Server => {
    if (tlsServer) return tlsServer;
    const server = createTlsServer({ ...tlsOptions, alpn: [...alpns.keys()], handshakeTimeoutMs: timeoutMs + 1000 });
    server.on("secureConnection", (t: tls.TLSSocket) => onSecure(t));
    server.on("tlsClientError", (err: Error, t: tls.TLSSocket) => {
      const p = ownerOf(t);
      if (p) refuse(p, `tls handshake failed: ${err.message}`);
      else t.destroy();
    });
    server.on("error", () => {});
    tlsServer = server;
    return server;
  };

  // Bun and Deno both expose the wrapped socket as `_parent` on a server-side TLSSocket; the
  // TLSSocket's own remoteAddress is undefined on Deno after a failed handshake.
  const ownerOf = (t: tls.TLSSocket): Pending | undefined => {
    const parent = (t as unknown as { _parent?: net.Socket })._parent;
    return parent ? pending.get(parent) : undefined;
  };

  const onSecure = (t: tls.TLSSocket) => {
    const p = ownerOf(t);
    if (!p || p.done) {
      t.destroy();
      return;
    }
    const alpn = typeof t.alpnProtocol === "string" ? t.alpnProtocol : undefined;
    const handler = alpn === undefined ? undefined : alpns.get(alpn);
    if (!handler) {
      t.destroy();
      return refuse(p, alpn === undefined ? "no alpn negotiated" : `unknown alpn ${JSON.stringify(alpn)}`);
    }
    const cert = options.tls?.requireClientCert ? t.getPeerCertificate() : undefined;
    const servername = typeof t.servername === "string" && t.servername !== "" ? t.servername : undefined;
    handOver(p, t, handler, {
      remoteAddress: p.remoteAddress,
      remotePort: p.remotePort,
      alpn,
      servername,
      peerCertificate: cert && Object.keys(cert).length > 0 ? cert : undefined,
    });
  };

  const onFirstChunk = (p: Pending, chunk: Uint8Array) => {
    const sock = p.raw;
    sock.pause();
    if (p.done) return;
    const first = chunk[0]!;
    if (first === TLS_HANDSHAKE_BYTE) {
      if (!options.tls) return refuse(p, "tls not configured");
      p.inTls = true;
      sock.unshift(chunk);
      getTlsServer(options.tls).emit("connection", sock);
      return;
    }
    const marker = `0x${first.toString(16).padStart(2, "0")}`;
    if (options.allowPlaintextMarker && !options.allowPlaintextMarker(first)) {
      return refuse(p, `plaintext marker ${marker} not allowed`);
    }
    const handler = markers.get(first);
    if (!handler) return refuse(p, `unknown marker ${marker}`);
    sock.removeListener("close", onEarlyClose);
    if (chunk.length > 1) sock.unshift(chunk.subarray(1));
    handOver(p, sock, handler, { remoteAddress: p.remoteAddress, remotePort: p.remotePort, marker: first });
  };

  // Deno closes the raw socket before emitting 'tlsClientError' (whose message names the cause),
  // so a close during the TLS handshake is judged one macrotask later.
  function onEarlyClose(this: net.Socket) {
    const p = pending.get(this);
    if (!p) return;
    if (!p.inTls) return refuse(p, "connection closed before first byte");
    setImmediate(() => refuse(p, "tls handshake failed: connection closed"));
  }

  return {
    registerMarker(marker, handler) {
      if (!Number.isInteger(marker) || marker < 0 || marker > 255) throw new RangeError(`mux: bad marker ${marker}`);
      if (marker === TLS_HANDSHAKE_BYTE) throw new RangeError("mux: 0x16 is the TLS handshake byte");
      if (markers.has(marker)) throw new Error(`mux: marker ${marker} already registered`);
      markers.set(marker, handler);
    },
    registerAlpn(protocol, handler) {
      if (alpns.has(protocol)) throw new Error(`mux: alpn ${JSON.stringify(protocol)} already registered`);
      alpns.set(protocol, handler);
      tlsServer = undefined;
    },
    accept(sock) {
      const remoteAddress = sock.remoteAddress ?? "unknown";
      const remotePort = sock.remotePort ?? 0;
      const p: Pending = { raw: sock, peer: formatPeer(remoteAddress, remotePort), remoteAddress, remotePort, done: false, inTls: false };
      sock.on("error", () => {});
      if (closed) return refuse(p, "mux closed");
      pending.set(sock, p);
      p.timer = setTimeout(() => refuse(p, `handshake timeout after ${timeoutMs}ms`), timeoutMs);
      sock.once("data", (chunk: Uint8Array) => onFirstChunk(p, chunk));
      sock.once("close", onEarlyClose);
    },
    close() {
      closed = true;
      for (const p of [...pending.values()]) refuse(p, "mux closed");
    },
  };
}
