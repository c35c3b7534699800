/** DNS over TCP (RFC 1035 4.2.2): each message has a two-byte length in front; several may follow on one connection. */
import { concatBytes } from "../lib/index.ts";

/** `message` with its length prefix. */
export function frameTcp(message: Uint8Array): Uint8Array {
  return concatBytes([Uint8Array.of(message.length >> 8, message.length & 0xff), message]);
}

/** A feeder for a connection's chunks that calls `onMessage` with each complete message, in order. */
export function tcpMessages(onMessage: (message: Uint8Array) => void): (chunk: Uint8Array) => void {
  let buf: Uint8Array = new Uint8Array(0);
  return (chunk) => {
    buf = buf.length === 0 ? chunk : concatBytes([buf, chunk]);
    while (buf.length >= 2) {
      const len = (buf[0]! << 8) | buf[1]!;
      if (buf.length < 2 + len) break;
      const message = buf.slice(2, 2 + len);
      buf = buf.subarray(2 + len);
      onMessage(message);
    }
  };
}
