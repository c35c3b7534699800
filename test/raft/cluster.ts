/**
 * A minimal in-process cluster for programmatic tests (randomized runs, scripted scenarios): RawNodes
 * over MemoryStorage, a message pool the test delivers from, and a SafetyChecker fed on every apply.
 */
import { seededRng } from "../../src/platform/rng.ts";
import type { Config, ConfState, Message, Raft } from "../../src/raft/index.ts";
import { MemoryStorage, RaftError, RawNode } from "../../src/raft/index.ts";
import { SafetyChecker } from "./checker.ts";

export interface ClusterNode {
  readonly id: string;
  raw: RawNode;
  readonly config: Config;
  readonly storage: MemoryStorage;
  /** Applied entries' data (non-empty normal entries). */
  applied: string[];
  /** Snapshot bytes by index (the driver's side of snapshots). */
  readonly snaps: Map<number, { data: Uint8Array; confState: ConfState }>;
}

export type RaftFactory = (cfg: Config) => Raft;

export class Cluster {
  readonly nodes = new Map<string, ClusterNode>();
  pool: Message[] = [];
  readonly checker = new SafetyChecker();
  /** Delivered message counts by type (for run statistics). */
  readonly delivered = new Map<string, number>();

  constructor(ids: readonly string[], private readonly opts: Partial<Config> & { seed: number; factory?: RaftFactory }) {
    const confState: ConfState = { voters: [...ids], learners: [], votersOutgoing: [], learnersNext: [], autoLeave: false };
    ids.forEach((id, i) => {
      const storage = new MemoryStorage();
      storage.applySnapshot({ index: 1, term: 1, confState });
      const cfg: Config = {
        electionTick: 10, heartbeatTick: 1, maxInflightMsgs: 4, ...opts,
        id, storage, applied: 1, rng: seededRng(opts.seed * 31 + i),
      };
      const raw = new RawNode(opts.factory ? opts.factory(cfg) : cfg);
      const snaps = new Map([[1, { data: new TextEncoder().encode("[]"), confState }]]);
      this.nodes.set(id, { id, raw, config: cfg, storage, applied: [], snaps });
    });
  }

  /** Crash and restart: a new RawNode over the same (durable) storage; the state machine is kept. */
  restart(id: string): void {
    const n = this.node(id);
    const cfg: Config = { ...n.config, applied: n.raw.raft.raftLog.applied };
    n.raw = new RawNode(this.opts.factory ? this.opts.factory(cfg) : cfg);
    this.pool = this.pool.filter((m) => m.from !== id && m.to !== id);
  }

  node(id: string): ClusterNode {
    return this.nodes.get(id)!;
  }

  /** Processes one Ready of `id` (persist, send to pool, apply, advance). */
  processReady(id: string): void {
    const n = this.node(id);
    if (!n.raw.hasReady()) return;
    const rd = n.raw.ready();
    if (rd.snapshot) {
      n.storage.applySnapshot(rd.snapshot);
      const rec = n.snaps.get(rd.snapshot.index)!;
      n.applied = JSON.parse(new TextDecoder().decode(rec.data)) as string[];
    }
    n.storage.append(rd.entries);
    if (rd.hardState) n.storage.setHardState(rd.hardState);
    this.pool.push(...rd.messages);
    let cs = n.raw.raft.trk.confState();
    for (const e of rd.committedEntries) {
      this.checker.observeApplied(id, e);
      if (e.type === "ConfChange") cs = n.raw.applyConfChange(e.change);
      else if (e.data.length > 0) n.applied.push(new TextDecoder().decode(e.data));
      n.snaps.set(e.index, { data: new TextEncoder().encode(JSON.stringify(n.applied)), confState: cs });
    }
    n.raw.advance();
    const r = n.raw.raft;
    if (r.state === "Leader") this.checker.observeLeader(r.term, id);
  }

  processAll(): void {
    for (const id of [...this.nodes.keys()].sort()) this.processReady(id);
  }

  /** Delivers one message (MsgSnap: the bytes travel with it, as a driver would stream them). */
  deliver(m: Message): void {
    const to = this.nodes.get(m.to);
    if (!to) return;
    this.delivered.set(m.type, (this.delivered.get(m.type) ?? 0) + 1);
    if (m.type === "MsgSnap") {
      const rec = this.node(m.from).snaps.get(m.snapshot.index);
      if (!rec) return; // sender compacted beyond what it keeps: treat as a failed stream
      to.snaps.set(m.snapshot.index, rec);
    }
    try {
      to.raw.step(m);
    } catch (e) {
      if (!(e instanceof RaftError)) throw e;
    }
  }

  /** Delivers (and removes) all pooled messages matching `filter`; others stay. */
  deliverWhere(filter: (m: Message) => boolean): number {
    const mine = this.pool.filter(filter);
    this.pool = this.pool.filter((m) => !filter(m));
    for (const m of mine) this.deliver(m);
    return mine.length;
  }

  /** Runs processReady/deliver until quiet, delivering only messages accepted by `filter` (others dropped). */
  stabilize(filter: (m: Message) => boolean = () => true, maxRounds = 200): void {
    for (let i = 0; i < maxRounds; i++) {
      this.processAll();
      if (this.pool.length === 0) return;
      const msgs = this.pool;
      this.pool = [];
      for (const m of msgs) if (filter(m)) this.deliver(m);
    }
  }
}
