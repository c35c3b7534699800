/**
 * Deterministic simulation of whole serf members (Serf over Memberlist, the pure cores) in one process,
 * for queries, keyring rotation, user events, leaves and restarts. Time is the harness's simulated clock;
 * packets get a seeded random latency and loss (and may be dropped by a rule that reads them); streams
 * (push-pull) are reliable unless an end is down or the pair is blocked.
 *
 * Each member may hold a real `Keyring` (the one its Serf's key queries change). Encryption is modelled,
 * not performed (WebCrypto is asynchronous, which would make the run depend on the thread pool): a sealed
 * datagram or stream frame is `[0xE1][4-byte fingerprint of the sender's primary key][plaintext]`, and a
 * receiver accepts it only when one of its installed keys has that fingerprint, exactly the rule the
 * real driver applies with AES-GCM (crypto.ts is tested on its own, and end to end by test/e2e).
 * Encrypted and plain members do not mix, as in the driver.
 */
import { seededRng, type Cancel, type Rng } from "../../src/platform/index.ts";
import {
  KeyResponseCollector, LAN_PROFILE, Memberlist, SERF_DEFAULTS, Serf, SerfKind, decodePacket, decodeSerfMsg, decodeStream, encodeStream, keyQuery,
  memberlistConfig,
  type GossipKey, type IncomingQuery, type KeyOperation, type KeyResponse, type Keyring, type NodeResponse, type PushPullMsg,
  type QueryParams, type SerfEvent, type StreamMessage, type Timing,
} from "../../src/membership/index.ts";
import { simClock, type SimClock } from "../harness/sim_clock.ts";

export interface SerfSimOptions {
  readonly seed: number;
  /** Timing profile; default Consul's LAN profile. */
  readonly profile?: Timing;
  /** Packet loss probability in [0, 1). */
  readonly loss?: number;
  /** One-way latency range in ms, inclusive. */
  readonly latencyMs?: readonly [number, number];
}

/** A query started by a sim member, filled in as its events arrive. */
export interface SimQuery {
  readonly ltime: number;
  readonly id: number;
  readonly acks: string[];
  readonly responses: NodeResponse[];
  closed: boolean;
  /** Return true to close the query early. */
  onResponse?: (r: NodeResponse) => boolean;
}

export interface SimMember {
  readonly name: string;
  readonly ml: Memberlist;
  readonly serf: Serf;
  readonly keyring?: Keyring;
  up: boolean;
  /** Serf events with the sim time they came out. */
  readonly events: { readonly at: number; readonly event: SerfEvent }[];
  /** User queries this member received. */
  readonly incoming: IncomingQuery[];
  /** Times its keyring was persisted, and datagrams/streams it dropped for their encryption. */
  persisted: number;
  dropped: number;
}

const SEALED = 0xe1;

/** FNV-1a of the key bytes: stands in for "this key decrypts it". */
function fingerprint(k: GossipKey): number {
  let h = 0x811c9dc5;
  for (const b of k.bytes()) h = Math.imul(h ^ b, 0x01000193) >>> 0;
  return h;
}

const replaySeed = process.env.SERF_SEED === undefined ? undefined : Number(process.env.SERF_SEED);
/** Whether one seed is being replayed (`SERF_SEED=<n>`): checks that sum up many seeds should then be skipped. */
export const replaying = replaySeed !== undefined;
/** The seeds a serf simulation test runs: `list`, or only the one `SERF_SEED` names. */
export const seeds = (list: number[]): number[] => (replaySeed === undefined ? list : [replaySeed]);

/** Runs `fn`; a failure is rethrown naming the seed and how to replay it. */
export function withSeed(seed: number, fn: () => void): void {
  try {
    fn();
  } catch (e) {
    throw new Error(`serf sim failed with seed ${seed} (replay: SERF_SEED=${seed}): ${e instanceof Error ? e.message : String(e)}`);
  }
}

/**
 * Whether a packet carries news of `leaver`'s graceful leave: its serf leave intent (a user message) or the
 * core's dead-by-self message. For `dropPacket`, to make one member miss the leave's gossip.
 */
export function carriesLeaveOf(plain: Uint8Array, leaver: string): boolean {
  return decodePacket(plain).some((m) => {
    if (m.type === "dead") return m.node === leaver;
    if (m.type !== "user" || m.payload[0] !== SerfKind.LeaveIntent) return false;
    return decodeSerfMsg(m.payload).name === leaver;
  });
}

