/**
 * The member table and memberlist's state-transition rules (state.go: aliveNode, suspectNode,
 * deadNode, mergeState, refute, resetNodes). Pure: effects go to a `TableSink` supplied by the core.
 *
 * Precedence: a message about a node applies only if its incarnation is newer (alive) or at least as
 * new (suspect, dead) as what we hold; alive at an equal incarnation never overrides suspect/dead.
 * A node accused of being suspect or dead while alive refutes with a higher incarnation.
 */
import type { Rng } from "../platform/index.ts";
import { suspicionTimeoutMs, type MemberlistConfig } from "./config.ts";
import { Suspicion } from "./suspicion.ts";
import type { AliveMsg, DeadMsg, Member, MemberEvent, MemberNotice, MemberState, Message, PushNodeState, SuspectMsg } from "./types.ts";

export interface NodeState {
  name: string;
  addr: string;
  meta: Uint8Array;
  incarnation: number;
  state: MemberState;
  stateChange: number;
}

/** Where the table's side effects go. */
export interface TableSink {
  /** Queue a gossip broadcast about `key` (a node name), invalidating older ones about it. */
  broadcast(key: string, msg: Message): void;
  event(e: MemberEvent): void;
  /** A failure-detection moment for the log (see MemberNotice). */
  notice(n: MemberNotice): void;
  awarenessDelta(delta: number): void;
  /** True once the local node has started leaving: it then accepts (not refutes) its own death. */
  leaving(): boolean;
}

export const isDeadOrLeft = (s: MemberState): boolean => s === "dead" || s === "left";

