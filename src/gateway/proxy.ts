/**
 * The gateway's TCP proxy (Envoy's listener + tls_inspector + sni_cluster + tcp_proxy, for mesh
 * gateways): per listener, accept; read the TLS ClientHello without terminating TLS (buffered, bounded,
 * with a deadline); pick the filter chain by SNI; pick an endpoint of the chain's cluster (the balancer
 * skips unhealthy and ejected ones), retrying the connect on other endpoints; then replay the buffered
 * bytes and splice both directions with back-pressure and half-close until both sides are done or the
 * connection idles out.
 *
 * Configuration swaps atomically (`apply`): a connection reads the configuration once, when its
 * ClientHello is complete, so established connections keep going on what they started with and new ones
 * use the new one. A listener that disappears (or moves) stops accepting and its connections drain; a
 * new one binds. Stats use Envoy's names (./stats.ts).
 */
import type * as net from "node:net";
import type { Cancel, Clock, DialTcpOptions, ListenTcpOptions, Logger, TcpListener } from "../platform/index.ts";
import type { ClusterConfig, EndpointConfig, FilterChainConfig, GatewayConfig, ListenerConfig } from "./config_types.ts";
import type { GatewayStats, StatHandle } from "./stats.ts";

/** What the ClientHello parser reports after each chunk (./client_hello.ts's results fit). */
export type HelloProgress =
  | { readonly state: "more" }
  | { readonly state: "done"; readonly serverName: string | undefined }
  | { readonly state: "failed"; readonly reason: string };

/** The endpoint choice of one cluster, kept across configuration updates by the caller (./balancer.ts fits). */
export interface EndpointPicker {
  /** The next endpoint to dial, skipping the keys in `excluding`; undefined when none is usable. */
  pick(excluding?: ReadonlySet<string>): (EndpointConfig & { readonly key: string }) | undefined;
  reportSuccess(key: string): void;
  /** A connect failure or timeout (outlier detection counts them). */
  reportFailure(key: string): void;
}

export interface GatewayProxyDeps {
  readonly clock: Clock;
  readonly logger: Logger;
  readonly stats: GatewayStats;
  listen(o: ListenTcpOptions): Promise<TcpListener>;
  dial(o: DialTcpOptions): Promise<net.Socket>;
  /** A fresh ClientHello parser per connection. */
  helloParser(): { feed(chunk: Uint8Array): HelloProgress };
  /** The chain a listener's connection with `sni` takes (undefined = no match: the connection is closed). */
  chainMatcher(listener: ListenerConfig): (sni: string | undefined) => FilterChainConfig | undefined;
  /** The picker of a cluster, called on every configuration with the new cluster value (keep state across calls). */
  picker(cluster: ClusterConfig): EndpointPicker;
  /** The pickers of clusters no longer configured may be dropped. */
  dropPicker?(name: string): void;
  /** Deadline for a complete ClientHello (Envoy's listener_filters_timeout, 15 s). */
  readonly helloTimeoutMs?: number;
  /** Connect attempts per connection, each on another endpoint; default 3. */
  readonly connectAttempts?: number;
}

export interface GatewayProxy {
  /** Takes a new configuration: listeners bound or drained, new connections use it. Resolves when binding is done. */
  apply(config: GatewayConfig): Promise<void>;
  /** Listener name -> the address it is bound to. */
  listeners(): ReadonlyMap<string, { readonly host: string; readonly port: number }>;
  /** Connections currently proxied or being set up. */
  activeConnections(): number;
  /** Stops every listener and destroys every connection. */
  close(): Promise<void>;
}

/** Envoy's default listener_filters_timeout. */
export const HELLO_TIMEOUT_MS = 15_000;
/** Envoy's tcp_proxy default idle_timeout (1 h). */
export const DEFAULT_IDLE_TIMEOUT_MS = 3_600_000;
/** Envoy's default circuit-breaker max_connections. */
export const DEFAULT_MAX_CONNECTIONS = 1024;

/** Envoy's tls_inspector stat names for the parser's failure reasons (others keep their own name). */
const HELLO_FAILURE_STATS: Readonly<Record<string, string>> = { not_tls: "tls_not_found", too_large: "client_hello_too_large" };

interface BoundListener {
  readonly config: ListenerConfig;
  readonly tcp: TcpListener;
  match: (sni: string | undefined) => FilterChainConfig | undefined;
}

/**
 * Copies `from` to `to` with back-pressure (pause while `to`'s buffer is full, resume on drain) and
 * forwards the half-close: Envoy's tcp_proxy behaviour, without the stream-pipe machinery (measurably
 * cheaper per chunk on Bun).
 */
