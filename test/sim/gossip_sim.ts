/**
 * Deterministic simulation of the SWIM core: N Memberlist instances in one process over a simulated
 * lossy network, driven by one seeded Rng and a priority queue of timed events (no harness files).
 *
 * Packets are delayed by a random latency (or a per-link one, `linkLatencyMs`, for network coordinates)
 * and dropped with probability `loss` or when a partition or crash separates the ends; streams
 * (push-pull) are reliable unless separated. Packet and stream bytes go through the real codec. Nodes are ticked exactly at `nextDeadline()`.
 */
import { seededRng, type Rng } from "../../src/platform/index.ts";
import {
  LAN_PROFILE, Memberlist, decodeStream, encodeStream, memberlistConfig,
  type MemberEvent, type PingDelegate, type PushPullMsg, type Timing,
} from "../../src/membership/index.ts";

export interface GossipSimOptions {
  readonly seed: number;
  readonly profile?: Timing;
  readonly overrides?: Partial<Timing>;
  /** Packet loss probability in [0, 1). */
  readonly loss?: number;
  /** One-way latency range in ms (inclusive). */
  readonly latencyMs?: readonly [number, number];
  /** One-way latency of each packet and stream from `from` to `to` (ms, may be fractional); replaces `latencyMs`. */
  readonly linkLatencyMs?: (from: string, to: string) => number;
  /** The ping delegate (e.g. serf's coordinates) each node's Memberlist is built with. */
  readonly pingDelegate?: (name: string) => PingDelegate | undefined;
}

type SimEvent =
  | { kind: "tick"; node: string }
  | { kind: "packet"; from: string; to: string; bytes: Uint8Array }
  | { kind: "stream"; from: string; to: string; bytes: Uint8Array }
  | { kind: "call"; fn: () => void };

interface Queued { at: number; seq: number; ev: SimEvent }

export interface RecordedEvent { readonly at: number; readonly node: string; readonly event: MemberEvent }

export interface SimNode {
  readonly name: string;
  readonly ml: Memberlist;
  up: boolean;
  tickAt: number | undefined;
}

class Heap {
  private a: Queued[] = [];
  private less = (x: Queued, y: Queued) => x.at < y.at || (x.at === y.at && x.seq < y.seq);
  get size(): number { return this.a.length; }
  peek(): Queued | undefined { return this.a[0]; }
  push(q: Queued): void {
    const a = this.a;
    a.push(q);
    for (let i = a.length - 1; i > 0;) {
      const p = (i - 1) >> 1;
      if (!this.less(a[i]!, a[p]!)) break;
      [a[i], a[p]] = [a[p]!, a[i]!];
      i = p;
    }
  }
  pop(): Queued | undefined {
    const a = this.a, top = a[0], last = a.pop();
    if (a.length && last) {
      a[0] = last;
      for (let i = 0; ;) {
        const l = 2 * i + 1, r = l + 1;
        let m = i;
        if (l < a.length && this.less(a[l]!, a[m]!)) m = l;
        if (r < a.length && this.less(a[r]!, a[m]!)) m = r;
        if (m === i) break;
        [a[i], a[m]] = [a[m]!, a[i]!];
        i = m;
      }
    }
    return top;
  }
}

export class GossipSim {
  now = 0;
  readonly nodes = new Map<string, SimNode>();
  readonly log: RecordedEvent[] = [];
  /** Extra per-link drop rule (partitions, isolation); true drops. */
  blocked: (from: string, to: string) => boolean = () => false;
  loss: number;
  packetsDelivered = 0;
  packetsDropped = 0;
  private readonly heap = new Heap();
  private seq = 0;
  private readonly rng: Rng;
  private readonly profile: Timing;
  private readonly overrides: Partial<Timing>;
  private readonly latency: readonly [number, number];
  private readonly listeners: ((e: RecordedEvent) => void)[] = [];

  constructor(readonly opts: GossipSimOptions) {
    this.rng = seededRng(opts.seed);
    this.profile = opts.profile ?? LAN_PROFILE;
    this.overrides = opts.overrides ?? {};
    this.loss = opts.loss ?? 0;
    this.latency = opts.latencyMs ?? [1, 5];
  }

  /** Starts a node named `name` (its address is its name) at the current time. */
  addNode(name: string, meta?: Uint8Array): SimNode {
    const cfg = memberlistConfig(this.profile, { name, addr: name, meta }, this.overrides);
    const ml = new Memberlist(cfg, seededRng((this.opts.seed * 7919 + this.nodes.size * 104729) >>> 0), this.now, this.opts.pingDelegate?.(name));
    const node: SimNode = { name, ml, up: true, tickAt: undefined };
    this.nodes.set(name, node);
    this.drain(node);
    return node;
  }

  node(name: string): SimNode {
    const n = this.nodes.get(name);
    if (n === undefined) throw new Error(`no sim node ${name}`);
    return n;
  }

  onEvent(fn: (e: RecordedEvent) => void): void {
    this.listeners.push(fn);
  }

  join(name: string, targets: readonly string[]): void {
    const n = this.node(name);
    n.ml.join(targets, this.now);
    this.drain(n);
  }

  leave(name: string): void {
    const n = this.node(name);
    n.ml.leave(this.now);
    this.drain(n);
  }

  /** Stops a node: it no longer receives, sends or ticks. */
  crash(name: string): void {
    this.node(name).up = false;
  }

