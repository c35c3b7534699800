/**
 * HTTP/2 server for ConnectRPC handlers (gRPC, gRPC-web, Connect) over `node:http2`, on Bun and Deno.
 *
 * One `http2.Server` serves every connection: h2c sockets from its own TCP listeners and TLS sockets
 * whose ALPN was `h2`, handed over by the protocol mux (`emit("connection", tlsSocket)`, DESIGN.md
 * section 3).
 */
import * as http2 from "node:http2";
import type * as net from "node:net";
import type * as tls from "node:tls";
import type { ConnectRouter, Interceptor } from "@connectrpc/connect";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import { specGrpcMessages } from "./grpc_message.ts";
import type { Logger } from "./logger.ts";
import { asPlainStream } from "./streams.ts";
import { listenTcp } from "./tcp.ts";
import type { TcpListener } from "./tcp.ts";

export interface GrpcServerOptions {
  /** Registers services on the router, e.g. `(r) => r.service(AggregatedDiscoveryService, impl)`. */
  readonly routes: (router: ConnectRouter) => void;
  /** Run around every call the server handles (e.g. to count requests). */
  readonly interceptors?: readonly Interceptor[];
  readonly logger: Logger;
}

/** A running h2c listener of a GrpcServer. */
export interface GrpcListener {
  readonly host: string;
  /** The actual port (port 0 resolved). */
  readonly port: number;
  /** Stops accepting and destroys the connections this listener accepted (their streams are reset). */
  close(): Promise<void>;
}

export interface GrpcServer {
  /** Serves h2c (cleartext HTTP/2, prior knowledge) on a new TCP listener. May be called more than once. */
  listen(address: { host: string; port: number }): Promise<GrpcListener>;
  /**
   * Serves HTTP/2 on a TLS socket that negotiated ALPN `h2` (typically a mux handler). Takes
   * ownership: the socket is closed by the session or by `close()`. A socket delivered paused by
   * the mux is resumed here.
   */
  acceptTlsSocket(socket: tls.TLSSocket): void;
  /**
   * Serves HTTP/2 with prior knowledge on any established stream: a plaintext socket after a marker
   * byte, or a TLS socket. Same ownership as `acceptTlsSocket`.
   */
  acceptSocket(socket: net.Socket | tls.TLSSocket): void;
  /** Number of open HTTP/2 sessions (connections); for tests and metrics. */
  sessionCount(): number;
  /**
   * Closes every listener and destroys every session at once (open streams, including long-lived
   * bidi streams, are cut rather than waited for). Later sockets are refused. Idempotent.
   */
  close(): Promise<void>;
}

/** Creates the HTTP/2 server. Nothing listens until `listen` is called. */
export function createGrpcServer(options: GrpcServerOptions): GrpcServer {
  const log = options.logger;
  const handler = connectNodeAdapter({ routes: options.routes, interceptors: [...(options.interceptors ?? [])] });
  const h2 = http2.createServer({}, (req, res) => {
    specGrpcMessages(res);
    // connectNodeAdapter's types name both http and http2 requests; this is the http2 one.
    void handler(req as never, res as never);
  });
  const sessions = new Set<http2.ServerHttp2Session>();
  const listeners = new Set<TcpListener>();
  let closing: Promise<void> | undefined;

  h2.on("session", (session: http2.ServerHttp2Session) => {
    if (closing) {
      session.destroy();
      return;
    }
    sessions.add(session);
    session.on("error", (err: Error) => log.debug("http2: session error", { error: err }));
    session.once("close", () => sessions.delete(session));
  });
  h2.on("sessionError", (err: Error) => log.debug("http2: session error", { error: err }));
  h2.on("error", (err: Error) => log.warn("http2: server error", { error: err }));

  const serve = (socket: net.Socket | tls.TLSSocket) => {
    if (closing) {
      socket.destroy();
      return;
    }
    socket.on("error", () => {});
    h2.emit("connection", asPlainStream(socket));
    if (socket.isPaused()) socket.resume();
  };

  return {
    async listen(address) {
      const listener = await listenTcp({ host: address.host, port: address.port, onConnection: serve });
      listeners.add(listener);
      return {
        host: listener.host,
        port: listener.port,
        close: async () => {
          listeners.delete(listener);
          await listener.close();
        },
      };
    },
    acceptTlsSocket: serve,
    acceptSocket: serve,
    sessionCount: () => sessions.size,
    close() {
      closing ??= (async () => {
        for (const s of sessions) s.destroy();
        sessions.clear();
        await Promise.all([...listeners].map((l) => l.close()));
        listeners.clear();
      })();
      return closing;
    },
  };
}