/**
 * Members n0..n{count-1} (each with its own keyring when `keyring` is given), joined through n0 and run
 * until every one sees every other alive. Throws (naming the seed) when they do not converge in 30 s.
 */
export function convergedCluster(seed: number, count: number, opts: { loss?: number; keyring?: () => Keyring } = {}): SerfSim {
  const sim = new SerfSim({ seed, loss: opts.loss });
  const names = Array.from({ length: count }, (_, i) => `n${i}`);
  for (const name of names) sim.add(name, opts.keyring?.());
  for (const name of names.slice(1)) sim.join(name, ["n0"]);
  if (sim.runUntil(() => sim.converged(), 30_000) === undefined) throw new Error(`seed ${seed}: the cluster did not converge in 30 s`);
  return sim;
}

export class SerfSim {
  readonly clock: SimClock = simClock();
  readonly members = new Map<string, SimMember>();
  /** Per-link drop rule (partitions); true drops packets and new streams both ways. */
  blocked: (from: string, to: string) => boolean = () => false;
  /** Per-packet drop rule on the packet's plaintext as it arrives (e.g. one kind of gossip to one member; see `carriesLeaveOf`). */
  dropPacket: (from: string, to: string, plain: Uint8Array) => boolean = () => false;
  /** Per-link stream rule: true fails push-pull streams both ways while packets still flow. */
  streamsBlocked: (from: string, to: string) => boolean = () => false;
  /** Sees every push-pull request as a member sends it (to keep one for `replayPushPull`). */
  tapStreams: (from: string, to: string, msg: PushPullMsg) => void = () => {};
  loss: number;
  private readonly rng: Rng;
  private readonly profile: Timing;
  private readonly latency: readonly [number, number];
  private readonly timers = new Map<string, { at: number; cancel: Cancel }>();
  private readonly open = new Map<string, Map<number, SimQuery>>();
  private started = 0;

  constructor(readonly opts: SerfSimOptions) {
    this.rng = seededRng(opts.seed);
    this.profile = opts.profile ?? LAN_PROFILE;
    this.loss = opts.loss ?? 0;
    this.latency = opts.latencyMs ?? [1, 5];
  }

  get now(): number {
    return this.clock.monotonic();
  }

  /**
   * Starts a member named `name` (its address is its name), encrypted when `keyring` is given. The name of a
   * stopped member may be reused: a restart, with fresh state.
   */
  add(name: string, keyring?: Keyring): SimMember {
    if (this.members.get(name)?.up) throw new Error(`sim member ${name} is running`);
    const rng = seededRng((this.opts.seed * 7919 + this.started++ * 104729) >>> 0);
    const m: SimMember = {
      name, keyring, up: true, events: [], incoming: [], persisted: 0, dropped: 0,
      serf: undefined!, ml: undefined!,
    };
    const serf = new Serf({ ...SERF_DEFAULTS, reconnectIntervalMs: 5000, gossipIntervalMs: this.profile.gossipIntervalMs, name, tags: { role: "node" } }, rng, this.now, {
      keyring, persist: () => void m.persisted++,
    });
    // Wired as the pool wires it, with both delegates; the coordinates draw from the member's rng as in production.
    const ml = new Memberlist(memberlistConfig(this.profile, { name, addr: name, meta: serf.localMeta }), rng, this.now, serf.pingDelegate, serf.stateDelegate);
    Object.assign(m, { serf, ml });
    this.members.set(name, m);
    this.open.set(name, new Map());
    this.drain(m);
    return m;
  }

  member(name: string): SimMember {
    const m = this.members.get(name);
    if (m === undefined) throw new Error(`no sim member ${name}`);
    return m;
  }

  /**
   * serf Join from `name`, by default ignoring old events as the pool's join (Consul's) does: the window
   * closes once the push-pull had time to come back (two latencies), reached or not. `ignoreOld: false`
   * joins as serf's reconnect does, replaying the events it missed.
   */
  join(name: string, targets: readonly string[], opts: { ignoreOld?: boolean } = {}): void {
    const m = this.member(name);
    if (opts.ignoreOld ?? true) this.clock.setTimer(2 * this.latency[1] + 1, m.serf.ignoreOldEvents());
    m.ml.join(targets, this.now);
    this.drain(m);
  }

  /** serf UserEvent from `name`. */
  userEvent(name: string, eventName: string, payload: Uint8Array): void {
    const m = this.member(name);
    m.serf.userEvent(eventName, payload, this.now);
    this.drain(m);
  }

