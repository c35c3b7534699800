/**
 * The Raft {@link Transport} over TCP (or any byte stream the injected dialer returns).
 *
 * Outbound: one lazily dialled connection per peer carries that node's messages to it (one direction
 * only; the peer dials back for its replies). Messages wait in a bounded per-peer queue, oldest dropped
 * first when full, and are written only while the socket accepts more (`write()` returning false stops
 * the flush until 'drain'), so a peer that never reads costs at most the queue bound plus one frame.
 * A lost connection is redialled with capped exponential backoff and jitter from the injected Rng.
 * Each `sendSnapshot` uses a dedicated connection, so a big snapshot never delays heartbeats.
 *
 * Inbound: `accept(socket)` takes a stream (from a listener or the server-port mux) and owns it from
 * then on. Bad input closes that connection with a log line naming the remote address; nothing thrown
 * by a peer's bytes or by the handlers reaches the event loop. Wire format: see transport_frames.ts.
 */
import { crc32cUpdate } from "./crc32c.ts";
import { DEFAULT_MAX_FRAME_BYTES } from "./limits.ts";
import type { Duplex } from "node:stream";
import type { Message } from "../raft/index.ts";
import { isLocalMsg } from "../raft/index.ts";
import type { Cancel, Clock, Logger, Rng } from "../platform/index.ts";
import { dialTcp, formatPeer } from "../platform/index.ts";
import type { Transport } from "./ports.ts";
import type { Frame, MessageCodec } from "./transport_frames.ts";
import {
  FrameDecoder, FrameKind, InboundSession, decodeReason, encodeFrame, encodeHello, encodeReason, encodeSnapBegin, encodeSnapEnd,
} from "./transport_frames.ts";

export type { MessageCodec } from "./transport_frames.ts";

/** Where a peer listens. */
export interface PeerAddress {
  readonly host: string;
  readonly port: number;
}

/** Connection events of outbound links, for metrics and tests. Called synchronously; must not throw. */
export type PeerEvent = "connected" | "disconnected" | "dial-failed";

export interface TcpTransportOptions {
  readonly localId: string;
  readonly codec: MessageCodec;
  readonly logger: Logger;
  /** Timers for reconnect backoff, dial and snapshot deadlines. */
  readonly clock: Clock;
  /** Jitter of the reconnect backoff. */
  readonly rng: Rng;
  /** Address of a peer, consulted on every dial by the default dialer; undefined: unknown (dial fails). */
  resolve(peerId: string): Promise<PeerAddress | undefined> | PeerAddress | undefined;
  /**
   * Opens a connected stream to a peer; the transport owns the returned stream. Default: `resolve`
   * then `dialTcp`. A rejection counts as a failed dial.
   */
  readonly dial?: (peerId: string) => Promise<Duplex>;
  /** Per-peer queue bound in messages; default 1024. */
  readonly maxQueuedPerPeer?: number;
  /** Per-peer queue bound in bytes; default 64 MiB. */
  readonly maxQueuedBytesPerPeer?: number;
  /** Snapshot chunk size; default 1 MiB. Must not exceed the receivers' `maxFrameBytes`. */
  readonly snapshotChunkBytes?: number;
  /**
   * Largest accepted frame payload (also bounds one message); default DEFAULT_MAX_FRAME_BYTES (16 MiB), at
   * least the chunk size. Must exceed the consensus node's maxEntryBytes by the headroom limits.ts explains.
   */
  readonly maxFrameBytes?: number;
  /** Largest snapshot this node accepts; bigger ones are refused with a NACK. Default 1 GiB. */
  readonly maxSnapshotBytes?: number;
  /** Deadline of one dial; default 5000 ms. */
  readonly dialTimeoutMs?: number;
  /**
   * A snapshot transfer fails when it makes no progress for this long; default 30000 ms. Sender: chunk
   * accepted by the socket or ack. Receiver: bytes arriving while a snapshot is half received (it NACKs
   * and closes, discarding the partial snapshot).
   */
  readonly snapshotIdleTimeoutMs?: number;
  /** Reconnect backoff: first delay and cap in ms; defaults 50 and 5000. */
  readonly backoffBaseMs?: number;
  readonly backoffMaxMs?: number;
  readonly onPeerEvent?: (peerId: string, event: PeerEvent) => void;
}