export function snapshot(n: NodeState): Member {
  return { name: n.name, addr: n.addr, meta: n.meta, incarnation: n.incarnation, state: n.state, stateChange: n.stateChange };
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

export class MemberTable {
  readonly nodes = new Map<string, NodeState>();
  /** Probe order (memberlist m.nodes): shuffled on every wrap, new nodes inserted at random. */
  private order: string[] = [];
  private probeIndex = 0;
  private readonly suspicions = new Map<string, Suspicion>();

  constructor(private readonly cfg: MemberlistConfig, private readonly rng: Rng, private readonly sink: TableSink) {}

  get self(): NodeState {
    return this.nodes.get(this.cfg.name)!;
  }

  /** memberlist estNumNodes: every member we track, dead ones included until reaped. */
  get size(): number {
    return this.nodes.size;
  }

  suspicionOf(name: string): Suspicion | undefined {
    return this.suspicions.get(name);
  }

  /** Applies an alive message. `bootstrap` is only for the local node's first announcement. */
  aliveNode(a: AliveMsg, now: number, bootstrap = false): void {
    const isLocal = a.node === this.cfg.name;
    if (isLocal && !bootstrap && this.sink.leaving()) return;
    let st = this.nodes.get(a.node);
    const isNew = st === undefined;
    if (st === undefined) {
      st = { name: a.node, addr: a.addr, meta: a.meta, incarnation: 0, state: "dead", stateChange: now };
      this.nodes.set(a.node, st);
      this.order.push(a.node);
      const at = this.rng.int(this.order.length);
      [this.order[at], this.order[this.order.length - 1]] = [this.order[this.order.length - 1]!, this.order[at]!];
    } else if (st.addr !== a.addr && !isLocal) {
      // Address conflict: a live node keeps its address; a left or dead one may come back elsewhere.
      if (!isDeadOrLeft(st.state)) return;
    }
    const updatesNode = !isNew && st.addr !== a.addr && isDeadOrLeft(st.state);
    if (!isNew && a.incarnation <= st.incarnation && !isLocal && !updatesNode) return;
    if (!isNew && a.incarnation < st.incarnation && isLocal) return;
    this.suspicions.delete(a.node);
    if (isLocal && !bootstrap) {
      // Our own alive echoed back is fine; anything else claiming to be us is refuted.
      if (a.incarnation === st.incarnation && sameBytes(a.meta, st.meta) && a.addr === st.addr) return;
      this.refute(st, a.incarnation, "alive", "");
      return;
    }
    this.sink.broadcast(a.node, a);
    const oldState = isNew ? "dead" : st.state;
    const oldMeta = st.meta, oldAddr = st.addr;
    st.incarnation = a.incarnation;
    st.meta = a.meta;
    st.addr = a.addr;
    if (st.state !== "alive") {
      st.state = "alive";
      st.stateChange = now;
    }
    if (isNew || isDeadOrLeft(oldState)) this.sink.event({ type: "join", member: snapshot(st) });
    else if (!sameBytes(oldMeta, a.meta) || oldAddr !== a.addr) this.sink.event({ type: "update", member: snapshot(st) });
  }

  suspectNode(s: SuspectMsg, now: number): void {
    const st = this.nodes.get(s.node);
    if (st === undefined || s.incarnation < st.incarnation) return;
    const susp = this.suspicions.get(s.node);
    if (susp !== undefined) {
      if (susp.confirm(s.from)) this.sink.broadcast(s.node, s);
      return;
    }
    if (st.state !== "alive") return;
    if (s.node === this.cfg.name) {
      this.refute(st, s.incarnation, "suspect", s.from);
      return;
    }
    this.sink.broadcast(s.node, s);
    st.incarnation = s.incarnation;
    st.state = "suspect";
    st.stateChange = now;
    const n = this.size;
    let k = this.cfg.suspicionMult - 2;
    if (n - 2 < k) k = 0;
    const min = suspicionTimeoutMs(this.cfg.suspicionMult, n, this.cfg.probeIntervalMs);
    this.suspicions.set(s.node, new Suspicion(s.from, k, min, this.cfg.suspicionMaxTimeoutMult * min, now));
  }

  deadNode(d: DeadMsg, now: number): void {
    const st = this.nodes.get(d.node);
    if (st === undefined || d.incarnation < st.incarnation) return;
    this.suspicions.delete(d.node);
    if (isDeadOrLeft(st.state)) return;
    if (d.node === this.cfg.name && !this.sink.leaving()) {
      this.refute(st, d.incarnation, "dead", d.from);
      return;
    }
    this.sink.broadcast(d.node, d);
    st.incarnation = d.incarnation;
    st.state = d.node === d.from ? "left" : "dead";
    st.stateChange = now;
    this.sink.event({ type: st.state === "left" ? "leave" : "failed", member: snapshot(st) });
  }

  /** memberlist mergeState: remote "dead" is only a suspicion here; "left" is believed. */
  mergeRemote(remote: readonly PushNodeState[], now: number): void {
    for (const r of remote) {
      switch (r.state) {
        case "alive": this.aliveNode({ type: "alive", incarnation: r.incarnation, node: r.name, addr: r.addr, meta: r.meta }, now); break;
        case "left": this.deadNode({ type: "dead", incarnation: r.incarnation, node: r.name, from: r.name }, now); break;
        case "dead":
        case "suspect": this.suspectNode({ type: "suspect", incarnation: r.incarnation, node: r.name, from: this.cfg.name }, now); break;
      }
    }
  }

  /** Declares dead every suspect whose suspicion deadline has passed (in name order). */
  expireSuspicions(now: number): void {
    const due = [...this.suspicions].filter(([, s]) => s.deadline <= now).map(([name]) => name).sort();
    for (const name of due) {
      const st = this.nodes.get(name);
      const confirmations = this.suspicions.get(name)!.confirmationCount;
      this.suspicions.delete(name);
      if (st?.state === "suspect") this.sink.notice({ type: "suspect-timeout", node: name, confirmations });
      if (st?.state === "suspect") this.deadNode({ type: "dead", incarnation: st.incarnation, node: name, from: this.cfg.name }, now);
    }
  }

  /** Earliest suspicion deadline, if any. */
  nextSuspicionDeadline(): number | undefined {
    let min: number | undefined;
    for (const s of this.suspicions.values()) if (min === undefined || s.deadline < min) min = s.deadline;
    return min;
  }

  /** Increments our incarnation past `accused` and broadcasts alive (memberlist refute); `from` accused us of `accusation`. */
  refute(st: NodeState, accused: number, accusation: "suspect" | "dead" | "alive", from: string): void {
    this.sink.notice({ type: "refute", accusation, from });
    st.incarnation = Math.max(st.incarnation, accused) + 1;
    this.sink.awarenessDelta(1);
    this.sink.broadcast(st.name, { type: "alive", incarnation: st.incarnation, node: st.name, addr: st.addr, meta: st.meta });
  }

  /** The next member to probe in round-robin order (skipping self, dead and left); reaps and reshuffles on wrap. */
  nextProbeTarget(now: number): NodeState | undefined {
    let checked = 0;
    for (;;) {
      if (checked >= this.order.length) return undefined;
      if (this.probeIndex >= this.order.length) {
        this.resetNodes(now);
        this.probeIndex = 0;
        checked++;
        continue;
      }
      const st = this.nodes.get(this.order[this.probeIndex++]!)!;
      if (st.name !== this.cfg.name && !isDeadOrLeft(st.state)) return st;
      checked++;
    }
  }

  /** memberlist resetNodes: reap members dead or left for longer than gossipToTheDeadTime, then shuffle. */
  resetNodes(now: number): void {
    for (const name of this.order) {
      const st = this.nodes.get(name)!;
      if (name !== this.cfg.name && isDeadOrLeft(st.state) && now - st.stateChange > this.cfg.gossipToTheDeadTimeMs) {
        this.nodes.delete(name);
        this.suspicions.delete(name);
      }
    }
    this.order = this.order.filter((name) => this.nodes.has(name));
    for (let i = this.order.length - 1; i > 0; i--) {
      const j = this.rng.int(i + 1);
      [this.order[i], this.order[j]] = [this.order[j]!, this.order[i]!];
    }
  }

  /** Up to k distinct random members passing `filter`, drawn in probe order with the injected Rng. */
  kRandom(k: number, filter: (n: NodeState) => boolean): NodeState[] {
    const pool = this.order.map((name) => this.nodes.get(name)!).filter(filter);
    const out: NodeState[] = [];
    for (let i = 0; i < k && i < pool.length; i++) {
      const j = i + this.rng.int(pool.length - i);
      [pool[i], pool[j]] = [pool[j]!, pool[i]!];
      out.push(pool[i]!);
    }
    return out;
  }

  /** All members, sorted by name. */
  members(): Member[] {
    return [...this.nodes.values()].map(snapshot).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  /** Local state for a push-pull exchange, sorted by name. */
  pushState(): PushNodeState[] {
    return this.members().map(({ name, addr, meta, incarnation, state }) => ({ name, addr, meta, incarnation, state }));
  }
}
