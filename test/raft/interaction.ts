/**
 * Interaction environment for transcript tests, modelled on etcd's rafttest.InteractionEnv: a set of
 * RawNodes over MemoryStorage, a global in-flight message queue, and one handler per directive.
 * Snapshots are streamed between drivers in chunks (see deliverSnap), as the core's contract requires.
 */
import { seededRng } from "../../src/platform/rng.ts";
import {
  describeConfChange, describeEntry, describeHardState, describeMessage, describeSnapshot, MemoryStorage, RaftError, RawNode,
} from "../../src/raft/index.ts";
import type { ConfChange, ConfChangeSingle, ConfState, Message, MsgSnap, Ready, ReadOnlyOption } from "../../src/raft/index.ts";
import type { TestCase } from "./datadriven.ts";
import { parseList } from "./datadriven.ts";

const enc = new TextEncoder();
const dec = new TextDecoder();

interface SnapRecord {
  readonly index: number;
  readonly confState: ConfState;
  readonly data: Uint8Array;
}

interface Node {
  readonly id: string;
  raw: RawNode;
  readonly storage: MemoryStorage;
  /** The state machine: data of applied non-empty normal entries. */
  applied: string[];
  confState: ConfState;
  /** Snapshot bytes this driver can serve, by index (kept for every applied index, like etcd's env). */
  readonly snaps: Map<number, SnapRecord>;
}

function hashId(id: string): number {
  let h = 2166136261;
  for (let i = 0; i < id.length; i++) h = Math.imul(h ^ id.charCodeAt(i), 16777619) >>> 0;
  return h;
}

export class InteractionEnv {
  readonly nodes = new Map<string, Node>();
  messages: Message[] = [];
  /** Nodes whose traffic is dropped, or partition groups (node -> group number). */
  private isolated = new Set<string>();
  private groups = new Map<string, number>();
  private out: string[] = [];
  private indent = "";
  snapshotChunkSize = 8;

  handle(tc: TestCase): string {
    this.out = [];
    this.indent = "";
    try {
      this.dispatch(tc);
    } catch (e) {
      if (e instanceof RaftError) this.print(`ERROR: ${e.message}`);
      else throw e;
    }
    const s = this.out.join("\n");
    return s === "" ? "ok" : s;
  }

  private print(line: string): void {
    this.out.push(this.indent + line);
  }

  private withIndent(f: () => void): void {
    const old = this.indent;
    this.indent += "  ";
    try { f(); } finally { this.indent = old; }
  }

  private node(id: string | undefined): Node {
    const n = id === undefined ? undefined : this.nodes.get(id);
    if (!n) throw new Error(`unknown node ${id}`);
    return n;
  }

  private sortedNodes(): Node[] {
    return [...this.nodes.values()].sort((a, b) => Number(a.id) - Number(b.id));
  }

  private dispatch(tc: TestCase): void {
    const a = tc.args;
    switch (tc.cmd) {
      case "add-nodes": return this.addNodes(tc);
      case "campaign": return this.node(a[0]).raw.campaign();
      case "propose": return this.node(a[0]).raw.propose(enc.encode(a[1] ?? ""));
      case "propose-conf-change": return this.proposeConfChange(tc);
      case "tick": return this.tick(a[0]!, Number(a[1] ?? 1));
      case "tick-heartbeat": return this.tick(a[0]!, this.node(a[0]).raw.raft.heartbeatTimeout);
      case "tick-election": {
        const r = this.node(a[0]).raw.raft;
        const n = r.state === "Leader" ? r.electionTimeout : Math.max(1, r.randomizedElectionTimeout - r.electionElapsed);
        return this.tick(a[0]!, n);
      }
      case "process-ready": for (const id of a) this.processReady(id); return;
      case "deliver-msgs": for (const id of a) this.deliverMsgs(id); return;
      case "stabilize": return this.stabilize(a);
      case "transfer-leadership": return this.node(tc.kv.get("from")).raw.transferLeadership(tc.kv.get("to")!);
      case "read-index": return this.node(a[0]).raw.readIndex(a[1]!);
      case "report-snapshot": return this.node(a[0]).raw.reportSnapshot(a[1]!, a[2] === "ok" ? "Finish" : "Failure");
      case "report-unreachable": return this.node(a[0]).raw.reportUnreachable(a[1]!);
      case "compact": return this.compact(a[0]!, Number(a[1]));
      case "isolate": this.isolated.add(a[0]!); return;
      case "partition": {
        this.groups.clear();
        a.forEach((g, i) => { for (const id of g.split(",")) this.groups.set(id, i); });
        return;
      }
      case "heal": this.isolated.clear(); this.groups.clear(); return;
      case "drop-msgs": return this.dropMsgs(tc);
      case "raft-state": return this.raftState();
      case "raft-log": return this.raftLog(a[0]!);
      case "status": return this.status(a[0]!);
      case "applied": {
        const n = this.node(a[0]);
        this.print(`applied=${n.raw.raft.raftLog.applied} data=[${n.applied.join(" ")}]`);
        return;
      }
      default: throw new Error(`unknown directive ${tc.cmd}`);
    }
  }