/** Counters since creation. `sent` counts messages handed to a socket, `dropped` those lost to queue bounds or encoding. */
export interface TcpTransportStats {
  readonly sent: number;
  readonly dropped: number;
  readonly received: number;
  readonly peers: Readonly<Record<string, { readonly queued: number; readonly queuedBytes: number; readonly socketBuffered: number; readonly connected: boolean; readonly dropped: number }>>;
}

/**
 * A {@link Transport} over TCP, plus the inbound side and counters.
 *
 * `send` never throws: a message that cannot be encoded, is larger than `maxFrameBytes`, is local
 * (MsgHup...), is addressed to this node, or is a MsgSnap (use `sendSnapshot`) is dropped with a log
 * line. Messages are written in `send` order per peer; queued ones are lost when their connection fails.
 * `sendSnapshot` never rejects; the caller must not modify `data` until it resolves. Handlers run
 * synchronously on socket reads; an exception from `onMessage` is logged, one from `onSnapshot` makes
 * the transfer fail (NACK). `close()` is idempotent and resolves once every owned stream has closed.
 */
export interface TcpTransport extends Transport {
  /**
   * Takes an inbound connection (plaintext or TLS, paused or flowing) and owns it from now on: the
   * transport reads it, answers snapshot acks on it and destroys it on bad input or `close()`.
   * `remote` names the peer in log lines (default: the socket's remote address, if it has one).
   */
  accept(socket: Duplex, remote?: string): void;
  /** Counters since creation, and the current per-peer queue and socket-buffer sizes. */
  stats(): TcpTransportStats;
}

interface Peer {
  readonly id: string;
  readonly queue: Uint8Array[];
  queuedBytes: number;
  socket: Duplex | undefined;
  state: "idle" | "dialing" | "connected" | "backoff";
  waitingDrain: boolean;
  attempts: number;
  cancelRetry: Cancel | undefined;
  dropped: number;
  flushScheduled: boolean;
}

/** Largest coalesced write. */
const FLUSH_BYTES = 256 * 1024;

function concatFrames(frames: readonly Uint8Array[], bytes: number): Uint8Array {
  const out = new Uint8Array(bytes);
  let at = 0;
  for (const f of frames) {
    out.set(f, at);
    at += f.length;
  }
  return out;
}

