/**
 * The consensus driver: runs a Raft core (src/raft) against a durable log, a transport and a state
 * machine, with time from the Clock port. This file is the driver's loop and lifecycle; the parts it
 * drives are the replica (replica.ts: in-memory log, durable log, applied state), ReadIndex batching
 * (read_index.ts), snapshots taken here (snapshot_taker.ts) and sent or received (snapshot_transfer.ts),
 * and the wait for space after a full disk (storage_outage.ts).
 *
 * Loop contract (etcd's Ready/Advance): events (ticks, messages, proposals, reads) are queued while a
 * Ready is being handled and stepped together afterwards, so proposals that arrive during an fsync share
 * the next append and fsync (group commit). For each Ready: persist the snapshot, hard state and entries
 * (fsync when the core says it must), THEN send its messages, then apply committed entries, answer reads
 * whose index is applied, and advance.
 */
import {
  type Config as RaftConfig, type ConfChange, type ConfState, type Entry, type Message, type Ready, type SoftState,
  RaftError, RawNode, ErrProposalDropped, ErrProposalTooLarge,
} from "../raft/index.ts";
import type { ConsensusNode, ConsensusOptions } from "./node_types.ts";
import { NodeStoppedError, ProposalDroppedError, ProposalTimeoutError, ProposalTooLargeError, StorageFailedError } from "./errors.ts";
import { DEFAULT_MAX_ENTRY_BYTES } from "./limits.ts";
import { envelopeCommand, envelopeKey, PROPOSAL_ID_BYTES, ProposalIds, WaiterSet } from "./proposals.ts";
import { RaftMetrics } from "./raft_metrics.ts";
import { ReadIndexBatcher } from "./read_index.ts";
import { bootstrapSnapshot, Replica } from "./replica.ts";
import { snapshotLimits } from "./snapshot_policy.ts";
import { SnapshotTaker, type SnapshotOutcome } from "./snapshot_taker.ts";
import { SnapshotTransfer } from "./snapshot_transfer.ts";
import { StorageOutage } from "./storage_outage.ts";

type Event =
  | { readonly kind: "tick" }
  | { readonly kind: "message"; readonly msg: Message }
  | { readonly kind: "propose"; readonly data: Uint8Array; readonly key: string }
  | { readonly kind: "confchange"; readonly cc: ConfChange; readonly key: string }
  | { readonly kind: "read"; readonly ctx: string }
  | { readonly kind: "snapshot-status"; readonly to: string; readonly ok: boolean }
  | { readonly kind: "campaign" }
  | { readonly kind: "transfer"; readonly to: string }
  | { readonly kind: "bootstrap"; readonly voters: readonly string[]; readonly done: (ok: boolean) => void }
  | SnapshotOutcome;

/** Entries that carry a command (not the empty entry of a new term, nor a configuration change). */
function countCommands(entries: readonly Entry[]): number {
  let n = 0;
  for (const e of entries) if (e.type !== "ConfChange" && e.data.length > 0) n++;
  return n;
}