function forward(from: net.Socket, to: net.Socket): void {
  const resume = () => from.resume();
  from.on("data", (chunk: Buffer) => {
    if (!to.write(chunk)) {
      from.pause();
      to.once("drain", resume);
    }
  });
  // The FIN may have come while the connection was being routed (the hello and a half-close in one go).
  if (from.readableEnded) to.end();
  else from.once("end", () => to.end());
}

export function createGatewayProxy(d: GatewayProxyDeps): GatewayProxy {
  const log = d.logger;
  let config: GatewayConfig = { listeners: new Map(), clusters: new Map() };
  const pickers = new Map<string, EndpointPicker>();
  const bound = new Map<string, BoundListener>();
  const sockets = new Set<net.Socket>();
  const clusterActive = new Map<string, number>();
  let closed = false;
  const server = { active: d.stats.gauge({ kind: "server" }, "total_connections") };

  const clusterStat = (name: string, stat: string) => d.stats.counter({ kind: "cluster", name }, stat);

  /** Closes a downstream connection that never reached an upstream. */
  const refuse = (socket: net.Socket, stat: StatHandle) => {
    stat.add();
    socket.destroy();
  };

  const onConnection = (l: BoundListener, socket: net.Socket) => {
    if (closed) return void socket.destroy();
    const scope = { kind: "listener", name: `${l.config.address}_${l.config.port}` } as const;
    d.stats.counter(scope, "downstream_cx_total").add();
    const active = d.stats.gauge(scope, "downstream_cx_active");
    active.add();
    server.active.add();
    sockets.add(socket);
    socket.once("close", () => {
      sockets.delete(socket);
      active.sub();
      server.active.sub();
    });
    if (l.config.tlsInspector !== true) {
      // No tls_inspector: chains match at once, without SNI (only a catch-all can).
      const chain = l.match(undefined);
      if (!chain) return refuse(socket, d.stats.counter(scope, "no_filter_chain_match"));
      socket.pause();
      return void route(socket, chain, undefined, Buffer.alloc(0), config);
    }
    const parser = d.helloParser();
    const chunks: Uint8Array[] = [];
    const timer: Cancel = d.clock.setTimer(d.helloTimeoutMs ?? HELLO_TIMEOUT_MS, () => {
      socket.off("data", onData);
      refuse(socket, d.stats.counter(scope, "tls_inspector.client_hello_timeout"));
    });
    let reading = true;
    const onData = (chunk: Buffer) => {
      chunks.push(chunk);
      const p = parser.feed(chunk);
      if (p.state === "more") return;
      reading = false;
      timer();
      socket.off("data", onData);
      socket.pause();
      if (p.state === "failed") return refuse(socket, d.stats.counter(scope, `tls_inspector.${HELLO_FAILURE_STATS[p.reason] ?? p.reason}`));
      d.stats.counter(scope, p.serverName === undefined ? "tls_inspector.sni_not_found" : "tls_inspector.sni_found").add();
      // The configuration of this moment, for this connection's whole life.
      const chain = l.match(p.serverName);
      if (!chain) return refuse(socket, d.stats.counter(scope, "no_filter_chain_match"));
      void route(socket, chain, p.serverName, Buffer.concat(chunks), config);
    };
    socket.on("data", onData);
    socket.once("end", () => {
      if (!reading) return;
      timer();
      refuse(socket, d.stats.counter(scope, "tls_inspector.connection_closed")); // FIN before a complete hello
    });
  };

  const route = async (down: net.Socket, chain: FilterChainConfig, sni: string | undefined, hello: Buffer, cfg: GatewayConfig) => {
    const tcp = { kind: "tcp", name: chain.statPrefix } as const;
    d.stats.counter(tcp, "downstream_cx_total").add();
    const clusterName = chain.route.kind === "cluster" ? chain.route.cluster : (sni ?? "");
    const cluster = cfg.clusters.get(clusterName);
    if (!cluster) return refuse(down, d.stats.counter(tcp, "downstream_cx_no_route"));
    const limit = cluster.maxConnections ?? DEFAULT_MAX_CONNECTIONS;
    if ((clusterActive.get(cluster.name) ?? 0) >= limit) return refuse(down, clusterStat(cluster.name, "upstream_cx_overflow"));
    const picker = pickers.get(cluster.name);
    const tried = new Set<string>();
    let up: net.Socket | undefined;
    let ep: (EndpointConfig & { readonly key: string }) | undefined;
    for (let attempt = 0; attempt < (d.connectAttempts ?? 3) && !down.destroyed; attempt++) {
      ep = picker?.pick(tried);
      if (!ep) break;
      tried.add(ep.key);
      clusterStat(cluster.name, "upstream_cx_total").add();
      try {
        const family = cluster.dns?.family === "v4_only" ? 4 : cluster.dns?.family === "v6_only" ? 6 : undefined;
        up = await d.dial({ host: ep.address, port: ep.port, timeoutMs: cluster.connectTimeoutMs, allowHalfOpen: true, ...(family ? { family } : {}) });
        picker!.reportSuccess(ep.key);
        break;
      } catch (err) {
        picker!.reportFailure(ep.key);
        const timeout = (err as { code?: string }).code === "ETIMEDOUT";
        clusterStat(cluster.name, timeout ? "upstream_cx_connect_timeout" : "upstream_cx_connect_fail").add();
        log.debug("connect failed", { cluster: cluster.name, endpoint: ep.key, error: err });
      }
    }
    if (!up) {
      return refuse(down, tried.size === 0 ? clusterStat(cluster.name, "upstream_cx_none_healthy") : d.stats.counter(tcp, "upstream_connect_attempts_exceeded"));
    }
    if (down.destroyed || closed) return void up.destroy();
    splice(down, up, cluster.name, tcp, chain.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS, hello);
  };

  /** Both directions with back-pressure (pipe) and half-close (end follows end); stats when both are gone. */
  const splice = (down: net.Socket, up: net.Socket, clusterName: string, tcp: { kind: "tcp"; name: string }, idleMs: number, hello: Buffer) => {
    sockets.add(up);
    const upActive = d.stats.gauge({ kind: "cluster", name: clusterName }, "upstream_cx_active");
    upActive.add();
    clusterActive.set(clusterName, (clusterActive.get(clusterName) ?? 0) + 1);
    up.on("error", () => up.destroy());
    down.on("error", () => down.destroy());
    let finished = 0;
    const finish = () => {
      if (++finished < 2) return;
      upActive.sub();
      clusterActive.set(clusterName, (clusterActive.get(clusterName) ?? 1) - 1);
      d.stats.counter(tcp, "downstream_cx_rx_bytes_total").add(down.bytesRead);
      d.stats.counter(tcp, "downstream_cx_tx_bytes_total").add(down.bytesWritten);
      clusterStat(clusterName, "upstream_cx_rx_bytes_total").add(up.bytesRead);
      clusterStat(clusterName, "upstream_cx_tx_bytes_total").add(up.bytesWritten);
    };
    // A reset on either side resets the other (Envoy closes both with NoFlush).
    down.once("close", () => {
      sockets.delete(up);
      up.destroy();
      finish();
    });
    up.once("close", () => {
      down.destroy();
      finish();
    });
    if (idleMs > 0) {
      // Activity (reads or writes) on the downstream socket covers both directions of the splice.
      down.setTimeout(idleMs, () => {
        d.stats.counter(tcp, "idle_timeout").add();
        down.destroy();
      });
    }
    if (hello.length > 0) up.write(hello);
    forward(down, up);
    forward(up, down);
    down.resume();
  };

  const bind = async (lc: ListenerConfig): Promise<void> => {
    const entry: { l?: BoundListener } = {};
    const tcp = await d.listen({
      host: lc.address, port: lc.port, allowHalfOpen: true,
      onConnection: (s) => (entry.l ? onConnection(entry.l, s) : s.destroy()),
    });
    entry.l = { config: lc, tcp, match: d.chainMatcher(lc) };
    bound.set(lc.name, entry.l);
    log.info("listening", { listener: lc.name, address: `${tcp.host}:${tcp.port}` });
  };

  return {
    async apply(next) {
      if (closed) return;
      config = next;
      for (const c of next.clusters.values()) pickers.set(c.name, d.picker(c));
      for (const name of [...pickers.keys()]) {
        if (next.clusters.has(name)) continue;
        pickers.delete(name);
        d.dropPicker?.(name);
      }
      for (const [name, l] of [...bound]) {
        const want = next.listeners.get(name);
        if (want && want.address === l.config.address && want.port === l.config.port) {
          l.match = d.chainMatcher(want); // same socket, new chains
          continue;
        }
        bound.delete(name);
        log.info("listener removed; draining its connections", { listener: name });
        await l.tcp.stopAccepting();
      }
      for (const [name, lc] of next.listeners) {
        if (bound.has(name)) continue;
        try {
          await bind(lc);
        } catch (err) {
          d.stats.counter({ kind: "server" }, "listener_create_failure").add();
          log.error("cannot bind a listener", { listener: name, error: err });
        }
      }
    },
    listeners: () => new Map([...bound].map(([name, l]) => [name, { host: l.tcp.host, port: l.tcp.port }])),
    activeConnections: () => server.active.value,
    async close() {
      if (closed) return;
      closed = true;
      for (const s of sockets) s.destroy();
      await Promise.all([...bound.values()].map((l) => l.tcp.close()));
      bound.clear();
    },
  };
}
