/**
 * Pooled packet connections to servers of other datacenters (Consul's agent/consul/wanfed/pool.go),
 * keyed by the destination's WAN member name.
 *
 * - One connection per destination, shared by every send: each packet is written as one whole frame
 *   in one write, so frames never interleave (Consul lends a connection to one writer at a time
 *   because Go writes block; here concurrent sends share the connection, and the dial).
 * - A failed write marks the connection failed: it is aborted and the next send dials afresh (Consul's
 *   MarkFailed + ReturnOrClose). A write that is not accepted within `writeTimeoutMs` counts as failed,
 *   so a stalled gateway never makes a send hang. A connection the far end closes leaves the pool at once.
 * - A connection not used for `idleMs` (2 min, GossipPacketMaxIdleTime) is closed by a reaper that
 *   runs every `reapIntervalMs` (1 s) while the pool holds connections.
 */
import type { Cancel, Clock, Logger } from "../platform/index.ts";
import type { WanfedConnection } from "./wanfed_connection.ts";

export interface PacketPoolOptions {
  readonly clock: Clock;
  readonly logger: Logger;
  /** Close a connection unused this long (the transport passes 2 min, WAN_GOSSIP_PACKET_MAX_IDLE_MS). */
  readonly idleMs: number;
  /** Reaper period; default 1000 ms as in Consul. */
  readonly reapIntervalMs?: number;
  /** A write not accepted within this fails the connection; default 10 s. */
  readonly writeTimeoutMs?: number;
}

export interface PacketPoolStats {
  /** Connections dialled (successfully or not). */
  readonly dials: number;
  /** Sends that found an open connection or joined a dial in flight. */
  readonly reused: number;
  /** Connections dropped after a failed or timed-out write, or closed by the far end. */
  readonly failed: number;
  /** Connections closed by the reaper. */
  readonly reaped: number;
  /** Connections (or dials) held now. */
  readonly open: number;
}

interface Entry {
  readonly key: string;
  readonly ready: Promise<WanfedConnection>;
  conn: WanfedConnection | undefined;
  lastUsed: number;
  dead: boolean;
}

/** Opens a new connection for the pool; a rejection fails every send waiting for it. */
export type PacketDial = () => Promise<WanfedConnection>;

export class WanfedPacketPool {
  readonly #o: PacketPoolOptions;
  readonly #entries = new Map<string, Entry>();
  #cancelReaper: Cancel | undefined;
  #closed = false;
  #c = { dials: 0, reused: 0, failed: 0, reaped: 0 };

  constructor(options: PacketPoolOptions) {
    this.#o = options;
  }

  stats(): PacketPoolStats {
    return { ...this.#c, open: this.#entries.size };
  }

  /** Destinations with a pooled connection or a dial in flight, sorted. */
  keys(): string[] {
    return [...this.#entries.keys()].sort();
  }

  /**
   * Writes `frame` (one whole packet frame) on the pooled connection to `key`, dialling with `dial`
   * when there is none. Resolves once the connection accepted the frame; rejects with the dial's
   * error, the write's error, a write timeout, or "wanfed: connection pool is closed".
   */
  async send(key: string, frame: Uint8Array, dial: PacketDial): Promise<void> {
    if (this.#closed) throw new Error("wanfed: connection pool is closed");
    let entry = this.#entries.get(key);
    if (entry) this.#c.reused++;
    else entry = this.#open(key, dial);
    entry.lastUsed = this.#o.clock.monotonic();
    const conn = await entry.ready;
    if (this.#closed) throw new Error("wanfed: connection pool is closed");
    if (entry.dead) throw new Error(`wanfed packet connection to ${key} closed`);
    entry.lastUsed = this.#o.clock.monotonic();
    try {
      await this.#write(conn, frame);
    } catch (err) {
      this.#fail(entry, err as Error);
      throw err;
    }
  }

  /**
   * Drops every pooled connection (a packet being written may be lost: gossip tolerates that); the
   * next packet to a destination dials afresh, through the gateway the locator picks then. Returns
   * how many it dropped.
   */
  retireAll(): number {
    const entries = [...this.#entries.values()];
    for (const e of entries) {
      this.#drop(e);
      e.conn?.abort();
    }
    return entries.length;
  }

  /** Aborts every pooled connection (a dial in flight is the dialer's to cancel) and stops the reaper. Idempotent. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#stopReaper();
    for (const e of this.#entries.values()) {
      e.dead = true;
      e.conn?.abort();
    }
    this.#entries.clear();
  }

  #open(key: string, dial: PacketDial): Entry {
    this.#c.dials++;
    let entry: Entry;
    // Through a microtask, so a dial that throws synchronously rejects like any other failure.
    const ready = Promise.resolve().then(dial).then(
      (conn) => {
        if (entry.dead || this.#closed) {
          conn.abort();
          return conn;
        }
        entry.conn = conn;
        // Nothing is expected back; an end means the far side (or the gateway) dropped us.
        conn.read({
          data: () => {},
          end: (err) => {
            if (entry.dead) return;
            this.#fail(entry, err ?? new Error("closed by the far end"));
          },
        });
        return conn;
      },
      (err: unknown) => {
        this.#drop(entry);
        throw err;
      },
    );
    entry = { key, ready, conn: undefined, lastUsed: this.#o.clock.monotonic(), dead: false };
    this.#entries.set(key, entry);
    this.#startReaper();
    return entry;
  }

  #write(conn: WanfedConnection, frame: Uint8Array): Promise<void> {
    const ms = this.#o.writeTimeoutMs ?? 10_000;
    return new Promise<void>((resolve, reject) => {
      const cancel = this.#o.clock.setTimer(ms, () => reject(new Error(`write not accepted within ${ms} ms`)));
      conn.write(frame).then(
        () => (cancel(), resolve()),
        (err: unknown) => (cancel(), reject(err)),
      );
    });
  }

  #fail(entry: Entry, err: Error): void {
    if (entry.dead) return;
    this.#c.failed++;
    this.#o.logger.debug("wanfed packet connection failed; dropped from the pool", { to: entry.key, error: err.message });
    this.#drop(entry);
    entry.conn?.abort();
  }

  #drop(entry: Entry): void {
    entry.dead = true;
    if (this.#entries.get(entry.key) === entry) this.#entries.delete(entry.key);
    if (this.#entries.size === 0) this.#stopReaper();
  }

  #startReaper(): void {
    if (this.#cancelReaper) return;
    this.#cancelReaper = this.#o.clock.setInterval(this.#o.reapIntervalMs ?? 1000, () => this.#reap());
  }

  #stopReaper(): void {
    this.#cancelReaper?.();
    this.#cancelReaper = undefined;
  }

  #reap(): void {
    const now = this.#o.clock.monotonic();
    for (const e of [...this.#entries.values()]) {
      // Consul keeps a connection while now - lastUsed < maxTime. A dial in flight is never idle.
      if (!e.conn || now - e.lastUsed < this.#o.idleMs) continue;
      this.#c.reaped++;
      this.#drop(e);
      e.conn.close();
    }
  }
}