  /** Runs `fn` at absolute sim time `at`. */
  at(at: number, fn: () => void): void {
    this.push(at, { kind: "call", fn });
  }

  /** Processes events up to and including time `t`, then sets `now = t`. */
  runUntil(t: number, stop?: () => boolean): void {
    for (;;) {
      const top = this.heap.peek();
      if (top === undefined || top.at > t) break;
      this.heap.pop();
      this.now = top.at;
      this.dispatch(top.ev);
      if (stop?.()) return;
    }
    this.now = t;
  }

  runFor(ms: number, stop?: () => boolean): void {
    this.runUntil(this.now + ms, stop);
  }

  /** Runs until `pred` holds, checking every `stepMs`, or `maxMs` pass; returns the time it held or undefined. */
  runUntilTrue(pred: () => boolean, maxMs: number, stepMs = 50): number | undefined {
    const end = this.now + maxMs;
    while (this.now < end) {
      if (pred()) return this.now;
      this.runUntil(Math.min(end, this.now + stepMs));
    }
    return pred() ? this.now : undefined;
  }

  upNodes(): SimNode[] {
    return [...this.nodes.values()].filter((n) => n.up);
  }

  private push(at: number, ev: SimEvent): void {
    this.heap.push({ at, seq: this.seq++, ev });
  }

  private delay(from: string, to: string): number {
    if (this.opts.linkLatencyMs) return this.opts.linkLatencyMs(from, to);
    const [lo, hi] = this.latency;
    return lo + this.rng.int(hi - lo + 1);
  }

  private cut(from: string, to: string): boolean {
    const a = this.nodes.get(from), b = this.nodes.get(to);
    return a === undefined || b === undefined || !a.up || !b.up || this.blocked(from, to);
  }

  private dispatch(ev: SimEvent): void {
    switch (ev.kind) {
      case "call": ev.fn(); return;
      case "tick": {
        const n = this.nodes.get(ev.node)!;
        if (!n.up || n.tickAt !== this.now) return;
        n.tickAt = undefined;
        n.ml.tick(this.now);
        this.drain(n);
        return;
      }
      case "packet": {
        if (this.cut(ev.from, ev.to)) { this.packetsDropped++; return; }
        this.packetsDelivered++;
        const n = this.nodes.get(ev.to)!;
        n.ml.handlePacket(ev.from, ev.bytes, this.now);
        this.drain(n);
        return;
      }
      case "stream": {
        if (this.cut(ev.from, ev.to)) return;
        const n = this.nodes.get(ev.to)!;
        const reply = n.ml.handleStream(ev.from, decodeStream(ev.bytes), this.now);
        this.drain(n);
        if (reply !== undefined) this.sendStream(ev.to, ev.from, reply);
        return;
      }
    }
  }

  private sendStream(from: string, to: string, msg: PushPullMsg): void {
    this.push(this.now + this.delay(from, to), { kind: "stream", from, to, bytes: encodeStream(msg) });
  }

  private drain(n: SimNode): void {
    const out = n.ml.outbox();
    for (const p of out.packets) {
      if (this.loss > 0 && this.rng.next() < this.loss) { this.packetsDropped++; continue; }
      this.push(this.now + this.delay(n.name, p.to), { kind: "packet", from: n.name, to: p.to, bytes: p.bytes });
    }
    for (const s of out.streamRequests) this.sendStream(n.name, s.to, s.msg);
    for (const event of out.events) {
      const rec = { at: this.now, node: n.name, event };
      this.log.push(rec);
      for (const l of this.listeners) l(rec);
    }
    if (!n.up) return;
    const due = Math.max(n.ml.nextDeadline(), this.now + 1);
    if (n.tickAt === undefined || due < n.tickAt) {
      n.tickAt = due;
      this.push(due, { kind: "tick", node: n.name });
    }
  }
}

/** The epidemic estimate of dissemination rounds: 2 * ln(N + 1) / k (k = gossip fan-out). */
export function epidemicRounds(n: number, fanout: number): number {
  return (2 * Math.log(n + 1)) / fanout;
}

/** True when every up node sees exactly the up nodes as alive (and nothing else as alive or suspect). */
export function converged(sim: GossipSim): boolean {
  const up = sim.upNodes();
  for (const n of up) {
    if (n.ml.numLiveMembers() !== up.length) return false;
    for (const m of up) {
      const st = n.ml.member(m.name)?.state;
      if (st !== "alive") return false;
    }
  }
  return true;
}

/**
 * Models the reconnect loop of the serf layer above memberlist (serf.go reconnect): every `intervalMs`
 * each up node tries a push-pull join with one random member it saw fail, so healed partitions merge.
 */
export function enableReconnect(sim: GossipSim, intervalMs: number, rng: Rng): void {
  const failed = new Map<string, Set<string>>();
  sim.onEvent(({ node, event }) => {
    if (!("member" in event)) return;
    const set = failed.get(node) ?? new Set<string>();
    failed.set(node, set);
    if (event.type === "failed") set.add(event.member.name);
    else set.delete(event.member.name);
  });
  const round = () => {
    for (const n of [...sim.nodes.keys()].sort()) {
      const set = failed.get(n);
      if (!sim.node(n).up || set === undefined || set.size === 0) continue;
      const list = [...set].sort();
      sim.join(n, [list[rng.int(list.length)]!]);
    }
    sim.at(sim.now + intervalMs, round);
  };
  sim.at(sim.now + intervalMs, round);
}
