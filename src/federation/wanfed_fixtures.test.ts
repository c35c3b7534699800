/**
 * In-memory fakes for the wanfed transport tests (no tests here): connection pipes on a simulated
 * clock with seeded chunking, a recording dialer, and a recording stand-in for the local transport.
 */
import type { GossipStream, GossipTransport, StreamSink, TransportHandler } from "../membership/index.ts";
import type { Clock, Rng } from "../platform/index.ts";
import type { WanfedConnection, WanfedDial } from "./wanfed_connection.ts";

type Item = Uint8Array | { readonly end: Error | undefined };

/**
 * One end of an in-memory connection. Writes are split into random chunks (seeded) and delivered to
 * the peer in order after `latencyMs` on the clock. Knobs: `failWrites` rejects writes, `holdWrites`
 * leaves them pending until the end is aborted. `written` records whole writes; `local` says how this
 * end was finished by its owner.
 */
export class PipeEnd implements WanfedConnection {
  peer!: PipeEnd;
  failWrites = false;
  holdWrites = false;
  readonly written: Uint8Array[] = [];
  local: "close" | "abort" | undefined;
  /** How this end ended, as soon as it did (whether read or not): "clean", the error's message, or undefined while open. */
  endSeen: string | undefined;
  #sink: StreamSink | undefined;
  #held: Item[] = [];
  #ended = false;
  #endError: Error | undefined;
  #writeClosed = false;
  #lastAt = 0;
  #holds: Array<(err: Error) => void> = [];

  constructor(private readonly clock: Clock, private readonly rng: Rng, private readonly latencyMs: number) {}

