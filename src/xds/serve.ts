/**
 * Serving the ADS handlers: an HTTP/2 server (src/platform createGrpcServer, ConnectRPC's
 * `connectNodeAdapter` on `node:http2`) on one TCP port, plaintext (h2c) or, when TLS material is
 * given, TLS only, as Consul 1.8 serves `ports.grpc` (TLS whenever the agent has TLS configured).
 */
import type * as tls from "node:tls";
import { createGrpcServer, createTlsServer, listenTcp } from "../platform/index.ts";
import type { Logger, TlsMaterial } from "../platform/index.ts";
import type { AdsService } from "./service.ts";

export interface ServeAdsOptions {
  readonly service: AdsService;
  readonly logger: Logger;
  /** Bind address; port 0 picks a free port (read it from the result). */
  readonly host: string;
  readonly port: number;
  /**
   * TLS on every connection (ALPN `h2`). `requireClientCert`: clients must present a certificate
   * signed by `material.ca` (Consul's verify_incoming). Absent: plaintext HTTP/2 (h2c).
   */
  readonly tls?: { readonly material: TlsMaterial; readonly requireClientCert: boolean };
}

export interface AdsServer {
  readonly host: string;
  readonly port: number;
  /** Open HTTP/2 connections. */
  sessionCount(): number;
  /** Stops listening and cuts every connection and stream at once. Idempotent. */
  close(): Promise<void>;
}

/** Starts serving ADS on `host:port`. Rejects if the port cannot be bound. */
export async function serveAds(options: ServeAdsOptions): Promise<AdsServer> {
  const log = options.logger;
  const grpc = createGrpcServer({ routes: (r) => options.service.routes(r), logger: log });
  const running = (listener: { readonly host: string; readonly port: number; close(): Promise<void> }): AdsServer => ({
    host: listener.host,
    port: listener.port,
    sessionCount: () => grpc.sessionCount(),
    close: async () => {
      await grpc.close();
      await listener.close();
    },
  });
  if (!options.tls) {
    const listener = await grpc.listen({ host: options.host, port: options.port });
    log.info("xds: serving ADS (plaintext h2c)", { address: `${listener.host}:${listener.port}` });
    return running(listener);
  }
  const tlsServer = createTlsServer({
    material: options.tls.material,
    requireClientCert: options.tls.requireClientCert,
    alpn: ["h2"],
  });
  tlsServer.on("secureConnection", (sock: tls.TLSSocket) => {
    if (sock.alpnProtocol !== "h2") {
      log.debug("xds: refusing TLS connection without ALPN h2", { alpn: String(sock.alpnProtocol) });
      sock.destroy();
      return;
    }
    grpc.acceptTlsSocket(sock);
  });
  tlsServer.on("tlsClientError", (err: Error) => log.debug("xds: TLS handshake failed", { error: err }));
  const listener = await listenTcp({
    host: options.host,
    port: options.port,
    onConnection: (sock) => tlsServer.emit("connection", sock),
  });
  log.info("xds: serving ADS (TLS)", { address: `${listener.host}:${listener.port}`, verify_incoming: options.tls.requireClientCert });
  return running(listener);
}