/** Creates the transport. Nothing is dialled until the first `send`. */
export function createTcpTransport(options: TcpTransportOptions): TcpTransport {
  const { localId, codec, clock, rng } = options;
  const log = options.logger.named("raft-transport");
  const maxQueued = options.maxQueuedPerPeer ?? 1024;
  const maxQueuedBytes = options.maxQueuedBytesPerPeer ?? 64 * 1024 * 1024;
  const chunkBytes = options.snapshotChunkBytes ?? 1024 * 1024;
  const maxFrame = Math.max(options.maxFrameBytes ?? DEFAULT_MAX_FRAME_BYTES, chunkBytes);
  const dialTimeoutMs = options.dialTimeoutMs ?? 5000;
  const snapIdleMs = options.snapshotIdleTimeoutMs ?? 30_000;
  const backoffBase = options.backoffBaseMs ?? 50, backoffMax = options.backoffMaxMs ?? 5000;
  const dial = options.dial ?? (async (peerId: string): Promise<Duplex> => {
    const addr = await options.resolve(peerId);
    if (!addr) throw new Error(`no address for peer ${peerId}`);
    return dialTcp({ host: addr.host, port: addr.port, timeoutMs: dialTimeoutMs });
  });

  const peers = new Map<string, Peer>();
  const sockets = new Set<Duplex>();
  const pendingSnapshots = new Set<(ok: boolean, why?: unknown) => void>();
  let onMessage: ((msg: Message) => void) | undefined;
  let onSnapshot: ((msg: Message & { type: "MsgSnap" }, data: Uint8Array) => void) | undefined;
  let closed = false, closing: Promise<void> | undefined;
  let sent = 0, dropped = 0;
  const counters = { received: 0 };
  const maxSnapshot = options.maxSnapshotBytes ?? 1024 ** 3;

  const event = (peerId: string, e: PeerEvent) => {
    try { options.onPeerEvent?.(peerId, e); } catch (err) { log.error("peer event observer threw", { error: err }); }
  };

  /** Tracks a stream we own so that close() can destroy it; swallows its errors (we log on close). */
  const own = (s: Duplex): Duplex => {
    sockets.add(s);
    s.on("error", () => {}); // an unobserved error must never crash the process
    (s as { setNoDelay?: (on: boolean) => unknown }).setNoDelay?.(true); // small Raft messages must not wait for Nagle
    s.once("close", () => sockets.delete(s));
    return s;
  };

  /** `dial` with a deadline from the injected clock; a stream that arrives late or after close() is destroyed. */
  const dialPeer = (peerId: string): Promise<Duplex> => new Promise((resolve, reject) => {
    let done = false;
    const cancel = clock.setTimer(dialTimeoutMs, () => {
      if (!done) { done = true; reject(new Error(`dial ${peerId}: timed out after ${dialTimeoutMs}ms`)); }
    });
    Promise.resolve().then(() => dial(peerId)).then((s) => {
      if (done || closed) { s.on("error", () => {}); s.destroy(); if (!done) { done = true; cancel(); reject(new Error("transport closed")); } return; }
      done = true; cancel(); resolve(own(s));
    }, (err: unknown) => { if (!done) { done = true; cancel(); reject(err); } });
  });

  const peerOf = (id: string): Peer => {
    let p = peers.get(id);
    if (!p) {
      p = { id, queue: [], queuedBytes: 0, socket: undefined, state: "idle", waitingDrain: false, attempts: 0, cancelRetry: undefined, dropped: 0, flushScheduled: false };
      peers.set(id, p);
    }
    return p;
  };

  const dropOldest = (p: Peer) => {
    const f = p.queue.shift()!;
    p.queuedBytes -= f.length;
    p.dropped++; dropped++;
    if (p.dropped === 1 || p.dropped % 1000 === 0) log.warn("queue full, dropping messages", { peer: p.id, dropped: p.dropped });
  };

  /**
   * Writes the queued frames, coalesced into writes of up to FLUSH_BYTES: a Ready's messages to one
   * peer (appends, heartbeats, read-index rounds) then cost one socket write instead of one each,
   * which was 12% of a 3-server KV write's CPU.
   */
  const flush = (p: Peer) => {
    const s = p.socket;
    if (!s || p.waitingDrain) return;
    while (p.queue.length > 0) {
      let n = 0;
      let bytes = 0;
      while (n < p.queue.length && (n === 0 || bytes + p.queue[n]!.length <= FLUSH_BYTES)) bytes += p.queue[n++]!.length;
      const frames = p.queue.splice(0, n);
      p.queuedBytes -= bytes;
      sent += n;
      const chunk = n === 1 ? frames[0]! : concatFrames(frames, bytes);
      if (!s.write(chunk)) {
        p.waitingDrain = true;
        s.once("drain", () => { if (p.socket === s) { p.waitingDrain = false; flush(p); } });
        return;
      }
    }
  };
  /** Flushes each peer once per turn of the event loop, after the messages of a Ready are all queued. */
  const flushSoon = (p: Peer) => {
    if (p.flushScheduled) return;
    p.flushScheduled = true;
    queueMicrotask(() => {
      p.flushScheduled = false;
      if (p.state === "connected") flush(p);
    });
  };

  const scheduleRetry = (p: Peer) => {
    p.state = "backoff";
    const ceiling = Math.min(backoffMax, backoffBase * 2 ** Math.min(p.attempts, 30));
    p.attempts++;
    const delay = ceiling / 2 + rng.next() * (ceiling / 2);
    p.cancelRetry = clock.setTimer(delay, () => {
      p.cancelRetry = undefined;
      if (closed) return;
      if (p.queue.length === 0) p.state = "idle";
      else connect(p);
    });
  };

  const connect = (p: Peer) => {
    p.state = "dialing";
    dialPeer(p.id).then((s) => {
      if (closed) { s.destroy(); return; }
      p.socket = s; p.state = "connected"; p.attempts = 0; p.waitingDrain = false;
      s.on("error", (err: unknown) => log.debug("connection error", { peer: p.id, error: err }));
      s.on("data", () => {}); // the peer never writes on a message connection; read so 'end' is seen
      s.once("close", () => {
        if (p.socket !== s) return;
        p.socket = undefined; p.waitingDrain = false;
        event(p.id, "disconnected");
        if (!closed) scheduleRetry(p);
      });
      event(p.id, "connected");
      s.write(encodeFrame(FrameKind.Hello, encodeHello(localId, p.id)));
      flush(p);
    }, (err: unknown) => {
      if (closed) return;
      // The first failure after a good connection is worth a warning; the retries that follow are not.
      (p.attempts === 0 ? log.warn : log.debug)("dial failed", { peer: p.id, error: err, attempt: p.attempts + 1 });
      event(p.id, "dial-failed");
      scheduleRetry(p);
    });
  };

  const send = (msg: Message): void => {
    if (closed) return;
    if (isLocalMsg(msg.type) || msg.type === "MsgSnap" || msg.to === localId || msg.to === "") {
      log.warn("not sending message", { type: msg.type, to: msg.to, reason: "local, self-addressed or MsgSnap" });
      return;
    }
    let frame: Uint8Array;
    try {
      const body = codec.encode(msg);
      if (body.length > maxFrame) throw new Error(`encoded message of ${body.length} bytes exceeds ${maxFrame}`);
      frame = encodeFrame(FrameKind.Message, body);
    } catch (err) {
      dropped++;
      log.error("cannot encode message, dropped", { type: msg.type, to: msg.to, error: err });
      return;
    }
    const p = peerOf(msg.to);
    while (p.queue.length > 0 && (p.queue.length >= maxQueued || p.queuedBytes + frame.length > maxQueuedBytes)) dropOldest(p);
    p.queue.push(frame);
    p.queuedBytes += frame.length;
    if (p.state === "idle") connect(p);
    else if (p.state === "connected") flushSoon(p);
  };

  const sendSnapshot = (to: string, msg: Message & { type: "MsgSnap" }, data: Uint8Array): Promise<boolean> => {
    if (closed) return Promise.resolve(false);
    let begin: Uint8Array;
    try { begin = encodeFrame(FrameKind.SnapBegin, encodeSnapBegin(data.length, codec.encode(msg))); } catch (err) {
      log.error("cannot encode snapshot message", { to, error: err });
      return Promise.resolve(false);
    }
    return new Promise<boolean>((resolve) => {
      let settled = false, ended = false, socket: Duplex | undefined, cancelTimer: Cancel | undefined;
      const finish = (ok: boolean, why?: unknown) => {
        if (settled) return;
        settled = true;
        cancelTimer?.();
        pendingSnapshots.delete(finish);
        if (ok) log.info("snapshot sent", { peer: to, index: msg.snapshot.index, bytes: data.length });
        else log.warn("snapshot send failed", { peer: to, index: msg.snapshot.index, error: why });
        socket?.destroy();
        resolve(ok);
      };
      const progress = () => {
        cancelTimer?.();
        cancelTimer = clock.setTimer(snapIdleMs, () => finish(false, `no progress for ${snapIdleMs}ms`));
      };
      pendingSnapshots.add(finish);
      progress();
      dialPeer(to).then(async (s) => {
        if (settled) { s.destroy(); return; }
        socket = s;
        s.on("error", (err: unknown) => finish(false, err));
        s.once("close", () => finish(false, "connection closed"));
        const replies = new FrameDecoder(4096);
        s.on("data", (chunk: Uint8Array) => {
          let frames: Frame[];
          try { frames = replies.push(chunk); } catch (err) { finish(false, err); return; }
          for (const f of frames) {
            if (f.kind === FrameKind.SnapAck && ended) finish(true);
            else if (f.kind === FrameKind.SnapNack) finish(false, `refused by receiver: ${decodeReason(f.payload)}`);
            else finish(false, `unexpected frame kind ${f.kind}`);
          }
        });
        s.write(encodeFrame(FrameKind.Hello, encodeHello(localId, to)));
        s.write(begin);
        let crc = 0;
        for (let off = 0; off < data.length && !settled; off += chunkBytes) {
          const chunk = data.subarray(off, off + chunkBytes);
          crc = crc32cUpdate(crc, chunk);
          if (!s.write(encodeFrame(FrameKind.SnapChunk, chunk))) await drained(s);
          progress();
        }
        if (settled) return;
        ended = true;
        s.write(encodeFrame(FrameKind.SnapEnd, encodeSnapEnd(data.length, crc)));
      }).catch((err: unknown) => finish(false, err));
    });
  };

  const close = (): Promise<void> => {
    closing ??= (async () => {
      closed = true;
      for (const finish of [...pendingSnapshots]) finish(false, "transport closed");
      for (const p of peers.values()) { p.cancelRetry?.(); p.queue.length = 0; p.queuedBytes = 0; }
      // Every stream still in `sockets` has yet to emit 'close'.
      await Promise.all([...sockets].map((s) => {
        const done = new Promise<void>((r) => s.once("close", () => r()));
        s.destroy();
        return done;
      }));
    })();
    return closing;
  };

  return {
    send,
    sendSnapshot,
    onMessage(handler) { onMessage = handler; },
    onSnapshot(handler) { onSnapshot = handler; },
    close,
    accept(socket, remote) {
      const s = socket as Duplex & { remoteAddress?: string; remotePort?: number };
      const where = remote ?? formatPeer(s.remoteAddress, s.remotePort);
      socket.on("error", (err: unknown) => log.debug("inbound connection error", { remote: where, error: err }));
      if (closed) { socket.destroy(); return; }
      own(socket);
      const decoder = new FrameDecoder(maxFrame);
      const session = new InboundSession(localId, codec, maxSnapshot);
      const drop = (reason: string, nack: boolean) => {
        if (!socket.writable) return; // already closing
        log.warn("closing raft connection", { remote: where, peer: session.peer, reason });
        if (!nack) { socket.destroy(); return; }
        // Let the NACK reach the kernel before tearing down; the sender closes on reading it.
        socket.end(encodeFrame(FrameKind.SnapNack, encodeReason(reason)), () => socket.destroy());
      };
      let cancelStall: Cancel | undefined;
      socket.once("close", () => {
        cancelStall?.();
        if (session.receivingSnapshot) log.warn("connection lost mid-snapshot, discarding it", { remote: where, peer: session.peer });
      });
      const onData = (chunk: Uint8Array) => {
        let frames: Frame[];
        try { frames = decoder.push(chunk); } catch (err) { drop(`bad frame: ${(err as Error).message}`, false); return; }
        for (const f of frames) {
          if (socket.destroyed || !socket.writable) return;
          const a = session.handle(f);
          if (a.type === "message") {
            counters.received++;
            try { onMessage?.(a.msg); } catch (err) { log.error("message handler threw", { peer: session.peer, type: a.msg.type, error: err }); }
          } else if (a.type === "drop") {
            log.warn("dropping inbound message", { remote: where, peer: session.peer, reason: a.reason });
          } else if (a.type === "close") {
            drop(a.reason, a.nack);
            return;
          } else if (a.type === "snapshot") {
            let refusal: string | undefined = onSnapshot ? undefined : "no snapshot handler";
            try { onSnapshot?.(a.msg, a.data); } catch (err) { refusal = `snapshot handler failed: ${(err as Error).message}`; }
            if (refusal) { drop(refusal, true); return; }
            log.info("snapshot received", { peer: session.peer, index: a.msg.snapshot.index, bytes: a.data.length });
            socket.write(encodeFrame(FrameKind.SnapAck));
          }
        }
      };
      socket.on("data", (chunk: Uint8Array) => {
        cancelStall?.();
        cancelStall = undefined;
        try { onData(chunk); } finally {
          // A half-received snapshot holds a large buffer: give up on it if the sender stalls.
          if (session.receivingSnapshot && socket.writable) cancelStall = clock.setTimer(snapIdleMs, () => drop(`snapshot stalled for ${snapIdleMs}ms`, true));
        }
      });
      socket.resume();
    },
    stats() {
      const out: Record<string, TcpTransportStats["peers"][string]> = {};
      for (const p of peers.values()) {
        out[p.id] = { queued: p.queue.length, queuedBytes: p.queuedBytes, socketBuffered: p.socket?.writableLength ?? 0, connected: p.state === "connected", dropped: p.dropped };
      }
      return { sent, dropped, received: counters.received, peers: out };
    },
  };
}

/** Resolves on 'drain' or when the stream closes, whichever comes first. */
function drained(s: Duplex): Promise<void> {
  if (s.destroyed) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => { s.off("drain", done); s.off("close", done); resolve(); };
    s.once("drain", done);
    s.once("close", done);
  });
}
