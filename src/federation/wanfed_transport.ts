/**
 * The WAN pool's gossip transport with WAN federation through mesh gateways (Consul's
 * agent/consul/wanfed.Transport): it wraps the ordinary UDP/TCP transport and sends what is meant for
 * servers of other datacenters through a mesh gateway instead, as TLS with SNI
 * `<node>.server.<dc>.<domain>` and Causeway's two WAN gossip ALPN protocols.
 *
 * - Routing (wanfed_route.ts): by the destination member's name the gossip core passes with each send
 *   (`toName`), else the name in a `name/addr` address (the `*.<primary>/192.0.2.2` join
 *   placeholder), else the WAN member name the pool knows for a bare address (`nameOf`). This
 *   datacenter and unknown addresses use the ordinary transport, unchanged.
 * - Packets to another datacenter: length-prefixed frames (packet_framing.ts) on a pooled connection
 *   per destination with ALPN causeway/wan-gossip/packet (wanfed_pool.ts: failed connections are
 *   dropped, idle ones closed after 2 min).
 * - Streams to another datacenter: a fresh connection with ALPN causeway/wan-gossip/stream per
 *   stream, the raw gossip stream inside (the driver frames and times out exchanges itself).
 * - Inbound: everything on the serf WAN port comes through the ordinary transport; what servers of
 *   other datacenters send through gateways arrives on the server port, which hands the two kinds of
 *   connection to `acceptPacketConnection` / `acceptStreamConnection`. Both reach the one handler.
 *
 * Nothing here knows the locator, TLS or sockets: `resolveGateway` and `dial` are injected
 * (DESIGN.md: "the wanfed transport gets resolveGateway(dc) and a dialer, nothing else").
 */
import type { GossipStream, GossipTransport, TransportHandler } from "../membership/index.ts";
import type { Clock, Logger } from "../platform/index.ts";
import { WAN_GOSSIP_PACKET_ALPN, WAN_GOSSIP_STREAM_ALPN } from "./names.ts";
import { encodeWanGossipPacket, WAN_GOSSIP_PACKET_MAX_IDLE_MS } from "./packet_framing.ts";
import { connectionStream, type WanfedConnection, type WanfedDial } from "./wanfed_connection.ts";
import { createGatewayDialer, WANFED_DIAL_TIMEOUT_MS, type GatewayResolution } from "./wanfed_dialer.ts";
import { ingestPacketConnection, type PacketIngest } from "./wanfed_inbound.ts";
import { WanfedPacketPool, type PacketPoolStats } from "./wanfed_pool.ts";
import { wanfedRoute, type WanfedRoute } from "./wanfed_route.ts";

export interface WanfedTransportOptions {
  /** The ordinary WAN transport (UDP + TCP on the serf WAN port). Owned from now on: closed with this one. */
  readonly local: GossipTransport;
  /** This server's datacenter. */
  readonly localDc: string;
  /** DNS domain of server names, e.g. "consul". */
  readonly domain: string;
  /**
   * The WAN member name (`<node>.<dc>`) the pool knows at `addr` ("host:port"), if any: the pool's
   * view. Asked only for sends without a member name (joins to a bare address), so it should be cheap
   * but need not be exact.
   */
  readonly nameOf: (addr: string) => string | undefined;
  /** The gateway to reach a datacenter through (the locator's pick). */
  readonly resolveGateway: (dc: string) => GatewayResolution;
  /** TLS through a gateway with SNI and ALPN (see WanfedDial). */
  readonly dial: WanfedDial;
  readonly clock: Clock;
  readonly logger: Logger;
  /** Deadline of a packet connection's dial; default 10 s (Consul's pool.DefaultDialTimeout). Streams use the caller's. */
  readonly dialTimeoutMs?: number;
  /** A packet write not accepted within this fails its connection; default 10 s. */
  readonly writeTimeoutMs?: number;
  /** Idle limit of packet connections, both ways; default 2 min (GossipPacketMaxIdleTime). */
  readonly idleMs?: number;
}

export interface WanfedTransportStats {
  /** Packets handed to a gateway connection / refused (no gateway, dial or write failure). */
  readonly gatewayPacketsSent: number;
  readonly gatewayPacketErrors: number;
  /** Streams dialled through a gateway. */
  readonly gatewayStreams: number;
  /** Packets and streams received through the server port. */
  readonly inboundPackets: number;
  readonly inboundStreams: number;
  /** Inbound packet connections open now. */
  readonly inboundPacketConnections: number;
  readonly pool: PacketPoolStats;
}

/** A GossipTransport that also ingests the server port's WAN gossip connections. */
export interface WanfedTransport extends GossipTransport {
  /**
   * A connection that negotiated ALPN causeway/wan-gossip/packet on the server port, from `remote`
   * (the gateway's "ip:port"; it becomes each packet's `from`). Owned from now on: read until it
   * ends, breaks the framing, or idles for 2 min. Aborted before `listen` and after `close`.
   */
  acceptPacketConnection(conn: WanfedConnection, remote: string): void;
  /**
   * A connection that negotiated ALPN causeway/wan-gossip/stream: handed to the handler's `stream`
   * as a GossipStream named `remote`. Aborted before `listen` and after `close`.
   */
  acceptStreamConnection(conn: WanfedConnection, remote: string): void;
  stats(): WanfedTransportStats;
  /**
   * Drops the pooled packet connections to other datacenters, so the next packets go the way the
   * locator picks now (call when the gateways or the route to the primary changed). Returns how many.
   */
  retireConnections(): number;
}

