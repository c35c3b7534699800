/**
 * The SWIM membership core (modelled on hashicorp/memberlist, with the Lifeguard refinements).
 * Pure and deterministic: no I/O and no timers; time comes in as `now` (ms on the driver's clock,
 * which must never go backwards) and randomness from the injected Rng.
 *
 * Driver contract (like Raft's Ready):
 *  - call `tick(now)` at or soon after `nextDeadline()` (or on a fixed short period);
 *  - feed every datagram to `handlePacket(from, bytes, now)`; garbage is dropped and counted in
 *    `stats.badPackets`, it never throws;
 *  - after every call, `outbox()` drains what to do: send `packets` (unreliable, any order), open a
 *    stream per `streamRequests` entry and write `encodeStream(req.msg)`, read the peer's answer and
 *    pass it to `handleStream` (a failed stream is simply dropped), and deliver `events` in order;
 *  - for an inbound stream, decode it and pass it to `handleStream`, then write back the returned reply.
 *
 * An optional PingDelegate (memberlist's Config.Ping; serf's coordinates use it) adds a payload to
 * every ack this node sends and hears of every direct probe acked in time, with its round-trip time.
 * An optional StateDelegate (memberlist's Delegate.LocalState; serf's event anti-entropy uses it) puts
 * the layer above's state in every push-pull this node sends; a peer's non-empty state comes out as a
 * `remote-state` event (memberlist's Delegate.MergeRemoteState), so the driver's usual event path feeds it up.
 */
import type { DurationRing } from "./duration_ring.ts";
import type { Rng } from "../platform/index.ts";
import { Awareness } from "./awareness.ts";
import { BroadcastQueue } from "./broadcast_queue.ts";
import { CodecError, MESSAGE_OVERHEAD, PACKET_OVERHEAD, decodePacket, encodeMessage, framePacket } from "./codec.ts";
import { MAX_META_BYTES, pushPullScaleMs, retransmitLimit, validateConfig, type MemberlistConfig } from "./config.ts";
import { Prober, type ProbeStats } from "./probe.ts";
import { MemberTable, isDeadOrLeft, snapshot } from "./state.ts";
import { splitNamedAddress } from "./transport.ts";
import type { Member, MemberEvent, MemberNotice, Message, PushPullMsg, StreamMessage } from "./types.ts";

/**
 * A datagram for `to`. `toName`: the destination member's name whenever the core knows it (memberlist's
 * Address.Name; pass it to `GossipTransport.sendPacket`).
 */
export interface OutPacket { readonly to: string; readonly toName?: string; readonly bytes: Uint8Array }
/**
 * Open a stream to `to`, send `msg` (a push-pull request or a stream ping), and feed the reply to `handleStream`.
 * `toName`: the member's name, for push-pull with a member, a reconnect, or a join to a `name/addr`
 * address (then `to` is the part after the `/`); absent for a join to a bare address.
 */
export interface StreamRequest { readonly to: string; readonly toName?: string; readonly msg: StreamMessage }

/** The address a request was made for: `name/addr` when it carries a name (joins and logs show this form). */
export function requestAddress(r: { readonly to: string; readonly toName?: string }): string {
  return r.toName === undefined ? r.to : `${r.toName}/${r.to}`;
}

/** Everything produced since the last drain. Readonly value; the core keeps no reference to it. */
export interface Outbox {
  readonly packets: readonly OutPacket[];
  readonly streamRequests: readonly StreamRequest[];
  readonly events: readonly MemberEvent[];
  /** Failure-detection moments for the log, in order (see MemberNotice). */
  readonly notices: readonly MemberNotice[];
}

/**
 * memberlist PingDelegate. Called synchronously from inside the core; must not throw or call back into it.
 */
export interface PingDelegate {
  /**
   * Bytes for every ack this node sends (serf: its encoded coordinate). Empty sends a plain ack; more than
   * MAX_ACK_PAYLOAD_BYTES is not sent (plain ack).
   */
  ackPayload(): Uint8Array;
  /**
   * A direct probe of `node` was acked before the indirect phase: `rttMs` from the ping leaving to the ack
   * arriving (the driver's clock), `payload` the ack's (empty when it had none: an older node).
   */
  notifyPingComplete(node: string, rttMs: number, payload: Uint8Array): void;
}

/**
 * memberlist Delegate.LocalState: the bytes to put in a push-pull's `userState` (serf: its Lamport clocks and
 * recent user events). Called synchronously from inside the core; must not throw or call back into it. The
 * peer's side arrives as a `remote-state` MemberEvent.
 */
export interface StateDelegate {
  localState(join: boolean): Uint8Array;
}

/** Largest ack payload sent; it rides in every ack, so keep it far below the packet size. */
export const MAX_ACK_PAYLOAD_BYTES = 512;
const NO_PAYLOAD = new Uint8Array(0);

