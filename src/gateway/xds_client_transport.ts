/**
 * The gateway xDS client's connection to the agent's gRPC port: one TCP (h2c) or TLS (ALPN h2)
 * connection per attempt, one HTTP/2 session on it, and a ConnectRPC gRPC transport over that session.
 * Each reconnect dials afresh, so a connection never outlives the stream it was made for.
 *
 * Keepalive: an HTTP/2 PING every `keepaliveMs`; a PING still unanswered at the next tick destroys the
 * session, so a vanished agent host (no RST, no FIN) ends the stream and the client reconnects.
 */
import * as http2 from "node:http2";
import type { Transport } from "@connectrpc/connect";
import { createGrpcTransport, type GrpcTransportOptions } from "@connectrpc/connect-node";
import { asPlainStream, dialTcp, dialTls } from "../platform/index.ts";
import type { Clock, Logger, PemInput } from "../platform/index.ts";

/** TLS to the agent's gRPC port. */
export interface AdsTls {
  /** CA(s) the agent's certificate must chain to. */
  readonly ca: PemInput | readonly PemInput[];
  /** The name checked against the agent's certificate (and sent as SNI); default the host. */
  readonly serverName?: string;
  /** Client certificate and key, when the agent verifies incoming connections. */
  readonly cert?: PemInput;
  readonly key?: PemInput;
}

export interface AdsDialOptions {
  readonly host: string;
  readonly port: number;
  /** Absent: plaintext HTTP/2 with prior knowledge (h2c). */
  readonly tls?: AdsTls;
  /** Deadline of TCP connect + TLS handshake, ms. */
  readonly dialTimeoutMs: number;
  /** HTTP/2 PING interval, ms; 0 = no keepalive. */
  readonly keepaliveMs: number;
  readonly clock: Clock;
  readonly logger: Logger;
}

/** One connection to the agent. */
export interface AdsConnection {
  readonly transport: Transport;
  /** Destroys the session and the socket; idempotent. */
  close(): void;
}

type SessionManager = NonNullable<GrpcTransportOptions["sessionManager"]>;

/** `host:port` with IPv6 literals in brackets, as a URL authority. */
export function authorityOf(host: string, port: number): string {
  return `${host.includes(":") && !host.startsWith("[") ? `[${host}]` : host}:${port}`;
}

/**
 * Connects to the agent. Rejects (with the dial's message: `dial tcp ...`/`dial tls ...`) when the
 * connection or the TLS handshake fails; the caller owns the returned connection.
 */
export async function dialAds(o: AdsDialOptions): Promise<AdsConnection> {
  const socket = o.tls
    ? await dialTls({
      host: o.host,
      port: o.port,
      ca: o.tls.ca,
      cert: o.tls.cert,
      key: o.tls.key,
      servername: o.tls.serverName,
      alpn: ["h2"],
      timeoutMs: o.dialTimeoutMs,
    })
    : await dialTcp({ host: o.host, port: o.port, timeoutMs: o.dialTimeoutMs });
  socket.on("error", () => {}); // surfaces through the session and the stream
  const baseUrl = `${o.tls ? "https" : "http"}://${authorityOf(o.host, o.port)}`;
  const session = http2.connect(baseUrl, { createConnection: () => asPlainStream(socket) });
  session.on("error", (err: Error) => o.logger.debug("xds client: connection error", { error: err }));
  let closed = false;
  let stopKeepalive = () => {};
  const close = (error?: Error) => {
    if (closed) return;
    closed = true;
    stopKeepalive();
    session.destroy(error);
    socket.destroy();
  };
  session.once("close", () => close());
  if (o.keepaliveMs > 0) {
    let outstanding = false;
    stopKeepalive = o.clock.setInterval(o.keepaliveMs, () => {
      if (outstanding) {
        o.logger.warn("xds client: keepalive PING unanswered, closing the connection", { after_ms: o.keepaliveMs });
        close(new Error(`keepalive: no answer to an HTTP/2 PING within ${o.keepaliveMs} ms`));
        return;
      }
      outstanding = true;
      try {
        session.ping((err, rttMs) => {
          if (err) return;
          outstanding = false;
          o.logger.trace("xds client: keepalive PING answered", { rtt_ms: rttMs });
        });
      } catch (err) {
        close(err as Error); // the session is already closing
      }
    });
  }
  const manager: SessionManager = {
    authority: baseUrl,
    request(method, path, headers, options) {
      if (closed) return Promise.reject(new Error("xds client: connection closed"));
      return Promise.resolve(session.request({ ...headers, ":method": method, ":path": path }, options));
    },
    notifyResponseByteRead() {},
  };
  return { transport: createGrpcTransport({ baseUrl, sessionManager: manager }), close: () => close() };
}