/**
 * Wraps `options.local`. `localAddr` and `maxPacketBytes` are the local transport's: a packet that may
 * go to any member must fit every route, and the 4 MiB frame limit (Consul's GossipPacketMaxByteSize)
 * is far above the gossip core's packets, so it is only the receiving side's guard.
 */
export function createWanfedTransport(options: WanfedTransportOptions): WanfedTransport {
  const { local, clock } = options;
  const log = options.logger;
  const idleMs = options.idleMs ?? WAN_GOSSIP_PACKET_MAX_IDLE_MS;
  const dialTimeoutMs = options.dialTimeoutMs ?? WANFED_DIAL_TIMEOUT_MS;
  const routing = { localDc: options.localDc, domain: options.domain, nameOf: options.nameOf };
  const dialer = createGatewayDialer({ resolveGateway: options.resolveGateway, dial: options.dial, clock });
  const pool = new WanfedPacketPool({ clock, logger: log, idleMs, writeTimeoutMs: options.writeTimeoutMs });
  const ingests = new Set<PacketIngest>();
  const streams = new Set<GossipStream>();
  const c = { gatewayPacketsSent: 0, gatewayPacketErrors: 0, gatewayStreams: 0, inboundPackets: 0, inboundStreams: 0 };
  let handler: TransportHandler | undefined;
  let closed = false;
  let closing: Promise<void> | undefined;

  const route = (to: string, toName: string | undefined): WanfedRoute => wanfedRoute(to, routing, toName);
  const track = (conn: WanfedConnection, remote: string): GossipStream => {
    const stream: GossipStream = connectionStream(conn, remote, () => streams.delete(stream));
    streams.add(stream);
    return stream;
  };

  return {
    localAddr: local.localAddr,
    maxPacketBytes: local.maxPacketBytes,

    listen(h) {
      if (handler) throw new Error("wanfed transport: listen called twice");
      handler = h;
      local.listen(h);
    },

    async sendPacket(to, bytes, toName) {
      if (closed) throw new Error(`wanfed send to ${to}: transport closed`);
      if (bytes.length > local.maxPacketBytes) throw new Error(`wanfed send to ${to}: ${bytes.length} bytes exceeds ${local.maxPacketBytes}`);
      const r = route(to, toName);
      if (r.via === "local") return local.sendPacket(r.addr, bytes, toName);
      const frame = encodeWanGossipPacket(bytes);
      try {
        await pool.send(r.name, frame, async () => (await dialer.open(r.dc, r.sni, WAN_GOSSIP_PACKET_ALPN, dialTimeoutMs)).conn);
        c.gatewayPacketsSent++;
      } catch (err) {
        c.gatewayPacketErrors++;
        throw err;
      }
    },

    async dialStream(to, timeoutMs, toName) {
      if (closed) throw new Error(`wanfed dial ${to}: transport closed`);
      const r = route(to, toName);
      if (r.via === "local") return local.dialStream(r.addr, timeoutMs, toName);
      const { conn, gateway } = await dialer.open(r.dc, r.sni, WAN_GOSSIP_STREAM_ALPN, timeoutMs);
      if (closed) {
        conn.abort();
        throw new Error(`wanfed dial ${to}: transport closed`);
      }
      c.gatewayStreams++;
      return track(conn, `${r.name} via ${gateway}`);
    },

    acceptPacketConnection(conn, remote) {
      if (closed || !handler) return void conn.abort();
      const h = handler;
      let ingest: PacketIngest | undefined; // onDone may run before ingestPacketConnection returns
      ingest = ingestPacketConnection(conn, remote, {
        clock, logger: log, idleMs,
        deliver(bytes) {
          c.inboundPackets++;
          try {
            h.packet(remote, bytes);
          } catch (err) {
            log.error("gossip packet handler threw; packet dropped", { from: remote, error: err });
          }
        },
        onDone: () => void (ingest && ingests.delete(ingest)),
      });
      if (!ingest.finished) ingests.add(ingest);
    },

    acceptStreamConnection(conn, remote) {
      if (closed || !handler) return void conn.abort();
      const stream = track(conn, remote);
      c.inboundStreams++;
      try {
        handler.stream(stream);
      } catch (err) {
        stream.abort();
        log.error("gossip stream handler threw; stream dropped", { peer: remote, error: err });
      }
    },

    stats: () => ({ ...c, inboundPacketConnections: ingests.size, pool: pool.stats() }),

    retireConnections: () => pool.retireAll(),

    close() {
      closing ??= (async () => {
        closed = true;
        dialer.close();
        pool.close();
        for (const i of [...ingests]) i.abort();
        for (const s of [...streams]) s.abort();
        streams.clear();
        await local.close();
      })();
      return closing;
    },
  };
}