export interface MemberlistStats extends ProbeStats {
  packetsIn: number;
  packetsOut: number;
  /** Packets that failed to decode (dropped). */
  badPackets: number;
  /** Pings addressed to another node name, or messages with oversized metadata (dropped). */
  rejectedMessages: number;
}

const USER_KEY_PREFIX = "\u0000user:";

export class Memberlist {
  readonly config: MemberlistConfig;
  private readonly table: MemberTable;
  private readonly queue = new BroadcastQueue();
  private readonly awareness: Awareness;
  private readonly prober: Prober;
  private packets: OutPacket[] = [];
  private streamRequests: StreamRequest[] = [];
  private events: MemberEvent[] = [];
  private notices: MemberNotice[] = [];
  private seq = 0;
  private gossipAt: number;
  private pushPullAt: number;
  private leaving = false;
  private leaveBroadcastId: number | undefined;
  private leaveDeadline: number | undefined;
  private leaveDone = false;
  private readonly counters = { packetsIn: 0, packetsOut: 0, badPackets: 0, rejectedMessages: 0 };

  /**
   * Validates `config` (throws RangeError) and announces the local node as alive at incarnation 1.
   * `ping`: the optional ping delegate (see PingDelegate); `state`: the optional push-pull state delegate
   * (see StateDelegate).
   */
  constructor(
    config: MemberlistConfig, private readonly rng: Rng, now = 0, private readonly ping?: PingDelegate, private readonly state?: StateDelegate,
  ) {
    validateConfig(config);
    this.config = config;
    this.awareness = new Awareness(config.awarenessMaxMultiplier);
    this.table = new MemberTable(config, rng, {
      broadcast: (key, msg) => { this.queue.queue(key, encodeMessage(msg)); },
      event: (e) => { this.events.push(e); },
      notice: (n) => { this.notices.push(n); },
      awarenessDelta: (d) => this.awareness.applyDelta(d),
      leaving: () => this.leaving,
    });
    this.prober = new Prober(config, this.table, this.awareness, {
      send: (to, toName, msgs) => this.send(to, toName, msgs),
      nextSeq: () => (this.seq = (this.seq + 1) >>> 0),
      stopped: () => this.leaving,
      pingComplete: (node, rttMs, payload) => this.ping?.notifyPingComplete(node, rttMs, payload ?? NO_PAYLOAD),
      probeFailed: (node) => { this.notices.push({ type: "probe-failed", node }); },
      streamPing: (to, toName, seq) => { this.streamRequests.push({ to, toName, msg: { type: "stream-ping", seq, target: toName } }); },
      probeFallbackOnly: (node) => { this.notices.push({ type: "probe-stream-only", node }); },
    });
    this.table.aliveNode({ type: "alive", incarnation: 1, node: config.name, addr: config.addr, meta: config.meta }, now, true);
    // Random stagger so members started together do not probe and gossip in lockstep.
    this.prober.start(now + rng.int(config.probeIntervalMs));
    this.gossipAt = now + rng.int(config.gossipIntervalMs);
    this.pushPullAt = now + rng.int(Math.max(1, config.pushPullIntervalMs));
  }

  /**
   * Starts a push-pull join with each address (the local address is skipped). An address may name the
   * member, `name/addr` (memberlist's resolveAddr form, serf's reconnects): the request then goes to
   * `addr` with `toName` set. An empty name is not split off, so the transport refuses the address.
   */
  join(addresses: readonly string[], now: number): void {
    void now;
    for (const address of addresses) {
      const { addr, name } = splitNamedAddress(address);
      const [to, toName] = name ? [addr, name] : [address, undefined];
      if (to === this.config.addr && (toName === undefined || toName === this.config.name)) continue;
      this.streamRequests.push({ to, toName, msg: this.localState(false, true) });
    }
  }

  /** Ingests one datagram. Never throws on bad input. */
  handlePacket(from: string, bytes: Uint8Array, now: number): void {
    this.counters.packetsIn++;
    let msgs: Message[];
    try {
      msgs = decodePacket(bytes);
    } catch (e) {
      if (!(e instanceof CodecError)) throw e;
      this.counters.badPackets++;
      return;
    }
    for (const m of msgs) this.handleMessage(m, from, now);
  }

