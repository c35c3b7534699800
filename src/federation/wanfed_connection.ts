/**
 * The one connection shape the wanfed transport needs from its dialer and from the server port: a
 * reliable duplex of bytes (a TLS connection through a mesh gateway, after the handshake, with its
 * ALPN already chosen). Reading, writing, a graceful end and a reset; nothing about TLS, names or
 * addresses. Every membership `GossipStream` is one, so tests can use in-memory streams;
 * wanfed_socket.ts adapts a node socket (a `tls.TLSSocket`).
 */
import type { GossipStream, StreamSink } from "../membership/index.ts";

/** A connected byte duplex. Whoever holds it must close or abort it. */
export interface WanfedConnection {
  /**
   * Starts delivering inbound bytes to `sink` (in order, arbitrary chunk boundaries; `end` exactly
   * once, with an error for a reset or failure). Call at most once; bytes that arrive earlier are held.
   */
  read(sink: StreamSink): void;
  /** Queues bytes; resolves once the connection accepted them, rejects if it is closed or failed. */
  write(bytes: Uint8Array): Promise<void>;
  /** Graceful end: queued bytes are flushed, then the peer sees a clean end. Idempotent. */
  close(): void;
  /** Drops the connection now; the peer sees a reset. Idempotent. */
  abort(): void;
}

/**
 * Opens a connection to `sni` through the mesh gateway at `gatewayAddress` ("host:port"): TCP to the
 * gateway, then TLS with `sni` as server name (the gateway routes by it; the far server's certificate
 * must carry it), `alpn` as the only ALPN protocol, mutual TLS and hostname verification (Consul's
 * DialRPCViaMeshGateway + wrapALPNTLSClient). Should give up after `timeoutMs`; the transport
 * enforces that deadline itself as well.
 */
export type WanfedDial = (gatewayAddress: string, sni: string, alpn: string, timeoutMs: number) => Promise<WanfedConnection>;

/**
 * `conn` as a GossipStream named `remote` (for logs). `onDone` runs once, when the stream ends (as
 * its reader sees it) or is aborted, so an owner can stop tracking it.
 */
export function connectionStream(conn: WanfedConnection, remote: string, onDone?: () => void): GossipStream {
  let done = false;
  const finish = () => {
    if (done) return;
    done = true;
    onDone?.();
  };
  return {
    remote,
    read(sink) {
      conn.read({
        data: (chunk) => sink.data(chunk),
        end(error) {
          finish();
          sink.end(error);
        },
      });
    },
    write: (bytes) => conn.write(bytes),
    close: () => conn.close(),
    abort() {
      finish();
      conn.abort();
    },
  };
}
