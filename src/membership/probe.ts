/**
 * SWIM failure detection with Lifeguard (memberlist state.go probe/probeNode/handleIndirectPing):
 * one probe per (awareness-scaled) probe interval of the next member in shuffled round-robin order;
 * direct ping, then after the (scaled) probe timeout indirect pings through `indirectChecks` members
 * asking for nacks; no ack by the end of the interval makes the target suspect.
 *
 * When the direct ping times out, the target is also pinged over a stream (memberlist's TCP ping,
 * unless `disableTcpPings`); a stream ack by the end of the interval spares the target the suspicion.
 *
 * Awareness deltas per probe: -1 for a direct ack; 0 for an indirect ack; on failure +1 per expected
 * nack that did not arrive (or +1 if no relay could be asked).
 * Relays send their nack after 80% of the probe timeout (Lifeguard paper, section IV-B) so it can reach
 * the prober before its deadline; memberlist waits the full probe timeout.
 */
import { DurationRing } from "./duration_ring.ts";
import type { Awareness } from "./awareness.ts";
import type { MemberlistConfig } from "./config.ts";
import { isDeadOrLeft, type MemberTable } from "./state.ts";
import type { IndirectPingMsg, Message } from "./types.ts";

export interface ProbeHost {
  /** Sends `msgs` in one packet to `to`, member `toName` (undefined when unknown: an older node's empty name). */
  send(to: string, toName: string | undefined, msgs: readonly Message[]): void;
  nextSeq(): number;
  /** Whether probing is suspended (after leave). */
  stopped(): boolean;
  /** A direct probe of `node` was acked in time, after `rttMs`, with the ack's payload if any. */
  pingComplete(node: string, rttMs: number, payload: Uint8Array | undefined): void;
  /** A probe of `node` ended without an ack: it is about to be suspected. */
  probeFailed(node: string): void;
  /** Opens a stream to `to` (member `toName`) carrying a stream ping; its stream ack comes back through `onStreamAck`. */
  streamPing(to: string, toName: string, seq: number): void;
  /** A probe of `node` was answered only over the stream: not suspected, but the packet path looks broken. */
  probeFallbackOnly(node: string): void;
}

interface ActiveProbe {
  readonly seq: number;
  readonly target: string;
  readonly targetIncarnation: number;
  readonly directDeadline: number;
  readonly finalDeadline: number;
  /** When the direct ping went out (for the round-trip estimate). */
  readonly sentAt: number;
  indirectSent: boolean;
  expectedNacks: number;
  nacks: number;
  acked: boolean;
  /** The stream ping was answered. */
  streamAcked: boolean;
}

interface Relay {
  readonly originSeq: number;
  readonly originAddr: string;
  readonly originName: string | undefined;
  readonly nack: boolean;
  readonly deadline: number;
}

/** Counters for observation and tests. */
export interface ProbeStats {
  probes: number;
  directAcks: number;
  indirectAcks: number;
  failed: number;
  nacksReceived: number;
  /** Probes answered only by the stream ping. */
  streamAcks: number;
}

export class Prober {
  private active: ActiveProbe | undefined;
  private nextProbeAt: number | undefined;
  private readonly relays = new Map<number, Relay>();
  /** Smoothed round-trip time of direct probes per member, ms. */
  private readonly rtts = new Map<string, number>();
  readonly stats: ProbeStats = { probes: 0, directAcks: 0, indirectAcks: 0, failed: 0, nacksReceived: 0, streamAcks: 0 };
  /** How long each probe took (memberlist's probeNode): to its ack, or to its end without one. */
  readonly durations = new DurationRing();

  constructor(
    private readonly cfg: MemberlistConfig,
    private readonly table: MemberTable,
    private readonly awareness: Awareness,
    private readonly host: ProbeHost,
  ) {}

  /** Schedules the first probe at `at`. */
  start(at: number): void {
    this.nextProbeAt = at;
  }

  /** Runs every probe step due at `now`. */
  tick(now: number): void {
    const due = [...this.relays].filter(([, r]) => r.deadline <= now).sort((a, b) => a[0] - b[0]);
    for (const [seq, r] of due) {
      this.relays.delete(seq);
      if (r.nack) this.host.send(r.originAddr, r.originName, [{ type: "nack", seq: r.originSeq }]);
    }
    const p = this.active;
    if (p !== undefined && !p.acked && !p.indirectSent && now >= p.directDeadline && now < p.finalDeadline) this.sendIndirect(p);
    if (p !== undefined && now >= p.finalDeadline) this.finish(p, now);
    if (this.nextProbeAt !== undefined && now >= this.nextProbeAt && !this.host.stopped()) this.probe(now);
  }

  /** Earliest time `tick` has something to do. */
  nextDeadline(): number | undefined {
    let min = this.host.stopped() ? undefined : this.nextProbeAt;
    const take = (t: number) => { if (min === undefined || t < min) min = t; };
    const p = this.active;
    if (p !== undefined) {
      if (!p.acked && !p.indirectSent) take(p.directDeadline);
      take(p.finalDeadline);
    }
    for (const r of this.relays.values()) take(r.deadline);
    return min;
  }

