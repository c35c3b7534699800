/**
 * UDP port over `node:dgram`, on Bun and Deno.
 *
 * Datagrams may be lost, duplicated or reordered; Deno measurably reorders bursts on loopback
 * (DESIGN.md section 3), so callers must not assume order.
 */
import * as dgram from "node:dgram";
import * as net from "node:net";

/** Where a datagram came from. */
export interface UdpPeer {
  readonly address: string;
  readonly port: number;
}

export interface BindUdpOptions {
  /** Address to bind; its family (IPv4/IPv6) picks the socket type. */
  host: string;
  /** 0 picks a free port. */
  port: number;
  /** Called per datagram. `data` is owned by the callee. Exceptions are not caught. */
  onMessage(data: Uint8Array, from: UdpPeer): void;
  /** Called on socket errors after binding (default: ignored). */
  onError?(err: Error): void;
}

/** A bound UDP socket. */
export interface UdpEndpoint {
  readonly host: string;
  /** The actual port. */
  readonly port: number;
  /** Sends one datagram; resolves when handed to the kernel, rejects on a send error (e.g. EMSGSIZE). */
  send(data: Uint8Array, port: number, host: string): Promise<void>;
  /** Closes the socket; later sends reject. Idempotent. */
  close(): Promise<void>;
}

/** Binds a UDP socket. Rejects with the address in the message if binding fails. */
export function bindUdp(options: BindUdpOptions): Promise<UdpEndpoint> {
  const type = net.isIPv6(options.host) ? "udp6" : "udp4";
  const sock = dgram.createSocket({ type });
  return new Promise<UdpEndpoint>((resolve, reject) => {
    const onBindError = (err: Error) => {
      sock.close();
      reject(new Error(`bind udp ${options.host}:${options.port}: ${err.message}`, { cause: err }));
    };
    sock.once("error", onBindError);
    sock.on("message", (msg: Uint8Array, rinfo: dgram.RemoteInfo) => {
      options.onMessage(new Uint8Array(msg.buffer, msg.byteOffset, msg.byteLength), { address: rinfo.address, port: rinfo.port });
    });
    sock.bind({ address: options.host, port: options.port }, () => {
      sock.off("error", onBindError);
      sock.on("error", (err: Error) => options.onError?.(err));
      const addr = sock.address();
      let closing: Promise<void> | undefined;
      resolve({
        host: addr.address,
        port: addr.port,
        send(data, port, host) {
          if (closing) return Promise.reject(new Error(`udp send to ${host}:${port}: socket closed`));
          return new Promise<void>((done, fail) => {
            sock.send(data, port, host, (err) => {
              if (err) fail(new Error(`udp send to ${host}:${port}: ${err.message}`, { cause: err }));
              else done();
            });
          });
        },
        close() {
          closing ??= new Promise<void>((done) => sock.close(() => done()));
          return closing;
        },
      });
    });
  });
}