  read(sink: StreamSink): void {
    if (this.#sink) throw new Error("pipe: read called twice");
    this.#sink = sink;
    if (this.#ended) return void sink.end(this.#endError);
    const held = this.#held;
    this.#held = [];
    for (const h of held) this.deliver(h);
  }

  write(bytes: Uint8Array): Promise<void> {
    if (this.#writeClosed || this.#endError) return Promise.reject(new Error("pipe: closed"));
    if (this.failWrites) return Promise.reject(new Error("pipe: write failed (injected)"));
    if (this.holdWrites) return new Promise<void>((_, reject) => this.#holds.push(reject));
    this.written.push(bytes.slice());
    let rest = bytes.slice();
    while (rest.length > 0) {
      const piece = rest.subarray(0, 1 + this.rng.int(rest.length));
      this.#toPeer(piece);
      rest = rest.subarray(piece.length);
    }
    return Promise.resolve();
  }

  /** Half-close (TCP FIN): the peer reads a clean end; this end may still read. */
  close(): void {
    if (this.#writeClosed || this.#endError) return;
    this.local ??= "close";
    this.#writeClosed = true;
    this.#toPeer({ end: undefined });
  }

  abort(): void {
    if (this.local === "abort" || this.#endError) return;
    this.local = "abort";
    this.#writeClosed = true;
    for (const reject of this.#holds.splice(0)) reject(new Error("pipe: aborted"));
    this.#finish(new Error("pipe: aborted locally"));
    this.#toPeer({ end: new Error("pipe: connection reset by peer") });
  }

  /** An item from the peer: to the reader, or held until something reads. */
  private deliver(item: Item): void {
    if (this.#ended) return;
    if (!(item instanceof Uint8Array)) this.endSeen ??= item.end ? item.end.message : "clean";
    if (!this.#sink) return void this.#held.push(item);
    if (item instanceof Uint8Array) this.#sink.data(item);
    else this.#finish(item.end);
  }

  #finish(error: Error | undefined): void {
    if (this.#ended) return;
    this.#ended = true;
    this.#endError = error;
    this.endSeen ??= error ? error.message : "clean";
    this.#sink?.end(error);
    this.#held = [];
  }

  #toPeer(item: Item): void {
    const now = this.clock.monotonic();
    const at = Math.max(now + this.latencyMs, this.#lastAt);
    this.#lastAt = at;
    const peer = this.peer;
    this.clock.setTimer(at - now, () => peer.deliver(item));
  }
}

/** Two connected ends. */
export function pipe(clock: Clock, rng: Rng, latencyMs = 1): [PipeEnd, PipeEnd] {
  const a = new PipeEnd(clock, rng, latencyMs);
  const b = new PipeEnd(clock, rng, latencyMs);
  a.peer = b;
  b.peer = a;
  return [a, b];
}

/** Reads everything `conn` delivers, for assertions. */
export function collect(conn: WanfedConnection | GossipStream): { bytes(): Uint8Array; ended: string | undefined } {
  const chunks: Uint8Array[] = [];
  const out = {
    ended: undefined as string | undefined,
    bytes: () => new Uint8Array(Buffer.concat(chunks)),
  };
  conn.read({ data: (c) => void chunks.push(c), end: (e) => void (out.ended = e ? e.message : "clean") });
  return out;
}

export interface DialCall {
  readonly gateway: string;
  readonly sni: string;
  readonly alpn: string;
  readonly timeoutMs: number;
  /** The far end (what the gateway would hand the remote server), once the dial succeeded. */
  server?: PipeEnd;
  client?: PipeEnd;
  /** For a held dial: completes it now (with a connection, or a failure). */
  complete?: (ok: boolean) => void;
}

/** A dialer that records every call and answers with `behaviour` ("ok" after 1 ms, "fail", or "hold" until completed). */
export function fakeDial(clock: Clock, rng: Rng, behaviour: () => "ok" | "fail" | "hold" = () => "ok"): { dial: WanfedDial; calls: DialCall[] } {
  const calls: DialCall[] = [];
  const dial: WanfedDial = (gateway, sni, alpn, timeoutMs) => {
    const call: DialCall = { gateway, sni, alpn, timeoutMs };
    calls.push(call);
    return new Promise<WanfedConnection>((resolve, reject) => {
      const complete = (ok: boolean) => {
        if (!ok) return reject(new Error("connection refused"));
        const [client, server] = pipe(clock, rng);
        call.client = client;
        call.server = server;
        resolve(client);
      };
      const how = behaviour();
      if (how === "hold") call.complete = complete;
      else clock.setTimer(1, () => complete(how === "ok"));
    });
  };
  return { dial, calls };
}

/** A stand-in for the ordinary UDP/TCP transport that records what it was asked to do. */
export interface RecordingTransport extends GossipTransport {
  readonly packets: Array<[string, Uint8Array]>;
  readonly dialed: string[];
  /** The member name given with each packet and dial, in call order. */
  readonly names: Array<["packet" | "dial", string | undefined]>;
  handler: TransportHandler | undefined;
  closed: boolean;
}

export function recordingTransport(localAddr: string, maxPacketBytes = 65_507): RecordingTransport {
  const t: RecordingTransport = {
    localAddr,
    maxPacketBytes,
    packets: [],
    dialed: [],
    names: [],
    handler: undefined,
    closed: false,
    listen(h) {
      t.handler = h;
    },
    sendPacket(to, bytes, toName) {
      t.packets.push([to, bytes]);
      t.names.push(["packet", toName]);
      return Promise.resolve();
    },
    dialStream(to, _timeoutMs, toName) {
      t.dialed.push(to);
      t.names.push(["dial", toName]);
      return Promise.reject(new Error(`recording transport: dial ${to}: connection refused`));
    },
    close() {
      t.closed = true;
      return Promise.resolve();
    },
  };
  return t;
}

/** A handler that records packets and streams. */
export function recordingHandler(): TransportHandler & { packets: Array<[string, Uint8Array]>; streams: GossipStream[] } {
  const h = {
    packets: [] as Array<[string, Uint8Array]>,
    streams: [] as GossipStream[],
    packet(from: string, bytes: Uint8Array) {
      h.packets.push([from, bytes]);
    },
    stream(s: GossipStream) {
      h.streams.push(s);
    },
  };
  return h;
}
