/**
 * The RPC connection pool: one HTTP/2 connection per target server, carried over a stream from an
 * injected dialer (today a direct TLS or plaintext connection to the server port; with WAN federation,
 * a connection through a mesh gateway). ConnectRPC clients get a Transport per target.
 *
 * A failed dial backs off exponentially (calls fail fast with Unavailable meanwhile); a dial that
 * rejects with a NoPathError (nothing dialled: no mesh gateway to the datacenter) fails its calls with
 * that message at once and is asked again by the next call, with no backoff. A connection
 * with no open streams for `idleTimeoutMs` is closed, and a target with no connection that has not been
 * used for as long is forgotten, so targets that stop being used (datacenters that vanish, names that were
 * asked for once) do not pile up: the pool holds only targets used in the last `idleTimeoutMs` or so.
 */
import * as http2 from "node:http2";
import type { Duplex } from "node:stream";
import { Code, ConnectError, type Transport } from "@connectrpc/connect";
import { createGrpcTransport, type GrpcTransportOptions } from "@connectrpc/connect-node";
import { asPlainStream, type Clock, type Logger, type Rng } from "../platform/index.ts";
import { NoPathError } from "./errors.ts";

/** A server to call: a specific node, or (node undefined) any server of the datacenter. */
export interface RpcTarget {
  readonly datacenter: string;
  readonly node?: string;
}

/**
 * Opens a connected stream to the target's server port that speaks HTTP/2 (already past TLS/ALPN or
 * marker). Rejects with a NoPathError when there is no way to the target's datacenter at all.
 */
export type RpcDialer = (target: RpcTarget) => Promise<Duplex>;

export interface RpcPoolOptions {
  readonly dial: RpcDialer;
  readonly clock: Clock;
  readonly rng: Rng;
  readonly logger: Logger;
  /** Close connections idle this long; default 120 s (Consul's pool uses 2 minutes). */
  readonly idleTimeoutMs?: number;
  /** Reconnect backoff after failed dials: first delay and cap; defaults 100 ms and 10 s. */
  readonly backoffBaseMs?: number;
  readonly backoffMaxMs?: number;
}

export interface RpcPool {
  /** A ConnectRPC (gRPC protocol) transport for calls to `target`. Cheap; the connection is shared. */
  transport(target: RpcTarget): Transport;
  /** Open connections, for tests and metrics. */
  connections(): number;
  /** Targets the pool keeps state for (connected, connecting, backing off or recently used), for tests and metrics. */
  targets(): number;
  /**
   * Closes the connections of the targets `which` selects, gracefully (calls under way finish); the
   * next call to such a target dials afresh. For a changed path to another datacenter: a connection
   * dialled through a gateway (or directly) that is no longer the way there must not carry new calls.
   * Returns how many connections it closed.
   */
  retire(which: (target: RpcTarget) => boolean): number;
  /** Closes every connection; later calls fail. */
  close(): void;
}

/** ConnectRPC's HTTP/2 session manager interface (not exported by name from connect-node). */
type SessionManager = NonNullable<GrpcTransportOptions["sessionManager"]>;

export function targetKey(t: RpcTarget): string {
  return t.node ? `${t.node}.${t.datacenter}` : `*.${t.datacenter}`;
}

/**
 * The HTTP/2 authority of a target's connection: its key, with anything a URL host cannot hold replaced,
 * so that no name (a node's, a datacenter's) can make the transport's URL invalid.
 */
function authorityOf(t: RpcTarget): string {
  return `http://${targetKey(t).replace(/[^A-Za-z0-9.*_-]/g, "-")}`;
}

