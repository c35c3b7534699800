/**
 * The gossip driver: runs one `Memberlist` over a `GossipTransport` with an injected Clock.
 *
 * It ticks the core at `nextDeadline()`, drains `outbox()` after every call into the core (packets
 * to the transport, stream requests as push-pull exchanges, events to subscribers in order), feeds
 * inbound packets and streams to the core, and optionally encrypts everything with a keyring
 * (AES-GCM, crypto.ts). Nothing that arrives from the network can make it throw: bad input is
 * dropped, counted in `stats()` and reported to `onDrop`.
 *
 * Encrypted and unencrypted members do not mix: an encrypted member drops plaintext (first byte is
 * the codec's magic) and an unencrypted member drops anything that looks encrypted (first byte is the
 * encryption version), on packets and streams alike.
 *
 * Stream exchange (memberlist pushPull over TCP): the initiator dials, writes one frame (the encoded,
 * possibly encrypted push-pull request) and reads one frame back; the responder reads one frame,
 * answers with one frame and closes. Frames are `[u32 length][payload]` (transport.ts); a frame above
 * `maxStreamFrameBytes` closes the stream and is logged with the peer's name. The whole exchange on
 * either side is bounded by `streamTimeoutMs`.
 */
import { DurationRing } from "./duration_ring.ts";
import { logNotices } from "./notice_log.ts";
import { createEventChannel } from "./event_channel.ts";
import type { Cancel, Clock, Logger, Rng } from "../platform/index.ts";
import { CodecError, PACKET_MAGIC, STREAM_MAGIC, decodeStream, encodeStream } from "./codec.ts";
import { ENCRYPTION_VERSION, createDecryptFailureCounter, decryptOrDrop, encryptPacket } from "./crypto.ts";
import type { DecryptFailure, KeySource } from "./crypto.ts";
import { requestAddress, type Memberlist, type MemberlistStats, type OutPacket, type StreamRequest } from "./memberlist.ts";
import { StreamError, encodeFrame, readFrame, withStreamDeadline } from "./transport.ts";
import type { GossipStream, GossipTransport } from "./transport.ts";
import type { MemberEvent, StreamMessage } from "./types.ts";

/** Why inbound traffic (or a stream exchange) was dropped. */
export type DropReason =
  /** Failed to decode (garbage, truncated, unknown version). */
  | "malformed"
  /** Looked encrypted, but no installed key authenticated it. */
  | "decrypt-failed"
  /** Plaintext arrived at an encrypted member. */
  | "unencrypted"
  /** Something that looks encrypted arrived at an unencrypted member. */
  | "encrypted"
  /** A stream frame declared more than `maxStreamFrameBytes`. */
  | "oversize"
  /** A stream exchange did not finish within `streamTimeoutMs`. */
  | "timeout"
  /** A stream could not be opened, or ended or failed before a whole frame. */
  | "stream-failed";

export interface DropNotice {
  readonly kind: "packet" | "stream";
  readonly reason: DropReason;
  /** Packet sender, stream peer (inbound: the transport's name for it) or dialed address (`name/addr` when the member is known). */
  readonly peer: string;
}

export interface GossipDriverOptions {
  /** The core, created with `now = clock.monotonic()` and `config.addr = transport.localAddr`. The driver owns it from now on. */
  readonly memberlist: Memberlist;
  /** Bound transport; the driver calls `listen` on it and closes it on `stop`. */
  readonly transport: GossipTransport;
  /** Time source; the core runs on `clock.monotonic()`. */
  readonly clock: Clock;
  /** Nonce source for encryption; must be a CSPRNG (`cryptoRng()`) in production. */
  readonly rng: Rng;
  readonly logger: Logger;
  /** Enables encryption (a `Keyring`): the primary key encrypts, every installed key decrypts. */
  readonly keyring?: KeySource;
  /** Authenticated but unencrypted label (memberlist Label): members with different labels do not talk. */
  readonly label?: string;
  /** Deadline for a whole stream exchange, dial included; default 10 s (memberlist TCPTimeout). */
  readonly streamTimeoutMs?: number;
  /** Largest stream frame accepted; default 8 MiB. */
  readonly maxStreamFrameBytes?: number;
  /** Called for every drop, after it is counted. Must not throw. For metrics and tests. */
  readonly onDrop?: (drop: DropNotice) => void;
}