  private addNodes(tc: TestCase): void {
    const count = Number(tc.args[0]);
    const voters = parseList(tc.kv.get("voters"));
    const learners = parseList(tc.kv.get("learners"));
    const index = Number(tc.kv.get("index") ?? 0);
    const bool = (k: string) => tc.kv.get(k) === "true";
    for (let i = 0; i < count; i++) {
      const id = String(this.nodes.size + 1);
      const storage = new MemoryStorage();
      const confState: ConfState = { voters, learners, votersOutgoing: [], learnersNext: [], autoLeave: false };
      const snaps = new Map<number, SnapRecord>();
      if (index > 0) {
        storage.applySnapshot({ index, term: 1, confState });
        snaps.set(index, { index, confState, data: enc.encode("[]") });
      }
      const raw = new RawNode({
        id, storage, electionTick: Number(tc.kv.get("election") ?? 3), heartbeatTick: Number(tc.kv.get("heartbeat") ?? 1),
        maxInflightMsgs: Number(tc.kv.get("max-inflight") ?? 256),
        maxSizePerMsg: tc.kv.has("max-size") ? Number(tc.kv.get("max-size")) : undefined,
        checkQuorum: bool("checkquorum"), preVote: bool("prevote"),
        readOnlyOption: (tc.kv.get("read-only") as ReadOnlyOption | undefined) ?? "Safe",
        stepDownOnRemoval: bool("step-down-on-removal"),
        applied: index, rng: seededRng(hashId(id)),
      });
      this.nodes.set(id, { id, raw, storage, applied: [], confState: index > 0 ? confState : raw.raft.trk.confState(), snaps });
    }
  }

  private proposeConfChange(tc: TestCase): void {
    const t = tc.kv.get("transition");
    const transition = t === "implicit" ? "JointImplicit" : t === "explicit" ? "JointExplicit" : "Auto";
    const changes: ConfChangeSingle[] = tc.args.slice(1).map((s) => {
      const kind = s[0] === "v" ? "AddNode" : s[0] === "l" ? "AddLearnerNode" : s[0] === "r" ? "RemoveNode" : undefined;
      if (!kind) throw new Error(`bad conf change ${s}`);
      return { type: kind, nodeId: s.slice(1) };
    });
    this.node(tc.args[0]).raw.proposeConfChange({ transition, changes });
  }

  private tick(id: string, n: number): void {
    const raw = this.node(id).raw;
    for (let i = 0; i < n; i++) raw.tick();
  }