export function createRpcPool(o: RpcPoolOptions): RpcPool {
  const idleMs = o.idleTimeoutMs ?? 120_000;
  const base = o.backoffBaseMs ?? 100;
  const cap = o.backoffMaxMs ?? 10_000;
  const entries = new Map<string, PoolEntry>();
  let closed = false;

  class PoolEntry implements SessionManager {
    readonly authority: string;
    private session: http2.ClientHttp2Session | undefined;
    private connecting: Promise<http2.ClientHttp2Session> | undefined;
    private failures = 0;
    private retryAt = 0;
    private lastError = "";
    private open = 0;
    lastUsed = o.clock.monotonic();

    constructor(readonly target: RpcTarget, readonly key: string) {
      this.authority = authorityOf(target);
    }

    async request(method: string, path: string, headers: http2.OutgoingHttpHeaders, options: Omit<http2.ClientSessionRequestOptions, "signal">): Promise<http2.ClientHttp2Stream> {
      // A transport kept past its entry's eviction uses the target's current entry (or brings this one back).
      const current = entries.get(this.key);
      if (current && current !== this) return current.request(method, path, headers, options);
      if (!current && !closed) entries.set(this.key, this);
      this.lastUsed = o.clock.monotonic();
      let session = await this.connect();
      // Retired or closed while this call waited for it (retire() runs between the connect and here):
      // a closing session takes no new streams, so the call goes on a fresh connection.
      for (let tries = 0; (session.closed || session.destroyed || this.session !== session) && tries < 3; tries++) session = await this.connect();
      this.lastUsed = o.clock.monotonic();
      const stream = session.request({ ...headers, ":method": method, ":path": path }, options);
      this.open++;
      stream.once("close", () => {
        this.open--;
        this.lastUsed = o.clock.monotonic();
      });
      return stream;
    }

    notifyResponseByteRead(): void {
      this.lastUsed = o.clock.monotonic();
    }

    isIdle(now: number): boolean {
      return this.session !== undefined && this.open === 0 && now - this.lastUsed >= idleMs;
    }

    /** Unused for the idle timeout, with nothing open or under way: nothing is lost by forgetting it. */
    isForgettable(now: number): boolean {
      return this.session === undefined && this.connecting === undefined && this.open === 0 && now - this.lastUsed >= idleMs;
    }

    hasSession(): boolean {
      return this.session !== undefined;
    }

    close(): void {
      this.session?.close();
      this.session = undefined;
    }

    private connect(): Promise<http2.ClientHttp2Session> {
      if (closed) return Promise.reject(new ConnectError("rpc pool closed", Code.Unavailable));
      if (this.session && !this.session.closed && !this.session.destroyed) return Promise.resolve(this.session);
      if (this.connecting) return this.connecting;
      const now = o.clock.monotonic();
      if (now < this.retryAt) {
        const wait = Math.ceil(this.retryAt - now);
        return Promise.reject(new ConnectError(`${targetKey(this.target)}: reconnecting in ${wait} ms after ${this.failures} failed dials (last: ${this.lastError})`, Code.Unavailable));
      }
      this.connecting = o.dial(this.target).then(
        (stream) => {
          this.connecting = undefined;
          this.failures = 0;
          const session = http2.connect(this.authority, { createConnection: () => asPlainStream(stream) });
          session.on("error", (err: Error) => o.logger.debug("rpc pool: connection error", { target: targetKey(this.target), error: err }));
          session.once("close", () => {
            if (this.session === session) this.session = undefined;
          });
          session.once("goaway", () => {
            if (this.session === session) this.session = undefined;
          });
          this.session = session;
          this.lastUsed = o.clock.monotonic();
          return session;
        },
        (err: unknown) => {
          this.connecting = undefined;
          // Nothing was dialled (no path to the datacenter): fail with the reason as it is, no backoff.
          if (err instanceof NoPathError) throw new ConnectError(err.message, Code.Unavailable);
          this.failures++;
          this.lastError = (err as Error).message;
          const delay = Math.min(cap, base * 2 ** Math.min(this.failures - 1, 20));
          this.retryAt = o.clock.monotonic() + delay * (0.5 + o.rng.next() / 2);
          o.logger.warn("rpc pool: dial failed", { target: targetKey(this.target), failures: this.failures, error: err });
          throw new ConnectError(`${targetKey(this.target)}: ${(err as Error).message}`, Code.Unavailable);
        },
      );
      return this.connecting;
    }
  }

  const entry = (t: RpcTarget) => {
    const key = targetKey(t);
    let e = entries.get(key);
    if (!e) entries.set(key, (e = new PoolEntry(t, key)));
    return e;
  };
  const stopReaper = o.clock.setInterval(Math.max(1000, idleMs / 4), () => {
    const now = o.clock.monotonic();
    for (const [key, e] of entries) {
      if (e.isIdle(now)) e.close();
      if (e.isForgettable(now)) entries.delete(key);
    }
  });

  return {
    transport(target) {
      const e = entry(target);
      return createGrpcTransport({ baseUrl: e.authority, sessionManager: e });
    },
    connections: () => [...entries.values()].filter((e) => e.hasSession()).length,
    targets: () => entries.size,
    retire(which) {
      let n = 0;
      for (const e of entries.values()) {
        if (!which(e.target) || !e.hasSession()) continue;
        e.close();
        n++;
      }
      return n;
    },
    close() {
      closed = true;
      stopReaper();
      for (const e of entries.values()) e.close();
    },
  };
}

