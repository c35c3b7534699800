/**
 * An in-memory gossip network for tests and simulation: every transport on it is a `GossipTransport`
 * whose deliveries are timers on the injected Clock, so with a simulated clock and a seeded Rng a run
 * is deterministic.
 *
 * Packets get a random latency in `latencyMs` (so bursts are reordered) and are dropped with
 * probability `loss`, or when either end is down or the pair is blocked. Streams are ordered and
 * reliable, but every write is split into random chunks (exercising the driver's frame reassembly);
 * dialing a closed address fails after one latency with "connection refused".
 */
import type { Clock, Rng } from "../platform/index.ts";
import type { GossipStream, GossipTransport, StreamSink, TransportHandler } from "./transport.ts";

export interface MemoryNetworkOptions {
  readonly clock: Clock;
  readonly rng: Rng;
  /** One-way latency range in ms, inclusive; default [1, 5]. */
  readonly latencyMs?: readonly [number, number];
  /** Packet loss probability in [0, 1); default 0. Streams are never lossy. */
  readonly loss?: number;
  /** Largest datagram; default 65507 (the UDP limit). */
  readonly maxPacketBytes?: number;
}

export interface MemoryNetwork {
  /** Binds `addr` on the network. Throws if another open transport holds it. */
  transport(addr: string): GossipTransport;
  /** Blocks (true) or unblocks traffic between two addresses, both directions, packets and new streams. */
  setBlocked(a: string, b: string, blocked: boolean): void;
  /** Packets delivered and dropped so far (loss, down or blocked ends). */
  readonly stats: { readonly delivered: number; readonly dropped: number };
}

interface Endpoint {
  readonly addr: string;
  handler: TransportHandler | undefined;
  closed: boolean;
  readonly streams: Set<MemoryStream>;
}

/** Creates an empty network. */
export function createMemoryNetwork(options: MemoryNetworkOptions): MemoryNetwork {
  const { clock, rng } = options;
  const [minLat, maxLat] = options.latencyMs ?? [1, 5];
  const loss = options.loss ?? 0;
  const maxPacketBytes = options.maxPacketBytes ?? 65_507;
  const endpoints = new Map<string, Endpoint>();
  const blocked = new Set<string>();
  const stats = { delivered: 0, dropped: 0 };
  const pairKey = (a: string, b: string) => (a < b ? `${a}\u0000${b}` : `${b}\u0000${a}`);
  const latency = () => minLat + rng.int(maxLat - minLat + 1);
  const reachable = (from: string, to: string): Endpoint | undefined => {
    const ep = endpoints.get(to);
    const src = endpoints.get(from);
    if (!ep || ep.closed || !src || src.closed || blocked.has(pairKey(from, to))) return undefined;
    return ep;
  };

  const transport = (addr: string): GossipTransport => {
    const existing = endpoints.get(addr);
    if (existing && !existing.closed) throw new Error(`memory network: address ${addr} in use`);
    const self: Endpoint = { addr, handler: undefined, closed: false, streams: new Set() };
    endpoints.set(addr, self);
    return {
      localAddr: addr,
      maxPacketBytes,
      listen(handler) {
        self.handler = handler;
      },
      sendPacket(to, bytes) {
        if (self.closed) return Promise.reject(new Error(`memory send to ${to}: transport closed`));
        if (bytes.length > maxPacketBytes) return Promise.reject(new Error(`memory send to ${to}: ${bytes.length} bytes exceeds ${maxPacketBytes}`));
        const copy = bytes.slice();
        if (loss > 0 && rng.next() < loss) {
          stats.dropped++;
          return Promise.resolve();
        }
        clock.setTimer(latency(), () => {
          const ep = reachable(addr, to);
          if (!ep?.handler) return void stats.dropped++;
          stats.delivered++;
          ep.handler.packet(addr, copy);
        });
        return Promise.resolve();
      },
      dialStream(to, timeoutMs) {
        void timeoutMs;
        if (self.closed) return Promise.reject(new Error(`memory dial ${to}: transport closed`));
        return new Promise<GossipStream>((resolve, reject) => {
          clock.setTimer(latency(), () => {
            const ep = reachable(addr, to);
            if (!ep?.handler || self.closed) return reject(new Error(`memory dial ${to}: connection refused`));
            const local = new MemoryStream(to, clock, rng, latency, self);
            const remote = new MemoryStream(addr, clock, rng, latency, ep);
            local.peer = remote;
            remote.peer = local;
            ep.handler.stream(remote);
            resolve(local);
          });
        });
      },
      close() {
        if (!self.closed) {
          self.closed = true;
          for (const s of [...self.streams]) s.abort();
          if (endpoints.get(addr) === self) endpoints.delete(addr);
        }
        return Promise.resolve();
      },
    };
  };

  return {
    transport,
    setBlocked(a, b, on) {
      if (on) blocked.add(pairKey(a, b));
      else blocked.delete(pairKey(a, b));
    },
    stats,
  };
}

/** One end of an in-memory stream pair. Deliveries to the peer are timers in non-decreasing time order. */
class MemoryStream implements GossipStream {
  peer: MemoryStream | undefined;
  private sink: StreamSink | undefined;
  private held: Array<Uint8Array | { end: Error | undefined }> = [];
  private ended = false;
  private endError: Error | undefined;
  private writeClosed = false;
  private lastDeliveryAt = 0;

  constructor(
    readonly remote: string,
    private readonly clock: Clock,
    private readonly rng: Rng,
    private readonly latency: () => number,
    private readonly owner: Endpoint,
  ) {
    owner.streams.add(this);
  }

  read(sink: StreamSink): void {
    if (this.sink) throw new Error("memory stream: read called twice");
    this.sink = sink;
    if (this.ended) return void sink.end(this.endError);
    const held = this.held;
    this.held = [];
    for (const h of held) this.deliver(h);
  }

  write(bytes: Uint8Array): Promise<void> {
    if (this.writeClosed || this.ended) return Promise.reject(new Error(`memory stream to ${this.remote}: closed`));
    let rest = bytes.slice();
    while (rest.length > 0) {
      const n = 1 + this.rng.int(rest.length);
      const piece = rest.subarray(0, n);
      this.toPeer(() => this.peer?.deliver(piece));
      rest = rest.subarray(n);
    }
    return Promise.resolve();
  }

  close(): void {
    if (this.writeClosed || this.ended) return;
    this.writeClosed = true;
    this.toPeer(() => this.peer?.deliver({ end: undefined }));
  }

  abort(): void {
    if (this.ended) return;
    this.writeClosed = true;
    this.finish(new Error("memory stream: aborted locally"));
    const peer = this.peer;
    this.clock.setTimer(this.latency(), () => peer?.deliver({ end: new Error("memory stream: connection reset by peer") }));
  }

  /** Schedules `fn` after a latency, never before an earlier delivery of this stream. */
  private toPeer(fn: () => void): void {
    const now = this.clock.monotonic();
    const at = Math.max(now + this.latency(), this.lastDeliveryAt);
    this.lastDeliveryAt = at;
    this.clock.setTimer(at - now, fn);
  }

  private deliver(item: Uint8Array | { end: Error | undefined }): void {
    if (this.ended) return;
    if (!this.sink) {
      this.held.push(item);
      return;
    }
    if (item instanceof Uint8Array) this.sink.data(item);
    else this.finish(item.end);
  }

  private finish(error: Error | undefined): void {
    if (this.ended) return;
    this.ended = true;
    this.endError = error;
    this.owner.streams.delete(this);
    this.sink?.end(error);
    this.held = [];
  }
}