  /**
   * The smoothed round-trip time of direct probes to `name` (EWMA, weight 1/8 per sample, as TCP's SRTT),
   * or undefined before the first direct ack. Indirect acks are not samples: they cross a relay.
   */
  rtt(name: string): number | undefined {
    return this.rtts.get(name);
  }

  /**
   * An ack arrived: completes our probe, or is relayed (without its payload, as memberlist does) to
   * whoever asked us to probe indirectly. A direct ack reports the round trip to the host.
   */
  onAck(seq: number, now: number, payload?: Uint8Array): void {
    const relay = this.relays.get(seq);
    if (relay !== undefined) {
      this.relays.delete(seq);
      this.host.send(relay.originAddr, relay.originName, [{ type: "ack", seq: relay.originSeq }]);
      return;
    }
    const p = this.active;
    if (p === undefined || p.seq !== seq || p.acked) return;
    p.acked = true;
    this.durations.push(Math.max(0, now - p.sentAt));
    if (p.indirectSent) this.stats.indirectAcks++;
    else {
      this.stats.directAcks++;
      this.awareness.applyDelta(-1);
      const sample = Math.max(0, now - p.sentAt);
      const prev = this.rtts.get(p.target);
      this.rtts.set(p.target, prev === undefined ? sample : prev + (sample - prev) / 8);
      this.host.pingComplete(p.target, sample, payload);
    }
  }

  /** The stream ping of probe `seq` was answered (a late answer, after the probe ended, is ignored). */
  onStreamAck(seq: number): void {
    const p = this.active;
    if (p !== undefined && p.seq === seq) p.streamAcked = true;
  }

  onNack(seq: number): void {
    const p = this.active;
    if (p !== undefined && p.seq === seq && !p.acked) {
      p.nacks++;
      this.stats.nacksReceived++;
    }
  }

  /** Probes `m.target` for `from` and relays the outcome. */
  onIndirectPing(m: IndirectPingMsg, from: string, now: number): void {
    const seq = this.host.nextSeq();
    const originAddr = m.sourceAddr || from;
    const originName = m.sourceNode || undefined;
    this.relays.set(seq, { originSeq: m.seq, originAddr, originName, nack: m.nack, deadline: now + Math.floor(this.cfg.probeTimeoutMs * 0.8) });
    this.host.send(m.targetAddr, m.target || undefined, [{ type: "ping", seq, target: m.target, sourceNode: this.cfg.name, sourceAddr: this.cfg.addr }]);
  }

  private probe(now: number): void {
    const interval = this.awareness.scale(this.cfg.probeIntervalMs);
    this.nextProbeAt = now + interval;
    const target = this.table.nextProbeTarget(now);
    if (target === undefined) return;
    const seq = this.host.nextSeq();
    this.stats.probes++;
    this.active = {
      seq,
      target: target.name,
      targetIncarnation: target.incarnation,
      directDeadline: now + this.awareness.scale(this.cfg.probeTimeoutMs),
      finalDeadline: now + interval,
      sentAt: now,
      indirectSent: false,
      expectedNacks: 0,
      nacks: 0,
      acked: false,
      streamAcked: false,
    };
    const ping: Message = { type: "ping", seq, target: target.name, sourceNode: this.cfg.name, sourceAddr: this.cfg.addr };
    // A suspect target hears the accusation directly so it can refute quickly.
    const msgs: Message[] = target.state === "suspect"
      ? [ping, { type: "suspect", incarnation: target.incarnation, node: target.name, from: this.cfg.name }]
      : [ping];
    this.host.send(target.addr, target.name, msgs);
  }

  /** After the probe timeout: indirect pings through other members, and memberlist's stream ping. */
  private sendIndirect(p: ActiveProbe): void {
    p.indirectSent = true;
    const target = this.table.nodes.get(p.target);
    if (target === undefined || isDeadOrLeft(target.state)) return;
    if (!this.cfg.disableTcpPings) this.host.streamPing(target.addr, target.name, p.seq);
    const relays = this.table.kRandom(this.cfg.indirectChecks, (n) => n.name !== this.cfg.name && n.name !== p.target && n.state === "alive");
    for (const r of relays) {
      this.host.send(r.addr, r.name, [{
        type: "indirect-ping", seq: p.seq, target: target.name, targetAddr: target.addr, nack: true, sourceNode: this.cfg.name, sourceAddr: this.cfg.addr,
      }]);
    }
    p.expectedNacks = relays.length;
  }

  private finish(p: ActiveProbe, now: number): void {
    this.active = undefined;
    if (p.acked) return;
    this.durations.push(Math.max(0, now - p.sentAt));
    // Packets failed: the health penalty applies even when the stream ping got through (memberlist).
    if (p.expectedNacks > 0) this.awareness.applyDelta(Math.max(0, p.expectedNacks - p.nacks));
    else this.awareness.applyDelta(1);
    if (p.streamAcked) {
      this.stats.streamAcks++;
      this.host.probeFallbackOnly(p.target);
      return;
    }
    this.stats.failed++;
    this.host.probeFailed(p.target);
    this.table.suspectNode({ type: "suspect", incarnation: p.targetIncarnation, node: p.target, from: this.cfg.name }, now);
  }
}