  /** Handles one Ready in the contract's order: persist, send, apply, advance. */
  processReady(id: string): void {
    const n = this.node(id);
    if (!n.raw.hasReady()) return;
    const rd = n.raw.ready();
    this.print(`> ${id} handling Ready`);
    this.withIndent(() => this.printReady(rd));
    if (rd.snapshot) {
      n.storage.applySnapshot(rd.snapshot);
      // The driver received the complete bytes before stepping MsgSnap (see deliverSnap).
      const rec = n.snaps.get(rd.snapshot.index);
      if (!rec) throw new Error(`${id}: no snapshot data for index ${rd.snapshot.index}`);
      n.applied = JSON.parse(dec.decode(rec.data)) as string[];
      n.confState = rd.snapshot.confState;
    }
    n.storage.append(rd.entries);
    if (rd.hardState) n.storage.setHardState(rd.hardState);
    // Messages across a partition are lost on the wire (shown as DROPPED in the Ready above).
    this.messages.push(...rd.messages.filter((m) => !this.dropped(m)));
    for (const e of rd.committedEntries) {
      if (e.type === "ConfChange") {
        n.confState = n.raw.applyConfChange(e.change);
      } else if (e.data.length > 0) {
        n.applied.push(dec.decode(e.data));
      }
      n.snaps.set(e.index, { index: e.index, confState: n.confState, data: enc.encode(JSON.stringify(n.applied)) });
    }
    // Like etcd's interaction env, the snapshot a leader would send is always the latest applied state
    // (a snapshot older than a new member's addition would not include it, and it would ignore it).
    const last = rd.committedEntries[rd.committedEntries.length - 1];
    if (last && last.index > n.storage.snapshot().index) n.storage.createSnapshot(last.index, n.confState);
    n.raw.advance();
  }

  private printReady(rd: Ready): void {
    this.print(`Ready MustSync=${rd.mustSync}:`);
    if (rd.softState) this.print(`State:${rd.softState.raftState}${rd.softState.lead ? ` Lead:${rd.softState.lead}` : ""}`);
    if (rd.hardState) this.print(`HardState ${describeHardState(rd.hardState)}`);
    if (rd.entries.length > 0) {
      this.print("Entries:");
      for (const e of rd.entries) this.print(describeEntry(e));
    }
    if (rd.snapshot) this.print(`Snapshot ${describeSnapshot(rd.snapshot)}`);
    if (rd.committedEntries.length > 0) {
      this.print("CommittedEntries:");
      for (const e of rd.committedEntries) this.print(describeEntry(e));
    }
    if (rd.messages.length > 0) {
      this.print("Messages:");
      for (const m of rd.messages) this.print(`${describeMessage(m)}${this.dropped(m) ? " DROPPED" : ""}`);
    }
    if (rd.readStates.length > 0) {
      this.print("ReadStates:");
      for (const rs of rd.readStates) this.print(`Index:${rs.index} Context:${rs.requestCtx}`);
    }
  }

  private dropped(m: Message): boolean {
    if (this.isolated.has(m.from) || this.isolated.has(m.to)) return true;
    const gf = this.groups.get(m.from), gt = this.groups.get(m.to);
    return gf !== undefined && gt !== undefined && gf !== gt;
  }

  deliverMsgs(id: string): number {
    const mine = this.messages.filter((m) => m.to === id);
    this.messages = this.messages.filter((m) => m.to !== id);
    const n = this.node(id);
    for (const m of mine) {
      if (this.dropped(m)) {
        this.print(`${describeMessage(m)} DROPPED`);
        continue;
      }
      this.print(describeMessage(m));
      try {
        if (m.type === "MsgSnap") this.deliverSnap(n, m);
        else n.raw.step(m);
      } catch (e) {
        if (e instanceof RaftError) this.print(`ERROR: ${e.message}`);
        else throw e;
      }
    }
    return mine.length;
  }

  /**
   * Streams the snapshot bytes from the sender's driver to the receiver's in chunks, then steps the
   * metadata-only MsgSnap into the receiver's core (which never sees the bytes).
   */
  private deliverSnap(to: Node, m: MsgSnap): void {
    const from = this.node(m.from);
    const rec = from.snaps.get(m.snapshot.index);
    if (!rec) throw new Error(`${m.from} has no snapshot data at ${m.snapshot.index}`);
    const parts: Uint8Array[] = [];
    for (let off = 0; off < rec.data.length; off += this.snapshotChunkSize) {
      parts.push(rec.data.subarray(off, off + this.snapshotChunkSize));
    }
    const assembled = new Uint8Array(parts.reduce((s, p) => s + p.length, 0));
    let off = 0;
    for (const p of parts) { assembled.set(p, off); off += p.length; }
    this.print(`  streamed snapshot ${m.from}->${to.id} index=${m.snapshot.index}: ${assembled.length} bytes in ${parts.length} chunks`);
    to.snaps.set(m.snapshot.index, { index: m.snapshot.index, confState: m.snapshot.confState, data: assembled });
    to.raw.step(m);
    // The stream completed: the sender's driver reports success to its core.
    from.raw.reportSnapshot(to.id, "Finish");
    this.print(`  ${from.id} reported snapshot Finish for ${to.id}`);
  }