export interface GossipDriverStats {
  readonly packetsReceived: number;
  readonly packetsSent: number;
  /** Packets the transport refused to send (bad address, closed socket, too large). */
  readonly sendErrors: number;
  readonly packetDrops: Readonly<Record<DropReason, number>>;
  /** Push-pull exchanges completed: answered (in) and initiated (out). */
  readonly streamsIn: number;
  readonly streamsOut: number;
  readonly streamDrops: Readonly<Record<DropReason, number>>;
  /** Decryption failures by reason (packets and streams). */
  readonly decryptFailures: Readonly<Record<DecryptFailure, number>>;
  readonly memberlist: Readonly<MemberlistStats>;
  /** How long each probe took (the core's ring) and each tick that ran a gossip round (memberlist's gossip timer). */
  readonly probeDurations: DurationRing;
  readonly gossipDurations: DurationRing;
}

/** A running driver. Use `memberlist` for reads only; changes go through these methods so they are sent. */
export interface GossipDriver {
  readonly memberlist: Memberlist;
  readonly localAddr: string;
  /**
   * Push-pull with each address (the local one is skipped). Resolves with the number reached;
   * rejects with an Error naming each address's failure when none was reached.
   */
  join(addresses: readonly string[]): Promise<number>;
  /**
   * Graceful leave: broadcasts it and resolves once the core reports it propagated (or its
   * `leavePropagateMs` passed) and the packets were handed to the transport. Call `stop` after.
   */
  leave(): Promise<void>;
  /** Replaces local metadata (serf tags) and gossips it. Throws RangeError if too large. */
  updateMeta(meta: Uint8Array): void;
  /** Gossips a user message (serf events); a newer one with the same key replaces it. */
  broadcastUser(key: string, payload: Uint8Array): void;
  /** Sends a user message straight to one address (member `toName`, when known), once (serf query responses). */
  sendUser(to: string, key: string, payload: Uint8Array, toName?: string): void;
  /**
   * Member events in order. Events produced before the first subscriber are held until the next
   * drain (the first tick or inbound message), so subscribing right after creation misses none.
   * A throwing subscriber is logged and does not disturb the others.
   */
  subscribe(fn: (event: MemberEvent) => void): Cancel;
  stats(): GossipDriverStats;
  /** Stops timers, aborts streams and closes the transport. Idempotent. */
  stop(): Promise<void>;
}

const DEFAULT_STREAM_TIMEOUT_MS = 10_000;
const DEFAULT_MAX_FRAME_BYTES = 8 * 1024 * 1024;
/** Events kept for the first subscriber; beyond this nobody is listening and newer ones are discarded. */
const REASONS: readonly DropReason[] = ["malformed", "decrypt-failed", "unencrypted", "encrypted", "oversize", "timeout", "stream-failed"];

/** An exchange failed for `reason`; `message` is for logs and join errors. */
class StreamDrop extends Error {
  constructor(readonly reason: DropReason, message: string) {
    super(message);
  }
}