export function createConsensusNode<R>(o: ConsensusOptions<R>): ConsensusNode<R> {
  const log = o.logger;
  const metrics = new RaftMetrics(o.metrics, () => o.clock.monotonic());
  const timeoutMs = o.requestTimeoutMs ?? 5000;
  const maxEntryBytes = o.maxEntryBytes ?? DEFAULT_MAX_ENTRY_BYTES;
  const replica = new Replica(o.log, o.stateMachine);
  const refusal = () => (outage.failure ? new StorageFailedError(outage.failure) : new NodeStoppedError());
  const ids = new ProposalIds(o.rng);
  const proposals = new WaiterSet<R>(o.clock.setTimer);
  /** Commands this server proposed and is waiting for, by proposal key (see applyEntry). */
  const proposedCommands = new Map<string, Uint8Array>();
  const confChanges = new WaiterSet<ConfState>(o.clock.setTimer);
  const reads = new ReadIndexBatcher({
    clock: o.clock, timeoutMs, contextPrefix: `${o.id}/${ids.incarnation}`, request: (ctx) => enqueue({ kind: "read", ctx }), active: () => !stopped && !outage.failure,
  });
  const leaderListeners: ((leader: string, term: number) => void)[] = [];
  let raw: RawNode | undefined;
  let inbox: Event[] = [];
  let busy = false;
  let stopped = false;
  let stopTicker: (() => void) | undefined;
  let soft: SoftState = { lead: "", raftState: "Follower" };
  /** Monotonic time of the last message from the current leader (followers' X-Consul-LastContact). */
  let lastLeaderContact: number | undefined;
  /** While leading: monotonic time of the last message from each peer (autopilot's last contact). */
  const peerContact = new Map<string, number>();
  let loopDone: Promise<void> = Promise.resolve();

  const enqueue = (e: Event) => {
    if (stopped || outage.failure) return;
    inbox.push(e);
    if (!busy) {
      busy = true;
      loopDone = runLoop().catch((err) => {
        if (outage.begin(err)) return;
        log.error("consensus loop failed; stopping the node", { error: err });
        void node.stop();
      });
    }
  };
  const isStopped = () => stopped;
  const snapshots = new SnapshotTaker(replica, { clock: o.clock, logger: log, metrics, limits: snapshotLimits(o), deliver: enqueue, stopped: isStopped });
  const transfer = new SnapshotTransfer(replica, snapshots, {
    logger: log, transport: o.transport, report: (to, ok) => enqueue({ kind: "snapshot-status", to, ok }), stopped: isStopped,
  });
  const outage = new StorageOutage(replica, snapshots, {
    clock: o.clock, logger: log, reopenLog: o.reopenLog, retryMs: o.storageRetryMs ?? 1000, stopped: isStopped, detach, resume,
  });

  async function runLoop(): Promise<void> {
    try {
      // Yield once so that events raised in the same turn are batched.
      await Promise.resolve();
      while (!stopped && raw) {
        const batch = inbox;
        inbox = [];
        for (const e of batch) {
          if (e.kind === "bootstrap") e.done(await bootstrapNow(e.voters));
          else if (e.kind === "snapshot-written" || e.kind === "snapshot-failed") await snapshots.finish(e);
          else stepEvent(raw, e);
        }
        if (!raw.hasReady()) {
          if (inbox.length === 0) break;
          continue;
        }
        await handleReady(raw, raw.ready());
      }
    } finally {
      busy = false;
    }
  }

  function stepEvent(r: RawNode, e: Event): void {
    try {
      switch (e.kind) {
        case "tick":
          r.tick();
          metrics.ticked(replica.storage.lastIndex(), replica.applied, o.clock.monotonic(), soft.raftState === "Leader" ? peerContact : undefined);
          return;
        case "message":
          r.step(e.msg);
          if (e.msg.from === soft.lead && e.msg.from !== o.id) lastLeaderContact = o.clock.monotonic();
          if (soft.raftState === "Leader" && e.msg.from !== o.id) peerContact.set(e.msg.from, o.clock.monotonic());
          return;
        case "propose":
          // The proposal's key is its context: a leader that refuses it for its size names it back.
          r.propose(e.data, e.key);
          return;
        case "confchange":
          r.proposeConfChange(e.cc);
          return;
        case "read":
          r.readIndex(e.ctx);
          return;
        case "snapshot-status":
          r.reportSnapshot(e.to, e.ok ? "Finish" : "Failure");
          return;
        case "campaign":
          r.campaign();
          return;
        case "transfer":
          r.transferLeadership(e.to);
          return;
      }
    } catch (err) {
      if (!(err instanceof RaftError)) throw err;
      if (e.kind === "propose") proposals.reject(e.key, err instanceof ErrProposalTooLarge ? new ProposalTooLargeError(err.size, err.limit) : new ProposalDroppedError(err.message));
      else if (e.kind === "confchange") confChanges.reject(e.key, new ProposalDroppedError(err.message));
      else if (err instanceof ErrProposalDropped) log.debug("dropped", { event: e.kind, reason: err.message });
      else log.debug("step refused", { event: e.kind, reason: err.message });
    }
  }

  async function handleReady(r: RawNode, rd: Ready): Promise<void> {
    if (rd.softState) noteSoftState(rd.softState, rd.hardState?.term ?? r.status().hardState.term);
    if (rd.snapshot) await transfer.install(rd.snapshot);
    // A leader whose term and vote are already durable sends before its own fsync, so followers
    // write in parallel with it (Raft thesis 10.2.1; etcd's server does the same). Safe here: the
    // acks that could commit these entries are stepped only after this Ready, i.e. after the fsync,
    // and a fresh term or vote (a new leader's first Ready) is always persisted before any send.
    const durableTerm = replica.storage.initialState().hardState;
    const sendEarly = soft.raftState === "Leader" && !rd.snapshot &&
      (!rd.hardState || (rd.hardState.term === durableTerm.term && rd.hardState.vote === durableTerm.vote));
    if (sendEarly) sendMessages(rd.messages);
    if (rd.hardState || rd.entries.length) {
      const startedAt = o.clock.monotonic();
      replica.log.save(rd.hardState, rd.entries);
      if (rd.entries.length) replica.storage.append(rd.entries);
      if (rd.hardState) replica.storage.setHardState(rd.hardState);
      if (rd.mustSync) {
        const syncStart = o.clock.monotonic();
        await replica.log.sync();
        metrics.logSync.observe(o.clock.monotonic() - syncStart);
      }
      const n = rd.entries.length;
      if (n) metrics.stored(soft.raftState === "Leader", n, countCommands(rd.entries), rd.entries[n - 1]!.index, startedAt, o.clock.monotonic() - startedAt);
    }
    if (stopped) return;
    if (!sendEarly) sendMessages(rd.messages);
    const committed = rd.committedEntries.length;
    if (committed) metrics.committed(soft.raftState === "Leader", committed, rd.committedEntries[committed - 1]!.index, o.clock.monotonic());
    for (const e of rd.committedEntries) applyEntry(r, e);
    for (const rs of rd.readStates) reads.confirm(rs.index, rs.requestCtx);
    for (const p of rd.refusedProposals) proposals.reject(p.context, new ProposalTooLargeError(p.size, p.limit));
    reads.answer(replica.applied);
    r.advance();
    snapshots.maybeStart();
  }

  function sendMessages(messages: readonly Message[]): void {
    for (const m of messages) {
      if (m.type === "MsgSnap") transfer.send(m);
      else o.transport.send(m);
    }
  }

  function noteSoftState(s: SoftState, term: number): void {
    const changed = s.lead !== soft.lead;
    if (s.raftState !== soft.raftState) metrics.roleEntered(s.raftState);
    // Contact heard before this leadership says nothing about the followers of this one.
    if (s.raftState === "Leader" && soft.raftState !== "Leader") peerContact.clear();
    soft = s;
    if (changed) {
      log.info("leader changed", { leader: s.lead || "(none)", term, role: s.raftState });
      for (const fn of leaderListeners) fn(s.lead, term);
    }
  }

  /** A Raft core over the replica's log as of its applied index (at start, after a late bootstrap, after a reopen). */
  function makeRaw(): RawNode {
    const config: RaftConfig = {
      id: o.id,
      storage: replica.storage,
      applied: replica.applied,
      electionTick: o.electionTicks ?? 10,
      heartbeatTick: o.heartbeatTicks ?? 1,
      maxInflightMsgs: o.maxInflightMsgs ?? 256,
      maxSizePerMsg: o.maxSizePerMsg ?? 1024 * 1024,
      maxEntryBytes,
      checkQuorum: true,
      preVote: true,
      rng: o.rng,
    };
    return o.createRawNode ? o.createRawNode(config) : new RawNode(config);
  }

  const startTicker = () => o.clock.setInterval(o.tickMs ?? 100, () => enqueue({ kind: "tick" }));

  /**
   * Bootstraps a node that started with an empty log, unless it has heard from a cluster meanwhile
   * (any term, entry or snapshot): then that cluster's leader brings it in and bootstrapping would fork.
   */
  async function bootstrapNow(voters: readonly string[]): Promise<boolean> {
    const st = raw!.status();
    if (st.lastIndex > 0 || st.hardState.term > 0 || replica.snapshotIndex > 0 || voters.length === 0) return false;
    const meta = bootstrapSnapshot(voters);
    await replica.log.saveSnapshot(meta, replica.snapshotBytes());
    if (stopped) return false;
    replica.adopt(meta);
    raw = makeRaw();
    log.info("bootstrapped a new cluster", { voters: meta.confState.voters.join(",") });
    return true;
  }

  function applyEntry(r: RawNode, e: Entry): void {
    if (e.index <= replica.applied) return;
    if (e.type === "ConfChange") {
      // A duplicated conf change is treated as a no-op: not applying it is what etcd's contract asks
      // for a rejected change, and applying an old AddLearner again would demote a promoted voter.
      const id = e.change.context;
      if (!id || replica.appliedProposals.firstTime(id, e.index)) {
        replica.confState = r.applyConfChange(e.change);
        const key = id ? envelopeKey(id) : undefined;
        if (key) confChanges.resolve(key, replica.confState);
      }
    } else if (e.data.length > 0 && replica.appliedProposals.firstTime(e.data, e.index)) {
      snapshots.noteApplied(e.data.length);
      const key = envelopeKey(e.data);
      // The proposer's own command object when this server proposed it (the same bytes), so a state
      // machine that already decoded it (keyed by the object) need not decode it again.
      const own = key ? proposedCommands.get(key) : undefined;
      if (own) proposedCommands.delete(key!);
      const startedAt = o.clock.monotonic();
      const result = o.stateMachine.apply(e.index, own ?? envelopeCommand(e.data));
      metrics.fsmApplied(o.clock.monotonic() - startedAt);
      if (key) proposals.resolve(key, result);
    }
    replica.applied = e.index;
  }

  /** For a storage outage: stops taking part until `resume` (see StorageOutageOptions.detach). */
  function detach(refuse: () => Error): void {
    const term = raw?.status().hardState.term ?? 0;
    raw = undefined;
    stopTicker?.();
    stopTicker = undefined;
    inbox = [];
    transfer.clear();
    proposals.rejectAll(refuse);
    confChanges.rejectAll(refuse);
    reads.rejectAll(refuse);
    noteSoftState({ lead: "", raftState: "Follower" }, term);
  }

  /** After a storage outage, over the reloaded replica. */
  function resume(): void {
    raw = makeRaw();
    stopTicker = startTicker();
  }

  const node: ConsensusNode<R> = {
    async start() {
      const rec = replica.log.recover();
      let initial = rec;
      if (rec.snapshot.index === 0 && rec.entries.length === 0 && rec.hardState.term === 0 && o.bootstrapVoters?.length) {
        // A new cluster: every bootstrapping server starts from the same snapshot at index 1, term 1,
        // holding the initial voters and the empty state.
        const meta = bootstrapSnapshot(o.bootstrapVoters);
        await replica.log.saveSnapshot(meta, replica.snapshotBytes());
        initial = { ...rec, snapshot: meta };
      }
      replica.load(initial);
      // What recovery read may have been only in the page cache (a process crash keeps it); make it
      // durable before any message can acknowledge it.
      await replica.log.sync();
      raw = makeRaw();
      o.transport.onMessage((msg) => enqueue({ kind: "message", msg }));
      o.transport.onSnapshot((msg, data) => {
        if (outage.failure) return;
        transfer.received(msg, data);
        enqueue({ kind: "message", msg });
      });
      stopTicker = startTicker();
      log.info("consensus node started", { id: o.id, snapshot: initial.snapshot.index, entries: initial.entries.length, term: initial.hardState.term });
    },
    maxCommandBytes: maxEntryBytes - PROPOSAL_ID_BYTES,
    propose(command) {
      if (stopped || !raw) return Promise.reject(refusal());
      // Refused here, before it could reach any log: the same check the Raft core makes on every node.
      const size = PROPOSAL_ID_BYTES + command.length;
      if (size > maxEntryBytes) return Promise.reject(new ProposalTooLargeError(size, maxEntryBytes));
      const { data, key } = ids.wrap(command);
      const p = proposals.add(key, timeoutMs, () => new ProposalTimeoutError(timeoutMs));
      proposedCommands.set(key, command);
      p.catch(() => proposedCommands.delete(key));
      enqueue({ kind: "propose", data, key });
      return p;
    },
    read() {
      if (stopped || !raw) return Promise.reject(refusal());
      return reads.read();
    },
    changeMembership(cc) {
      if (stopped || !raw) return Promise.reject(refusal());
      // The context carries a proposal id, for the waiter and for applying each change once.
      const { data: id, key } = ids.wrap(new Uint8Array());
      const p = confChanges.add(key, timeoutMs, () => new ProposalTimeoutError(timeoutMs));
      enqueue({ kind: "confchange", cc: { ...cc, context: id }, key });
      return p;
    },
    bootstrap(voters) {
      if (stopped || !raw) return Promise.resolve(false);
      return new Promise<boolean>((done) => enqueue({ kind: "bootstrap", voters, done }));
    },
    campaign: () => enqueue({ kind: "campaign" }),
    transferLeadership: (to) => enqueue({ kind: "transfer", to }),
    status() {
      const s = raw?.status();
      return {
        id: o.id,
        leader: soft.lead,
        role: soft.raftState,
        lastLeaderContactMs:
          soft.raftState === "Leader" ? 0 : soft.lead && lastLeaderContact !== undefined ? o.clock.monotonic() - lastLeaderContact : undefined,
        term: s?.hardState.term ?? 0,
        commit: s?.hardState.commit ?? 0,
        applied: replica.applied,
        lastIndex: s?.lastIndex ?? 0,
        lastLogTerm: replica.storedTerm(replica.storage.lastIndex()) ?? 0,
        config: s?.config ?? { voters: [], learners: [], votersOutgoing: [], learnersNext: [], autoLeave: false },
      };
    },
    progress(id) {
      const p = raw?.status().progress.get(id);
      if (!p) return undefined;
      const matchTerm = replica.storedTerm(p.match);
      if (id === o.id) return { match: p.match, isLearner: p.isLearner, matchTerm, lastContactMs: 0 };
      const heard = peerContact.get(id);
      return { match: p.match, isLearner: p.isLearner, matchTerm, lastContactMs: heard === undefined ? undefined : o.clock.monotonic() - heard };
    },
    onLeaderChange: (fn) => void leaderListeners.push(fn),
    async stop() {
      if (stopped) return;
      stopped = true;
      stopTicker?.();
      outage.cancel();
      inbox = [];
      // The loop notices `stopped` at its next step; waiting for it could hang on a dead disk.
      void loopDone;
      proposals.rejectAll(() => new NodeStoppedError());
      confChanges.rejectAll(() => new NodeStoppedError());
      reads.rejectAll(() => new NodeStoppedError());
    },
  };
  return node;
}
