/**
 * The default gossip transport: UDP datagrams for packets and TCP connections for streams, both on
 * the same port number (memberlist NetTransport; Consul's serf_lan 8301 and serf_wan 8302).
 *
 * Addresses are `host:port`, IPv6 hosts in brackets (`[::1]:8301`). A packet's `from` is the
 * sender's UDP source address, which is its gossip address because every member sends from its bound
 * socket. A stream's `remote` is the TCP peer's ephemeral address and only names it in logs.
 */
import type * as net from "node:net";
import { bindUdp, dialTcp, formatPeer, listenTcp } from "../platform/index.ts";
import type { Logger, TcpListener, UdpEndpoint } from "../platform/index.ts";
import type { GossipStream, GossipTransport, StreamSink, TransportHandler } from "./transport.ts";
import { splitNamedAddress } from "./transport.ts";

export interface UdpTransportOptions {
  /** Address to bind both sockets to (`-bind`), e.g. "0.0.0.0" or "127.0.0.1". */
  readonly host: string;
  /** Port for both UDP and TCP; 0 picks one free for both (retried a few times). */
  readonly port: number;
  /** Host others reach us at (`-advertise`); default `host`. Must be set when binding a wildcard address. */
  readonly advertiseHost?: string;
  /** Port others reach us at; default the bound port. */
  readonly advertisePort?: number;
  readonly logger: Logger;
}

/** Largest UDP payload over IPv4. */
const MAX_UDP_PAYLOAD = 65_507;
/** Attempts to find a port free for both UDP and TCP when port 0 is asked (memberlist tries 10). */
const PORT_ATTEMPTS = 10;

/** Splits `host:port` or `[v6]:port`. Throws Error naming the address if it is not one. */
export function parseHostPort(addr: string): { host: string; port: number } {
  const m = /^(?:\[([^\]]+)\]|([^:[\]]+)):(\d{1,5})$/.exec(addr);
  const port = m ? Number(m[3]) : NaN;
  if (!m || !(port > 0 && port < 65_536)) throw new Error(`gossip address ${JSON.stringify(addr)}: want host:port`);
  return { host: (m[1] ?? m[2])!, port };
}

/**
 * `addr` with `port` added when it names none: "10.0.0.1" -> "10.0.0.1:8301", "::1" or "[::1]" ->
 * "[::1]:8301"; an address with a port is returned as it is. memberlist's `name/addr` form keeps its
 * name ("*.dc1/::1" -> "*.dc1/[::1]:8301"; a WAN federation join through the primary's gateways).
 */
export function withDefaultPort(addr: string, port: number): string {
  const named = splitNamedAddress(addr);
  if (named.name !== undefined) return `${named.name}/${withDefaultPort(named.addr, port)}`;
  if (/^\[[^\]]+\]:\d+$/.test(addr) || /^[^:[\]]+:\d+$/.test(addr)) return addr;
  const bare = addr.startsWith("[") && addr.endsWith("]") ? addr.slice(1, -1) : addr;
  return bare.includes(":") ? `[${bare}]:${port}` : `${bare}:${port}`;
}

/**
 * Binds UDP and TCP on one port. Rejects with the address in the message if either bind fails (for
 * port 0, after retrying with fresh ports). Inbound traffic is dropped until `listen` is called.
 */