/** Starts a driver at once: it listens on the transport and schedules the first tick. */
export function createGossipDriver(options: GossipDriverOptions): GossipDriver {
  const { memberlist: ml, transport, clock, rng, keyring, label } = options;
  const log = options.logger;
  const streamTimeoutMs = options.streamTimeoutMs ?? DEFAULT_STREAM_TIMEOUT_MS;
  const maxFrame = options.maxStreamFrameBytes ?? DEFAULT_MAX_FRAME_BYTES;
  const decryptFailures = createDecryptFailureCounter();
  const zero = () => Object.fromEntries(REASONS.map((r) => [r, 0])) as Record<DropReason, number>;
  const c = { packetsReceived: 0, packetsSent: 0, sendErrors: 0, streamsIn: 0, streamsOut: 0, packetDrops: zero(), streamDrops: zero() };
  const events = createEventChannel<MemberEvent>(log, "gossip event");
  const inflight = new Set<Promise<void>>();
  const openStreams = new Set<GossipStream>();
  let leaveWaiters: Array<() => void> = [];
  let stopped = false;
  let cancelTimer: Cancel | undefined;
  let timerAt: number | undefined;
  const now = () => clock.monotonic();

  const drop = (kind: "packet" | "stream", reason: DropReason, peer: string, detail?: string, quiet = false) => {
    (kind === "packet" ? c.packetDrops : c.streamDrops)[reason]++;
    if (kind === "stream") log[quiet ? "debug" : "warn"]("gossip stream dropped", { peer, reason, detail });
    else log.debug("gossip packet dropped", { from: peer, reason });
    try {
      options.onDrop?.({ kind, reason, peer });
    } catch (err) {
      log.error("gossip onDrop callback threw", { error: err });
    }
  };

  /** Encrypts when a keyring is set. */
  const seal = async (plain: Uint8Array): Promise<Uint8Array> => (keyring ? await encryptPacket(keyring, plain, rng, label) : plain);

  /** Decrypts when a keyring is set. Returns the drop reason instead of bytes when the input must be dropped. */
  const unseal = async (bytes: Uint8Array, magic: number): Promise<Uint8Array | DropReason> => {
    if (!keyring) return bytes[0] === ENCRYPTION_VERSION ? "encrypted" : bytes;
    if (bytes[0] === magic) return "unencrypted";
    return (await decryptOrDrop(keyring, bytes, decryptFailures, label)) ?? "decrypt-failed";
  };

  const sendPacket = (p: OutPacket) => {
    const task = (async () => {
      await transport.sendPacket(p.to, await seal(p.bytes), p.toName);
      c.packetsSent++;
    })().catch((err: unknown) => {
      c.sendErrors++;
      if (!stopped) log.debug("gossip packet send failed", { to: p.to, error: err });
    });
    inflight.add(task);
    void task.finally(() => inflight.delete(task));
  };

  const gossipDurations = new DurationRing();
  const schedule = () => {
    if (stopped) return;
    const at = ml.nextDeadline();
    if (cancelTimer && timerAt === at) return;
    cancelTimer?.();
    timerAt = at;
    // At least 1 ms, so a deadline the core fails to move can never spin the event loop.
    cancelTimer = clock.setTimer(Math.max(1, at - now()), () => {
      cancelTimer = undefined;
      timerAt = undefined;
      if (stopped) return;
      const rounds = ml.gossipRounds;
      const startedAt = clock.monotonic();
      ml.tick(now());
      pump();
      if (ml.gossipRounds !== rounds) gossipDurations.push(clock.monotonic() - startedAt);
    });
  };

  /** Drains the core: the only place output leaves it. Returns the push-pull exchanges it started. */
  const pump = (): Array<{ req: StreamRequest; done: Promise<void> }> => {
    const out = ml.outbox();
    if (!stopped) for (const p of out.packets) sendPacket(p);
    const started = stopped ? [] : out.streamRequests.map((req) => ({ req, done: exchangeOut(req) }));
    for (const s of started) s.done.catch(() => {}); // counted and logged inside; join awaits its own
    logNotices(log, out.notices);
    events.publish(out.events);
    if (ml.leaveComplete && leaveWaiters.length > 0) {
      const waiters = leaveWaiters;
      leaveWaiters = [];
      for (const w of waiters) w();
    }
    schedule();
    return started;
  };

  const onPacket = (from: string, bytes: Uint8Array) => {
    if (stopped) return;
    c.packetsReceived++;
    void unseal(bytes, PACKET_MAGIC).then((plain) => {
      if (stopped) return;
      if (typeof plain === "string") return drop("packet", plain, from);
      const before = ml.stats.badPackets;
      ml.handlePacket(from, plain, now());
      if (ml.stats.badPackets > before) drop("packet", "malformed", from);
      pump();
    }).catch((err: unknown) => log.error("gossip packet handling failed", { from, error: err }));
  };

  /** One exchange under the stream deadline, its streams tracked for `stop`; failures become StreamDrops. */
  const exchange = async (body: (track: (s: GossipStream) => void) => Promise<void>): Promise<void> => {
    const mine: GossipStream[] = [];
    try {
      await withStreamDeadline(clock, streamTimeoutMs, (track) => body((s) => {
        if (stopped) return void s.abort();
        mine.push(s);
        openStreams.add(s);
        track(s);
      }));
    } catch (err) {
      if (err instanceof StreamDrop) throw err;
      if (err instanceof StreamError) throw new StreamDrop(err.reason === "ended" ? "stream-failed" : err.reason, err.message);
      throw new StreamDrop("stream-failed", (err as Error)?.message ?? String(err));
    } finally {
      for (const s of mine) openStreams.delete(s);
    }
  };

  const openStreamMessage = async (frame: Uint8Array): Promise<StreamMessage> => {
    const plain = await unseal(frame, STREAM_MAGIC);
    if (typeof plain === "string") throw new StreamDrop(plain, `push-pull payload dropped: ${plain}`);
    try {
      return decodeStream(plain);
    } catch (err) {
      if (err instanceof CodecError) throw new StreamDrop("malformed", err.message);
      throw err;
    }
  };

  const exchangeOut = async (req: StreamRequest): Promise<void> => {
    try {
      await exchange(async (track) => {
        const stream = await transport.dialStream(req.to, streamTimeoutMs, req.toName);
        track(stream);
        const reply = readFrame(stream, maxFrame);
        reply.catch(() => {});
        await stream.write(encodeFrame(await seal(encodeStream(req.msg))));
        const msg = await openStreamMessage(await reply);
        stream.close();
        if (stopped) return;
        c.streamsOut++;
        ml.handleStream(req.to, msg, now());
        pump();
      });
    } catch (err) {
      const e = err as StreamDrop;
      const peer = requestAddress(req);
      // A stream ping fails for every probe of a member that is down: counted, logged at debug only.
      if (!stopped) drop("stream", e.reason, peer, e.message, req.msg.type === "stream-ping");
      throw new Error(`${peer}: ${e.reason}: ${e.message}`, { cause: err });
    }
  };

  const exchangeIn = async (stream: GossipStream): Promise<void> => {
    try {
      await exchange(async (track) => {
        track(stream);
        const msg = await openStreamMessage(await readFrame(stream, maxFrame));
        if (stopped) return stream.abort();
        const reply = ml.handleStream(stream.remote, msg, now());
        pump();
        if (reply) await stream.write(encodeFrame(await seal(encodeStream(reply))));
        c.streamsIn++;
        stream.close();
      });
    } catch (err) {
      const e = err as StreamDrop;
      if (!stopped) drop("stream", e.reason, stream.remote, e.message);
    }
  };

  transport.listen({ packet: onPacket, stream: (s) => void exchangeIn(s) });
  schedule();

  return {
    memberlist: ml,
    localAddr: transport.localAddr,
    async join(addresses) {
      if (stopped) throw new Error("gossip driver stopped");
      ml.join(addresses, now());
      const mine = pump().filter((s) => s.req.msg.type === "push-pull" && s.req.msg.join && addresses.includes(requestAddress(s.req)));
      const results = await Promise.allSettled(mine.map((s) => s.done));
      const ok = results.filter((r) => r.status === "fulfilled").length;
      if (ok === 0 && mine.length > 0) {
        const why = results.map((r) => (r.status === "rejected" ? (r.reason as Error).message : "")).join("; ");
        throw new Error(`join failed, no member reached: ${why}`);
      }
      return ok;
    },
    async leave() {
      if (stopped) return;
      const done = new Promise<void>((resolve) => leaveWaiters.push(resolve));
      ml.leave(now());
      pump();
      await done;
      await Promise.allSettled([...inflight]);
    },
    updateMeta(meta) {
      ml.updateMeta(meta, now());
      pump();
    },
    broadcastUser(key, payload) {
      ml.broadcastUser(key, payload);
      pump();
    },
    sendUser(to, key, payload, toName) {
      ml.sendUser(to, key, payload, toName);
      pump();
    },
    subscribe: (fn) => events.subscribe(fn),
    stats: () => ({
      ...c,
      packetDrops: { ...c.packetDrops },
      streamDrops: { ...c.streamDrops },
      decryptFailures: decryptFailures.snapshot(),
      memberlist: ml.stats,
      probeDurations: ml.probeDurations,
      gossipDurations,
    }),
    async stop() {
      if (stopped) return;
      stopped = true;
      cancelTimer?.();
      for (const s of openStreams) s.abort();
      openStreams.clear();
      for (const w of leaveWaiters.splice(0)) w();
      await transport.close();
    },
  };
}