  /**
   * Graceful leave from `name` (serf Leave): the leave intent, then the core's leave; the member stops once the
   * core reports the leave complete, as the pool stops its driver.
   */
  leave(name: string): void {
    const m = this.member(name);
    m.serf.leave(this.now);
    this.drain(m);
    const check = (): void => {
      if (!m.up) return;
      if (m.ml.leaveComplete) this.crash(name);
      else this.clock.setTimer(10, check);
    };
    check();
  }

  /** Hands `to` a push-pull from `from` now (say, an old one kept by `tapStreams`), whatever the network; its reply is dropped. */
  replayPushPull(from: string, to: string, msg: PushPullMsg): void {
    const m = this.member(to);
    if (!m.up) return;
    m.ml.handleStream(from, msg, this.now);
    this.drain(m);
  }

  /** Stops a member: it no longer receives, sends or ticks. */
  crash(name: string): void {
    const m = this.member(name);
    m.up = false;
    this.timers.get(name)?.cancel();
    this.timers.delete(name);
  }

  /** serf Query from `name`; the returned record fills in as the run goes on. */
  query(name: string, queryName: string, payload: Uint8Array, params: QueryParams = {}): SimQuery {
    const m = this.member(name);
    const s = m.serf.query(queryName, payload, params, this.now);
    const q: SimQuery = { ltime: s.ltime, id: s.id, acks: [], responses: [], closed: false };
    this.open.get(name)!.set(s.ltime, q);
    this.drain(m);
    return q;
  }

  /** Answers a user query on `name`'s behalf. */
  respond(name: string, q: IncomingQuery, payload: Uint8Array): void {
    const m = this.member(name);
    m.serf.respond(q, payload, this.now);
    this.drain(m);
  }

  /** Runs a key operation from `name` to completion, as the pool's key manager does. */
  keyOperation(name: string, op: KeyOperation, key?: string, maxMs = 60_000): KeyResponse {
    const m = this.member(name);
    const collector = new KeyResponseCollector(m.serf.liveMembers());
    const { name: qname, payload } = keyQuery(op, key);
    const q = this.query(name, qname, payload);
    q.onResponse = (r) => collector.add(r.from, r.payload);
    for (const r of q.responses) if (collector.add(r.from, r.payload)) this.close(m, q);
    if (!q.closed && this.runUntil(() => q.closed, maxMs) === undefined) throw new Error(`key operation ${op} from ${name} never closed`);
    return collector.finish();
  }

  runFor(ms: number): void {
    this.clock.advance(ms);
  }

  /** Runs until `pred` holds (checked every `stepMs`) or `maxMs` passed; returns the time it held. */
  runUntil(pred: () => boolean, maxMs: number, stepMs = 10): number | undefined {
    const end = this.now + maxMs;
    while (this.now < end) {
      if (pred()) return this.now;
      this.clock.advance(Math.min(stepMs, end - this.now));
    }
    return pred() ? this.now : undefined;
  }

  /** Members (up ones) that see every other up member alive. */
  converged(): boolean {
    const up = [...this.members.values()].filter((m) => m.up);
    return up.every((m) => up.every((o) => m.serf.member(o.name)?.status === "alive"));
  }

  /** Every `member-failed` event any member emitted, as `observer:failed-member`. */
  failures(): string[] {
    return [...this.members.values()].flatMap((m) => m.events.filter((e) => e.event.type === "member-failed").map((e) => `${m.name}:${(e.event as { member: { name: string } }).member.name}`));
  }

  private close(m: SimMember, q: SimQuery): void {
    if (q.closed) return;
    m.serf.closeQuery(q.ltime);
    q.closed = true;
    this.drain(m);
  }

  private delay(): number {
    const [lo, hi] = this.latency;
    return lo + this.rng.int(hi - lo + 1);
  }

  private reachable(from: string, to: string): SimMember | undefined {
    const a = this.members.get(from), b = this.members.get(to);
    if (a === undefined || b === undefined || !a.up || !b.up || this.blocked(from, to)) return undefined;
    return b;
  }

  private seal(m: SimMember, plain: Uint8Array): Uint8Array {
    if (m.keyring === undefined) return plain;
    const out = new Uint8Array(5 + plain.length);
    out[0] = SEALED;
    new DataView(out.buffer).setUint32(1, fingerprint(m.keyring.primary));
    out.set(plain, 5);
    return out;
  }

