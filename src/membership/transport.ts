/**
 * The gossip transport port: unreliable packets and reliable byte streams between opaque addresses.
 *
 * The driver (driver.ts) runs the SWIM core over any implementation: UDP + TCP on one port number
 * (transport_udp.ts, the default), an in-memory network for tests (transport_memory.ts), and the
 * transport that tunnels the WAN pool through mesh gateways (src/federation). Addresses are the
 * strings the core gossips (`Member.addr`, `"host:port"` for the UDP/TCP transport); the port never
 * interprets encryption or message contents.
 *
 * Destination names (memberlist's NodeAwareTransport, `Address{Addr, Name}`): whenever the core sends
 * to a known member (probes, indirect probes and their relayed acks and nacks, gossip, push-pull,
 * reconnects, query responses) it also passes that member's name as `toName`. Transports that route
 * by address (UDP/TCP, in-memory) ignore it; a transport that routes by member (the WAN federation
 * transport through mesh gateways) uses it instead of looking the address up, which is both cheaper and
 * unambiguous when two datacenters use the same private addresses. `toName` is absent only when the
 * core has no name: a join to a bare address, or the ack to an older node's ping that named no sender.
 *
 * Packets: best effort. They may be lost, duplicated or reordered (Deno reorders UDP bursts,
 * DESIGN.md section 3); an implementation never retries.
 *
 * Streams: ordered, reliable bytes with arbitrary chunk boundaries. The driver frames messages on
 * them (`[u32 big-endian length][payload]`, see `encodeFrame` / `FrameReader`) and bounds every
 * exchange with a timeout, so an implementation needs no framing or deadlines of its own.
 */
import type { Cancel, Clock } from "../platform/index.ts";

/** Receives a stream's bytes. Calls arrive in order; `end` is called exactly once and nothing after it. */
export interface StreamSink {
  /** The next chunk, in order. Boundaries are arbitrary. The callee owns `chunk`. */
  data(chunk: Uint8Array): void;
  /** The stream ended: cleanly (peer closed) when `error` is undefined, else reset or failed. */
  end(error?: Error): void;
}

/** One reliable byte stream. Whoever receives it (dialer or `TransportHandler.stream`) owns it and must close or abort it. */
export interface GossipStream {
  /** The peer as the transport names it, for logs (for TCP: the remote `ip:port`, not the member address). */
  readonly remote: string;
  /**
   * Starts delivering inbound bytes to `sink`. Call at most once; bytes that arrive earlier are held.
   * If the stream already ended, `sink.end` is called (asynchronously or at once).
   */
  read(sink: StreamSink): void;
  /** Queues bytes. Resolves when accepted by the transport; rejects if the stream is closed or failed. */
  write(bytes: Uint8Array): Promise<void>;
  /** Graceful close: queued bytes are flushed, then the peer sees a clean end. Idempotent. */
  close(): void;
  /** Drops the stream now: unsent bytes are discarded and the peer sees a reset. Idempotent. */
  abort(): void;
}

/** Where a transport delivers inbound traffic. Handlers must not throw (an implementation catches and drops if they do). */
export interface TransportHandler {
  /** One datagram from `from` (the sender's address as the transport sees it). The callee owns `bytes`. */
  packet(from: string, bytes: Uint8Array): void;
  /** An inbound stream; the callee owns it. */
  stream(stream: GossipStream): void;
}

/** A bound gossip transport. */
export interface GossipTransport {
  /** The address other members reach this one at (the core's `config.addr`). */
  readonly localAddr: string;
  /** Largest datagram `sendPacket` accepts; larger sends reject. */
  readonly maxPacketBytes: number;
  /**
   * Starts delivering inbound packets and streams to `handler`. Call once; traffic that arrives
   * before is dropped (inbound streams are aborted).
   */
  listen(handler: TransportHandler): void;
  /**
   * Sends one datagram, best effort. Resolves when handed off; rejects on a local error (bad address,
   * closed, too large). `toName`: the destination member's name when the sender knows it (see the
   * module comment); transports that route by address ignore it.
   */
  sendPacket(to: string, bytes: Uint8Array, toName?: string): Promise<void>;
  /**
   * Opens a stream to `to`. Rejects (connection refused, unreachable, or no answer within
   * `timeoutMs`). `toName`: as for `sendPacket`.
   */
  dialStream(to: string, timeoutMs: number, toName?: string): Promise<GossipStream>;
  /** Stops listening, aborts every stream this transport opened or accepted, releases the port. Idempotent. */
  close(): Promise<void>;
}

/**
 * memberlist's `name/addr` address form (resolveAddr): the name before the `/` and the address after
 * it. `name` is undefined without a `/`, and "" for an empty name (which memberlist refuses: "empty
 * node name provided"; the caller decides). Split at the last `/`, where memberlist splits at the
 * first: an address never contains one, but a node name may (Consul only warns about it), and serf's
 * reconnects write `<name>/<addr>` for any member.
 */
export function splitNamedAddress(address: string): { readonly addr: string; readonly name?: string } {
  const slash = address.lastIndexOf("/");
  return slash < 0 ? { addr: address } : { name: address.slice(0, slash), addr: address.slice(slash + 1) };
}

/** Bytes of the stream frame header (big-endian u32 payload length). */
export const FRAME_HEADER_BYTES = 4;

