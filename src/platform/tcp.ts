/**
 * TCP port: listen and dial over `node:net`, identical on Bun and Deno.
 */
import * as net from "node:net";

/** A running TCP listener. */
export interface TcpListener {
  /** The address actually bound. */
  readonly host: string;
  /** The port actually bound (the kernel's choice when 0 was requested). */
  readonly port: number;
  /**
   * Stops accepting, destroys every connection this listener accepted that is still open (including
   * sockets already handed to a mux, TLS or HTTP/2 server), and resolves once the listener is closed.
   * Idempotent.
   */
  close(): Promise<void>;
  /**
   * Stops accepting new connections at once but leaves the accepted ones open (a draining listener).
   * A later close() still destroys what is left. Idempotent.
   */
  stopAccepting(): Promise<void>;
}

export interface ListenTcpOptions {
  host: string;
  /** 0 picks a free port; read the result from `TcpListener.port`. */
  port: number;
  /**
   * Called once per accepted connection. The callee owns the socket (reading, writing, closing);
   * the listener only destroys it on `close()`. Socket errors are swallowed by the listener after
   * this returns unless the callee adds its own 'error' listener, so an unhandled error cannot crash
   * the process.
   */
  onConnection(socket: net.Socket): void;
  /**
   * Keep the write side open when the peer half-closes (node's allowHalfOpen), for proxies that forward
   * a FIN instead of answering it; default false (the socket ends its side too).
   */
  allowHalfOpen?: boolean;
}

/**
 * Binds a TCP listener. Rejects if the bind fails (e.g. EADDRINUSE), with the address in the message.
 */
export function listenTcp(options: ListenTcpOptions): Promise<TcpListener> {
  const open = new Set<net.Socket>();
  // noDelay: RPC, Raft and gossip streams carry small request/response messages; Nagle's algorithm
  // with delayed ACKs would hold each one back ~40 ms.
  const server = net.createServer({ pauseOnConnect: false, noDelay: true, allowHalfOpen: options.allowHalfOpen ?? false }, (socket) => {
    socket.setNoDelay(true);
    open.add(socket);
    socket.on("error", () => {});
    socket.once("close", () => open.delete(socket));
    options.onConnection(socket);
  });
  return new Promise<TcpListener>((resolve, reject) => {
    const onError = (err: Error) => {
      reject(new Error(`listen tcp ${options.host}:${options.port}: ${err.message}`, { cause: err }));
    };
    server.once("error", onError);
    server.listen({ host: options.host, port: options.port }, () => {
      server.off("error", onError);
      server.on("error", () => {});
      const addr = server.address() as net.AddressInfo;
      // node's server.close() stops listening at once but reports 'close' only after the last
      // accepted connection ended.
      let closed: Promise<void> | undefined;
      const stopListening = () => (closed ??= new Promise<void>((done) => server.close(() => done())));
      resolve({
        host: addr.address,
        port: addr.port,
        stopAccepting() {
          void stopListening();
          return Promise.resolve();
        },
        close() {
          const done = stopListening();
          for (const s of open) s.destroy();
          open.clear();
          return done;
        },
      });
    });
  });
}

export interface DialTcpOptions {
  host: string;
  port: number;
  /** Connect deadline in milliseconds; default 10000. */
  timeoutMs?: number;
  /** As {@link ListenTcpOptions.allowHalfOpen}; default false. */
  allowHalfOpen?: boolean;
  /** Resolve a host name to IPv4 (4) or IPv6 (6) addresses only; default either. */
  family?: 4 | 6;
}

/**
 * Connects to host:port. Resolves with the connected socket, which the caller then owns.
 * Rejects with an Error whose message starts `dial tcp host:port:` and carries the system `code`
 * (ECONNREFUSED, ...) or `ETIMEDOUT` when the deadline passes; the half-open socket is destroyed.
 */
export function dialTcp(options: DialTcpOptions): Promise<net.Socket> {
  const { host, port } = options;
  const timeoutMs = options.timeoutMs ?? 10_000;
  return new Promise<net.Socket>((resolve, reject) => {
    const socket = net.connect({ host, port, noDelay: true, allowHalfOpen: options.allowHalfOpen ?? false, ...(options.family ? { family: options.family } : {}) });
    const fail = (message: string, code: string | undefined, cause?: unknown) => {
      clearTimeout(timer);
      socket.off("connect", onConnect);
      socket.on("error", () => {});
      socket.destroy();
      reject(Object.assign(new Error(`dial tcp ${host}:${port}: ${message}`, { cause }), { code }));
    };
    const onError = (err: NodeJS.ErrnoException) => fail(err.message || String(err.code), err.code, err);
    const onConnect = () => {
      clearTimeout(timer);
      socket.off("error", onError);
      socket.setNoDelay(true);
      resolve(socket);
    };
    const timer = setTimeout(() => fail(`timed out after ${timeoutMs}ms`, "ETIMEDOUT"), timeoutMs);
    socket.once("error", onError);
    socket.once("connect", onConnect);
  });
}

/** Formats a peer as `ip:port` (IPv6 in brackets), for log lines. */
export function formatPeer(address: string | undefined, port: number | undefined): string {
  const a = address ?? "unknown";
  return `${a.includes(":") ? `[${a}]` : a}:${port ?? 0}`;
}