  /** The plaintext, or undefined (counted) when `m` must drop it. */
  private unseal(m: SimMember, bytes: Uint8Array): Uint8Array | undefined {
    const sealed = bytes[0] === SEALED;
    if (m.keyring === undefined) return sealed ? void m.dropped++ : bytes;
    if (!sealed) return void m.dropped++;
    const fp = new DataView(bytes.buffer, bytes.byteOffset).getUint32(1);
    if (!m.keyring.keys().some((k) => fingerprint(k) === fp)) return void m.dropped++;
    return bytes.subarray(5);
  }

  private sendPacket(from: SimMember, to: string, plain: Uint8Array): void {
    if (this.loss > 0 && this.rng.next() < this.loss) return;
    const bytes = this.seal(from, plain);
    this.clock.setTimer(this.delay(), () => {
      const dst = this.reachable(from.name, to);
      if (dst === undefined) return;
      const p = this.unseal(dst, bytes);
      if (p === undefined || this.dropPacket(from.name, to, p)) return;
      dst.ml.handlePacket(from.name, p, this.now);
      this.drain(dst);
    });
  }

  /** One stream exchange (a push-pull): request there, reply back, each sealed with its sender's primary key. */
  private sendStream(from: SimMember, to: string, msg: StreamMessage): void {
    if (msg.type === "push-pull") this.tapStreams(from.name, to, msg);
    const req = this.seal(from, encodeStream(msg));
    this.clock.setTimer(this.delay(), () => {
      const dst = this.streamsBlocked(from.name, to) ? undefined : this.reachable(from.name, to);
      const plain = dst && this.unseal(dst, req);
      if (dst === undefined || plain === undefined) return;
      const reply = dst.ml.handleStream(from.name, decodeStream(plain), this.now);
      this.drain(dst);
      if (reply === undefined) return;
      const back = this.seal(dst, encodeStream(reply));
      this.clock.setTimer(this.delay(), () => {
        const src = this.streamsBlocked(to, from.name) ? undefined : this.reachable(to, from.name);
        const p = src && this.unseal(src, back);
        if (src === undefined || p === undefined) return;
        src.ml.handleStream(to, decodeStream(p), this.now);
        this.drain(src);
      });
    });
  }

  /** Drains core and serf until both are quiet, executing serf's requests on the core, then re-arms the tick. */
  private drain(m: SimMember): void {
    if (!m.up) return;
    for (let busy = true; busy;) {
      const o = m.ml.outbox();
      for (const p of o.packets) this.sendPacket(m, p.to, p.bytes);
      for (const s of o.streamRequests) this.sendStream(m, s.to, s.msg);
      for (const e of o.events) m.serf.handle(e, this.now);
      const so = m.serf.outbox();
      for (const event of so.events) m.events.push({ at: this.now, event });
      for (const r of so.requests) {
        if (r.type === "join") m.ml.join(r.addresses, this.now);
        else if (r.type === "update-meta") m.ml.updateMeta(r.meta, this.now);
        else if (r.type === "broadcast") m.ml.broadcastUser(r.key, r.payload);
        else if (r.type === "send") m.ml.sendUser(r.to, r.key, r.payload);
        else m.ml.leave(this.now);
      }
      for (const e of so.queries) this.route(m, e);
      busy = o.packets.length + o.streamRequests.length + o.events.length + so.requests.length + so.queries.length > 0;
    }
    const due = Math.max(this.now + 1, Math.min(m.ml.nextDeadline(), m.serf.nextDeadline()));
    const t = this.timers.get(m.name);
    if (t !== undefined && t.at <= due) return;
    t?.cancel();
    const cancel = this.clock.setTimer(due - this.now, () => {
      this.timers.delete(m.name);
      if (!m.up) return;
      m.ml.tick(this.now);
      m.serf.tick(this.now);
      this.drain(m);
    });
    this.timers.set(m.name, { at: due, cancel });
  }

  private route(m: SimMember, e: ReturnType<Serf["outbox"]>["queries"][number]): void {
    if (e.type === "query") return void m.incoming.push(e.query);
    const q = this.open.get(m.name)!.get(e.ltime);
    if (q === undefined || q.id !== e.id) return;
    if (e.type === "query-closed") q.closed = true;
    else if (e.type === "query-ack") q.acks.push(e.from);
    else {
      const r = { from: e.from, payload: e.payload };
      q.responses.push(r);
      if (q.onResponse?.(r) === true) this.close(m, q);
    }
  }
}