/** A length-prefixed stream frame holding `payload`. */
export function encodeFrame(payload: Uint8Array): Uint8Array {
  const out = new Uint8Array(FRAME_HEADER_BYTES + payload.length);
  new DataView(out.buffer).setUint32(0, payload.length, false);
  out.set(payload, FRAME_HEADER_BYTES);
  return out;
}

/** The declared frame length exceeds the reader's limit; the stream must be closed. */
export class FrameTooLargeError extends Error {
  override readonly name = "FrameTooLargeError";
  constructor(readonly declared: number, readonly limit: number) {
    super(`stream frame of ${declared} bytes exceeds the limit of ${limit}`);
  }
}

/**
 * Reassembles length-prefixed frames from arbitrarily chunked bytes. `push` returns every frame
 * completed by the chunk (zero or more, in order) and throws FrameTooLargeError as soon as a header
 * declares more than `maxFrameBytes`, before the body is buffered. Chunks are kept in a list, so
 * byte-at-a-time input costs linear time.
 */
export class FrameReader {
  private chunks: Uint8Array[] = [];
  private total = 0;
  /** Payload length of the frame being read, once its header is complete. */
  private want: number | undefined;

  constructor(private readonly maxFrameBytes: number) {}

  /** Bytes received of the incomplete frame (header included). */
  get buffered(): number {
    return this.total + (this.want === undefined ? 0 : FRAME_HEADER_BYTES);
  }

  push(chunk: Uint8Array): Uint8Array[] {
    if (chunk.length > 0) {
      this.chunks.push(chunk);
      this.total += chunk.length;
    }
    const frames: Uint8Array[] = [];
    for (;;) {
      if (this.want === undefined) {
        if (this.total < FRAME_HEADER_BYTES) break;
        const header = this.take(FRAME_HEADER_BYTES);
        const len = new DataView(header.buffer, header.byteOffset, FRAME_HEADER_BYTES).getUint32(0, false);
        if (len > this.maxFrameBytes) throw new FrameTooLargeError(len, this.maxFrameBytes);
        this.want = len;
      }
      if (this.total < this.want) break;
      frames.push(this.take(this.want));
      this.want = undefined;
    }
    return frames;
  }

  /** Removes and returns the first `n` buffered bytes (n <= total) as a fresh array. */
  private take(n: number): Uint8Array {
    const out = new Uint8Array(n);
    let off = 0, i = 0;
    while (off < n) {
      const c = this.chunks[i]!;
      const k = Math.min(c.length, n - off);
      out.set(c.subarray(0, k), off);
      off += k;
      if (k === c.length) i++;
      else this.chunks[i] = c.subarray(k);
    }
    this.chunks.splice(0, i);
    this.total -= n;
    return out;
  }
}

/**
 * A stream exchange failed: a frame was too large ("oversize", the stream is aborted), the stream
 * ended or failed before a whole frame ("ended"), or the deadline passed ("timeout").
 */
export class StreamError extends Error {
  override readonly name = "StreamError";
  constructor(readonly reason: "oversize" | "ended" | "timeout", message: string) {
    super(message);
  }
}

/**
 * Starts reading `stream` (calls its `read`) and resolves with its first whole frame; later bytes are
 * ignored. Rejects with StreamError: "oversize" as soon as a header declares more than
 * `maxFrameBytes` (the stream is then aborted), "ended" if the stream ends or fails first. No
 * deadline of its own: run it inside `withStreamDeadline`.
 */
export function readFrame(stream: GossipStream, maxFrameBytes: number): Promise<Uint8Array> {
  return new Promise<Uint8Array>((resolve, reject) => {
    const reader = new FrameReader(maxFrameBytes);
    let done = false;
    const fail = (e: StreamError) => {
      done = true;
      reject(e);
    };
    stream.read({
      data(chunk) {
        if (done) return;
        let frames: Uint8Array[];
        try {
          frames = reader.push(chunk);
        } catch (err) {
          fail(new StreamError("oversize", (err as Error).message));
          return stream.abort();
        }
        if (frames[0] !== undefined) {
          done = true;
          resolve(frames[0]);
        }
      },
      end(err) {
        if (done) return;
        fail(new StreamError("ended", err ? `stream failed: ${err.message}` : `stream ended after ${reader.buffered} bytes, before a whole frame`));
      },
    });
  });
}

/**
 * Runs one stream exchange under a deadline of `timeoutMs` on `clock`. `body` registers each stream
 * it opens or owns with `track`; when the deadline passes, or `body` fails, every tracked stream is
 * aborted. Rejects with StreamError "timeout" on expiry, else with whatever `body` rejected with.
 * A stream tracked after expiry is aborted at once.
 */
export async function withStreamDeadline<T>(
  clock: Clock,
  timeoutMs: number,
  body: (track: (stream: GossipStream) => void) => Promise<T>,
): Promise<T> {
  const mine: GossipStream[] = [];
  let expired = false;
  let cancel: Cancel = () => {};
  const timeout = new Promise<never>((_, reject) => {
    cancel = clock.setTimer(timeoutMs, () => {
      expired = true;
      // Reject first: the aborts below make `body` fail too, and the race must report the timeout.
      reject(new StreamError("timeout", `no complete exchange within ${timeoutMs} ms`));
      for (const s of mine) s.abort();
    });
  });
  timeout.catch(() => {});
  const track = (s: GossipStream) => {
    if (expired) s.abort();
    else mine.push(s);
  };
  try {
    return await Promise.race([body(track), timeout]);
  } catch (err) {
    for (const s of mine) s.abort();
    throw err;
  } finally {
    cancel();
  }
}
