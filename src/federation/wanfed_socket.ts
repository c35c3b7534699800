/**
 * The wanfed transport's connections over real sockets: a node socket (a `tls.TLSSocket` from the
 * server port or from a dial) as a WanfedConnection, and the TLS dial through a mesh gateway.
 */
import type { Duplex } from "node:stream";
import { dialTls, splitHostPort, type TlsMaterial } from "../platform/index.ts";
import type { StreamSink } from "../membership/index.ts";
import type { WanfedConnection, WanfedDial } from "./wanfed_connection.ts";

/**
 * Wraps a connected socket. Errors and the end are watched from the start, so an early reset is not
 * lost; bytes stay in the socket until `read` (a socket the server port hands over paused is resumed
 * then). The socket belongs to the connection: `close` ends it, `abort` destroys it.
 */
export function socketConnection(socket: Duplex): WanfedConnection {
  let sink: StreamSink | undefined;
  let ended = false;
  let endError: Error | undefined;
  const finish = (err?: Error) => {
    if (ended) return;
    ended = true;
    endError = err;
    sink?.end(err);
  };
  socket.on("error", (err: Error) => finish(err));
  socket.once("end", () => finish());
  socket.once("close", () => finish(socket.readableEnded ? undefined : new Error("connection closed")));
  return {
    read(s) {
      if (sink) throw new Error("wanfed connection: read called twice");
      sink = s;
      if (ended) return void s.end(endError);
      socket.on("data", (chunk: Uint8Array) => {
        if (!ended) s.data(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength));
      });
      socket.resume();
    },
    write(bytes) {
      if (ended || socket.destroyed || socket.writableEnded) return Promise.reject(new Error("wanfed connection: closed"));
      return new Promise<void>((resolve, reject) => {
        socket.write(bytes, (err) => (err ? reject(new Error(`wanfed connection: ${err.message}`, { cause: err })) : resolve()));
      });
    },
    close() {
      if (!socket.destroyed && !socket.writableEnded) socket.end();
    },
    abort() {
      socket.destroy();
    },
  };
}

/**
 * The dial the wanfed transport needs, over TLS (Consul's DialRPCViaMeshGateway + wrapALPNTLSClient):
 * TCP to the gateway, TLS with our certificate, `sni` as server name and checked name (hostname
 * verification always on), `alpn` as the only protocol offered. Rejects if the server did not agree
 * to that ALPN protocol.
 */
export function tlsGatewayDial(material: TlsMaterial): WanfedDial {
  return async (gatewayAddress, sni, alpn, timeoutMs) => {
    const { host, port } = splitHostPort(gatewayAddress);
    const socket = await dialTls({ host, port, ...material, servername: sni, alpn: [alpn], verifyHostname: true, timeoutMs });
    if (socket.alpnProtocol !== alpn) {
      socket.destroy();
      throw new Error(`dial tls ${gatewayAddress} (${sni}): the server did not agree to ALPN ${alpn} (got ${socket.alpnProtocol || "none"})`);
    }
    return socketConnection(socket);
  };
}