  /**
   * Ingests a stream message. A push-pull request is answered with our state before merging, a stream
   * ping meant for us with a stream ack: the returned reply must be written back on the same stream.
   * A reply (push-pull or stream ack) returns undefined.
   */
  handleStream(from: string, msg: StreamMessage, now: number): StreamMessage | undefined {
    void from;
    if (msg.type === "stream-ping") {
      if (msg.target !== "" && msg.target !== this.config.name) {
        this.counters.rejectedMessages++;
        return undefined;
      }
      return { type: "stream-ack", seq: msg.seq };
    }
    if (msg.type === "stream-ack") {
      this.prober.onStreamAck(msg.seq);
      return undefined;
    }
    if (msg.nodes.some((n) => n.meta.length > MAX_META_BYTES)) {
      this.counters.rejectedMessages++;
      return undefined;
    }
    const reply = msg.reply ? undefined : this.localState(true, msg.join);
    this.table.mergeRemote(msg.nodes, now);
    // memberlist mergeRemoteState: the delegate hears of the peer's state after its members were merged.
    if (this.state !== undefined && msg.userState.length > 0) this.events.push({ type: "remote-state", state: msg.userState, join: msg.join });
    return reply;
  }

  /** Runs every timer due at `now`: suspicion expiry, probing, gossip, push-pull, leave completion. */
  tick(now: number): void {
    this.table.expireSuspicions(now);
    this.prober.tick(now);
    if (now >= this.gossipAt) {
      this.gossip(now);
      const next = this.gossipAt + this.config.gossipIntervalMs;
      this.gossipAt = next > now ? next : now + this.config.gossipIntervalMs; // a late tick skips missed rounds
    }
    if (!this.leaving && this.config.pushPullIntervalMs > 0 && now >= this.pushPullAt) {
      const peer = this.table.kRandom(1, (n) => n.name !== this.config.name && n.state === "alive")[0];
      if (peer !== undefined) this.streamRequests.push({ to: peer.addr, toName: peer.name, msg: this.localState(false, false) });
      this.pushPullAt = now + pushPullScaleMs(this.config.pushPullIntervalMs, this.table.size);
    }
    this.checkLeave(now);
  }

  /** Earliest time at which `tick` has work; the driver may tick later (work is then done late). */
  nextDeadline(): number {
    let min = this.gossipAt;
    const take = (t: number | undefined) => { if (t !== undefined && t < min) min = t; };
    take(this.prober.nextDeadline());
    take(this.table.nextSuspicionDeadline());
    if (!this.leaving && this.config.pushPullIntervalMs > 0) take(this.pushPullAt);
    if (!this.leaveDone) take(this.leaveDeadline);
    return min;
  }

  /**
   * Graceful leave: broadcasts dead-by-self (others record "left", not "failed") and stops probing.
   * `leaveComplete` turns true once the broadcast was transmitted retransmit-limit times, nobody else
   * is alive, or `leavePropagateMs` passed; the driver then shuts down.
   */
  leave(now: number): void {
    if (this.leaving) return;
    this.leaving = true;
    const self = this.table.self;
    this.table.deadNode({ type: "dead", incarnation: self.incarnation, node: self.name, from: self.name }, now);
    this.leaveBroadcastId = this.queue.idOf(self.name);
    this.leaveDeadline = now + this.config.leavePropagateMs;
    this.checkLeave(now);
  }

  get leaveComplete(): boolean {
    return this.leaveDone;
  }

  /** Replaces the local metadata (tags): bumps our incarnation and gossips alive; emits "update". */
  updateMeta(meta: Uint8Array, now: number): void {
    if (meta.length > MAX_META_BYTES) throw new RangeError(`meta exceeds ${MAX_META_BYTES} bytes`);
    const self = this.table.self;
    this.table.aliveNode({ type: "alive", incarnation: self.incarnation + 1, node: self.name, addr: self.addr, meta }, now, true);
  }

  /** Queues a user message for gossip; a newer one with the same key replaces it. */
  broadcastUser(key: string, payload: Uint8Array): void {
    this.queue.queue(USER_KEY_PREFIX + key, encodeMessage({ type: "user", key, payload }));
  }

  /**
   * Sends a user message straight to `to` in a packet of its own, once and unreliably (memberlist
   * SendToAddress; serf query responses). The receiver reports it as a `user` event. `toName`: the
   * member at `to`, when known (serf passes the query's source node).
   */
  sendUser(to: string, key: string, payload: Uint8Array, toName?: string): void {
    this.packets.push({ to, toName, bytes: framePacket([encodeMessage({ type: "user", key, payload })]) });
    this.counters.packetsOut++;
  }

  /** Smoothed round-trip time of direct probes to `name` in ms, or undefined before the first one. */
  rttMs(name: string): number | undefined {
    return this.prober.rtt(name);
  }

  /** Every known member (self included, dead/left ones until reaped), sorted by name. */
  members(): Member[] {
    return this.table.members();
  }

  member(name: string): Member | undefined {
    const n = this.table.nodes.get(name);
    return n === undefined ? undefined : snapshot(n);
  }

  /** Members currently alive or suspect (memberlist NumMembers counts these). */
  numLiveMembers(): number {
    let n = 0;
    for (const m of this.table.nodes.values()) if (!isDeadOrLeft(m.state)) n++;
    return n;
  }