  private stabilize(ids: readonly string[]): void {
    const nodes = () => this.sortedNodes().filter((n) => ids.length === 0 || ids.includes(n.id));
    for (let round = 0; round < 1000; round++) {
      let done = true;
      for (const n of nodes()) {
        if (n.raw.hasReady()) {
          done = false;
          this.processReady(n.id);
        }
      }
      for (const n of nodes()) {
        if (this.messages.some((m) => m.to === n.id)) {
          done = false;
          this.print(`> ${n.id} receiving messages`);
          this.withIndent(() => this.deliverMsgs(n.id));
        }
      }
      if (done) return;
    }
    throw new Error("stabilize did not converge");
  }

  private dropMsgs(tc: TestCase): void {
    const from = tc.kv.get("from"), to = tc.kv.get("to"), type = tc.kv.get("type");
    this.messages = this.messages.filter((m) => {
      const match = (!from || m.from === from) && (!to || m.to === to) && (!type || m.type === type);
      if (match) this.print(`dropped: ${describeMessage(m)}`);
      return !match;
    });
  }

  private compact(id: string, index: number): void {
    const n = this.node(id);
    const rec = n.snaps.get(index);
    if (!rec) throw new Error(`${id}: index ${index} not applied`);
    n.storage.createSnapshot(index, rec.confState);
    n.storage.compact(index);
    this.raftLog(id);
  }

  private raftState(): void {
    for (const n of this.sortedNodes()) {
      const r = n.raw.raft;
      const role = r.trk.config.voters[0].has(n.id) || r.trk.config.voters[1].has(n.id) ? "Voter" : r.isLearner ? "Learner" : "Non-Voter";
      let s = `${n.id}: ${r.state} (${role}) Term:${r.term} Lead:${r.lead || "0"}`;
      if (this.isolated.has(n.id)) s += " (isolated)";
      this.print(s);
    }
  }

  private raftLog(id: string): void {
    const s = this.node(id).storage;
    const fi = s.firstIndex(), li = s.lastIndex();
    if (li < fi) {
      this.print(`log is empty: first index=${fi}, last index=${li}`);
      return;
    }
    for (const e of s.entries(fi, li + 1, Number.MAX_SAFE_INTEGER)) this.print(describeEntry(e));
  }

  private status(id: string): void {
    const st = this.node(id).raw.status();
    const c = st.config;
    let cfg = `voters=(${c.voters.join(" ")})`;
    if (c.votersOutgoing.length > 0) cfg += `&&(${c.votersOutgoing.join(" ")})`;
    if (c.learners.length > 0) cfg += ` learners=(${c.learners.join(" ")})`;
    if (c.learnersNext.length > 0) cfg += ` learners_next=(${c.learnersNext.join(" ")})`;
    if (c.autoLeave) cfg += " autoleave";
    this.print(`${st.id}: ${st.softState.raftState} ${describeHardState(st.hardState)} applied=${st.applied} last=${st.lastIndex} ${cfg}${st.leadTransferee ? ` transferee=${st.leadTransferee}` : ""}`);
    for (const [pid, pr] of st.progress) {
      let s = `${pid}: ${pr.state} match=${pr.match} next=${pr.next}`;
      if (pr.isLearner) s += " learner";
      if (pr.pendingSnapshot) s += ` pendingSnap=${pr.pendingSnapshot}`;
      if (pr.inflight) s += ` inflight=${pr.inflight}`;
      this.print(s);
    }
  }
}

export { describeConfChange };
export type { ConfChange };
