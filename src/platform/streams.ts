/**
 * Stream helpers for protocols layered on an established connection.
 */
import { Duplex } from "node:stream";

/**
 * A plain Duplex over `socket` when it is a TLS socket, else `socket` itself.
 *
 * HTTP/2 clients and servers on Bun and Node refuse a TLS socket whose ALPN is not "h2" ("h2 is not
 * supported" / protocol error), but Causeway runs HTTP/2 with prior knowledge inside TLS connections
 * that negotiated its own ALPN names (causeway/rpc) or a marker byte. The TLS is already established,
 * so HTTP/2 gets a plain stream over the decrypted bytes. Destroying either side destroys both.
 */
export function asPlainStream(socket: Duplex): Duplex {
  if (!("encrypted" in socket) || (socket as { alpnProtocol?: unknown }).alpnProtocol === "h2") return socket;
  const plain = new Duplex({
    read() {
      socket.resume();
    },
    write(chunk, encoding, callback) {
      socket.write(chunk, encoding, callback);
    },
    final(callback) {
      socket.end(callback);
    },
    destroy(err, callback) {
      socket.destroy(err ?? undefined);
      callback(err);
    },
  });
  socket.on("data", (chunk: Buffer) => {
    if (!plain.push(chunk)) socket.pause();
  });
  socket.once("end", () => plain.push(null));
  socket.once("error", (err: Error) => plain.destroy(err));
  socket.once("close", () => plain.destroy());
  return plain;
}