  /** Lifeguard local health: 0 is healthy, up to awarenessMaxMultiplier - 1. */
  healthScore(): number {
    return this.awareness.getHealthScore();
  }

  /** Confirmations counted for a suspect member (for tests and debugging). */
  suspicionConfirmations(name: string): number | undefined {
    return this.table.suspicionOf(name)?.confirmationCount;
  }

  get stats(): Readonly<MemberlistStats> {
    return { ...this.prober.stats, ...this.counters };
  }

  /** Number of queued broadcasts (for tests). */
  get pendingBroadcasts(): number {
    return this.queue.length;
  }

  /** Drains the output produced since the last call. */
  outbox(): Outbox {
    const out: Outbox = { packets: this.packets, streamRequests: this.streamRequests, events: this.events, notices: this.notices };
    this.packets = [];
    this.streamRequests = [];
    this.events = [];
    this.notices = [];
    return out;
  }

  private handleMessage(m: Message, from: string, now: number): void {
    switch (m.type) {
      case "ping":
        if (m.target !== "" && m.target !== this.config.name) { this.counters.rejectedMessages++; return; }
        this.send(m.sourceAddr || from, m.sourceNode || undefined, [this.ack(m.seq)]); // memberlist handlePing: Name is SourceNode
        return;
      case "indirect-ping": this.prober.onIndirectPing(m, from, now); return;
      case "ack": this.prober.onAck(m.seq, now, m.payload); return;
      case "nack": this.prober.onNack(m.seq); return;
      case "suspect": this.table.suspectNode(m, now); return;
      case "dead": this.table.deadNode(m, now); return;
      case "alive":
        if (m.meta.length > MAX_META_BYTES) { this.counters.rejectedMessages++; return; }
        this.table.aliveNode(m, now);
        return;
      case "user": this.events.push({ type: "user", key: m.key, payload: m.payload }); return;
    }
  }

  /** The ack for a ping, with the delegate's payload when there is one (memberlist handlePing). */
  private ack(seq: number): Message {
    const payload = this.ping?.ackPayload();
    return payload !== undefined && payload.length > 0 && payload.length <= MAX_ACK_PAYLOAD_BYTES ? { type: "ack", seq, payload } : { type: "ack", seq };
  }

  private transmitLimit(): number {
    return retransmitLimit(this.config.retransmitMult, this.table.size);
  }

  /** Sends `msgs` to `to` (member `toName`, when known) as one packet, piggybacking as many queued broadcasts as fit. */
  private send(to: string, toName: string | undefined, msgs: readonly Message[]): void {
    const encoded = msgs.map(encodeMessage);
    const used = PACKET_OVERHEAD + encoded.reduce((s, e) => s + MESSAGE_OVERHEAD + e.length, 0);
    const piggy = this.queue.take(MESSAGE_OVERHEAD, this.config.packetSizeLimit - used, this.transmitLimit(), 255 - encoded.length);
    this.packets.push({ to, toName, bytes: framePacket([...encoded, ...piggy]) });
    this.counters.packetsOut++;
  }

  /** Gossip rounds run so far (the driver times the ticks that ran one). */
  gossipRounds = 0;

  /** How long each probe took, to its ack or to its end without one (memberlist's probeNode timer). */
  get probeDurations(): DurationRing {
    return this.prober.durations;
  }

  /** memberlist gossip(): broadcasts to a few random live (or recently dead) members. */
  private gossip(now: number): void {
    this.gossipRounds++;
    const targets = this.table.kRandom(this.config.gossipNodes, (n) => {
      if (n.name === this.config.name) return false;
      if (n.state === "alive" || n.state === "suspect") return true;
      return n.state === "dead" && now - n.stateChange <= this.config.gossipToTheDeadTimeMs;
    });
    for (const t of targets) {
      if (this.queue.length === 0) return;
      const msgs = this.queue.take(MESSAGE_OVERHEAD, this.config.packetSizeLimit - PACKET_OVERHEAD, this.transmitLimit(), 255);
      if (msgs.length === 0) return;
      this.packets.push({ to: t.addr, toName: t.name, bytes: framePacket(msgs) });
      this.counters.packetsOut++;
    }
  }

  private localState(reply: boolean, join: boolean): PushPullMsg {
    return { type: "push-pull", reply, join, nodes: this.table.pushState(), userState: this.state?.localState(join) ?? NO_PAYLOAD };
  }

  private checkLeave(now: number): void {
    if (!this.leaving || this.leaveDone) return;
    const othersAlive = [...this.table.nodes.values()].some((n) => n.name !== this.config.name && n.state === "alive");
    const sent = this.leaveBroadcastId === undefined || !this.queue.has(this.leaveBroadcastId);
    if (!othersAlive || sent || now >= (this.leaveDeadline ?? now)) this.leaveDone = true;
  }
}