export async function createUdpTransport(options: UdpTransportOptions): Promise<GossipTransport> {
  const log = options.logger;
  let handler: TransportHandler | undefined;
  const dialed = new Set<net.Socket>();
  let closed = false;

  const onPacket = (data: Uint8Array, from: { address: string; port: number }) => {
    if (!handler || closed) return;
    try {
      handler.packet(formatPeer(from.address, from.port), data);
    } catch (err) {
      log.error("gossip packet handler threw; packet dropped", { from: formatPeer(from.address, from.port), error: err });
    }
  };
  const onConnection = (socket: net.Socket) => {
    const remote = formatPeer(socket.remoteAddress, socket.remotePort);
    if (!handler || closed) return void socket.destroy();
    socket.setNoDelay(true);
    try {
      handler.stream(socketStream(socket, remote));
    } catch (err) {
      socket.destroy();
      log.error("gossip stream handler threw; stream dropped", { peer: remote, error: err });
    }
  };

  const { udp, tcp } = await bindBoth(options, onPacket, onConnection);
  const localAddr = formatPeer(options.advertiseHost ?? options.host, options.advertisePort ?? udp.port);
  log.debug("gossip transport bound", { udp: formatPeer(udp.host, udp.port), tcp: formatPeer(tcp.host, tcp.port), advertise: localAddr });

  return {
    localAddr,
    maxPacketBytes: MAX_UDP_PAYLOAD,
    listen(h) {
      if (handler) throw new Error("gossip transport: listen called twice");
      handler = h;
    },
    async sendPacket(to, bytes) {
      if (bytes.length > MAX_UDP_PAYLOAD) throw new Error(`udp send to ${to}: ${bytes.length} bytes exceeds ${MAX_UDP_PAYLOAD}`);
      const { host, port } = parseHostPort(to);
      await udp.send(bytes, port, host);
    },
    async dialStream(to, timeoutMs) {
      if (closed) throw new Error(`dial ${to}: gossip transport closed`);
      const { host, port } = parseHostPort(to);
      const socket = await dialTcp({ host, port, timeoutMs });
      if (closed) {
        socket.destroy();
        throw new Error(`dial ${to}: gossip transport closed`);
      }
      socket.setNoDelay(true);
      dialed.add(socket);
      socket.once("close", () => dialed.delete(socket));
      return socketStream(socket, to);
    },
    async close() {
      if (closed) return;
      closed = true;
      for (const s of dialed) s.destroy();
      dialed.clear();
      await Promise.all([udp.close(), tcp.close()]);
    },
  };
}

async function bindBoth(
  options: UdpTransportOptions,
  onMessage: (data: Uint8Array, from: { address: string; port: number }) => void,
  onConnection: (socket: net.Socket) => void,
): Promise<{ udp: UdpEndpoint; tcp: TcpListener }> {
  const attempts = options.port === 0 ? PORT_ATTEMPTS : 1;
  let lastError: unknown;
  for (let i = 0; i < attempts; i++) {
    // TCP first: the kernel's choice for port 0 is then tried for UDP on the same number.
    const tcp = await listenTcp({ host: options.host, port: options.port, onConnection });
    try {
      const udp = await bindUdp({
        host: options.host,
        port: tcp.port,
        onMessage,
        onError: (err) => options.logger.warn("gossip udp socket error", { error: err }),
      });
      return { udp, tcp };
    } catch (err) {
      lastError = err;
      await tcp.close();
    }
  }
  throw new Error(`gossip transport on ${formatPeer(options.host, options.port)}: ${(lastError as Error).message}`, { cause: lastError });
}

/** Wraps a connected socket; error and close are watched from the start so an early reset is not lost. */
function socketStream(socket: net.Socket, remote: string): GossipStream {
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
  socket.once("close", () => finish());
  return {
    remote,
    read(s) {
      if (sink) throw new Error("gossip stream: read called twice");
      sink = s;
      if (ended) return void s.end(endError);
      socket.on("data", (chunk: Uint8Array) => {
        if (!ended) s.data(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength));
      });
    },
    write(bytes) {
      if (ended || socket.destroyed) return Promise.reject(new Error(`gossip stream ${remote}: closed`));
      return new Promise<void>((resolve, reject) => {
        socket.write(bytes, (err) => (err ? reject(new Error(`gossip stream ${remote}: ${err.message}`, { cause: err })) : resolve()));
      });
    },
    close() {
      if (!socket.destroyed) socket.end();
    },
    abort() {
      socket.destroy();
    },
  };
}
