/**
 * The consensus driver: runs a Raft core (src/raft) against a durable log, a transport and a state
 * machine, with time from the Clock port.
 *
 * Loop contract (etcd's Ready/Advance): events (ticks, messages, proposals, reads) are queued while a
 * Ready is being handled and stepped together afterwards, so proposals that arrive during an fsync share
 * the next append and fsync (group commit). For each Ready: persist the snapshot, hard state and entries
 * (fsync when the core says it must), THEN send its messages, then apply committed entries, answer reads
 * whose index is applied, and advance.
 */
import {
  type Config as RaftConfig, type ConfChange, type ConfState, type Entry, type Message, type Ready, type Snapshot, type SoftState,
  MemoryStorage, RaftError, RawNode, ErrProposalDropped, ErrProposalTooLarge,
} from "../raft/index.ts";
import { nextTimerTurn } from "../platform/index.ts";
import type { ConsensusNode, ConsensusOptions } from "./node_types.ts";
import type { RecoveredLog } from "./ports.ts";
import { NodeStoppedError, ProposalDroppedError, ProposalTimeoutError, ProposalTooLargeError, StorageFailedError } from "./errors.ts";
import { DEFAULT_MAX_ENTRY_BYTES } from "./limits.ts";
import { RaftMetrics } from "./raft_metrics.ts";
import { ReadIndexBatcher } from "./read_index.ts";
import {
  AppliedProposals, decodeDriverSnapshot, driverSnapshotHead, encodeDriverSnapshot, envelopeCommand, envelopeKey, PROPOSAL_ID_BYTES, ProposalIds, WaiterSet,
} from "./proposals.ts";

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

/** How a snapshot taken here ended (see startSnapshot); `generation` is the log's it was taken from. */
type SnapshotOutcome =
  | { readonly kind: "snapshot-written"; readonly generation: number; readonly meta: Snapshot; readonly bytes: number; readonly bytesCovered: number; readonly startedAt: number }
  | { readonly kind: "snapshot-failed"; readonly generation: number; readonly error: unknown };

/**
 * Whether a log failure is a full disk (or quota): the write that failed left at most a torn tail, which
 * recovery cuts off, so the node can reopen the log in place. Any other failure (EIO from an fsync
 * above all) stops the node: after a failed fsync the page cache may hold bytes the disk lost, and
 * only an operator can tell.
 */
function isDiskFull(err: unknown): boolean {
  const code = (err as { code?: unknown } | undefined)?.code;
  return code === "ENOSPC" || code === "EDQUOT";
}

/** The longest wait between attempts to reopen a failed log. */
const STORAGE_RETRY_MAX_MS = 30_000;

export function createConsensusNode<R>(o: ConsensusOptions<R>): ConsensusNode<R> {
  const log = o.logger;
  const metrics = new RaftMetrics(o.metrics, () => o.clock.monotonic());
  const timeoutMs = o.requestTimeoutMs ?? 5000;
  const snapshotEntries = o.snapshotEntries ?? 8192;
  const keepEntries = o.keepEntries ?? 1024;
  const maxEntryBytes = o.maxEntryBytes ?? DEFAULT_MAX_ENTRY_BYTES;
  let storage = new MemoryStorage();
  /** The durable log; replaced by a reopened one after a storage failure (see failStorage). */
  let logStore = o.log;
  /** Why the log failed, while the node waits to reopen it; requests are refused meanwhile. */
  let storageFailure: Error | undefined;
  const refusal = () => (storageFailure ? new StorageFailedError(storageFailure) : new NodeStoppedError());
  const ids = new ProposalIds(o.rng);
  const appliedProposals = new AppliedProposals();
  const proposals = new WaiterSet<R>(o.clock.setTimer);
  /** Commands this server proposed and is waiting for, by proposal key (see applyEntry). */
  const proposedCommands = new Map<string, Uint8Array>();
  const confChanges = new WaiterSet<ConfState>(o.clock.setTimer);
  const reads = new ReadIndexBatcher({
    clock: o.clock, timeoutMs, contextPrefix: `${o.id}/${ids.incarnation}`, request: (ctx) => enqueue({ kind: "read", ctx }), active: () => !stopped && !storageFailure,
  });
  const leaderListeners: ((leader: string, term: number) => void)[] = [];
  let raw: RawNode | undefined;
  let inbox: Event[] = [];
  let busy = false;
  let stopped = false;
  let stopTicker: (() => void) | undefined;
  let applied = 0;
  let snapshotIndex = 0;
  /** Set when a follower needs a snapshot newer than the latest one (see streamSnapshot). */
  let freshSnapshotWanted = false;
  /** Monotonic time of the last snapshot taken here (start-up counts as one). */
  let lastSnapshotAt = o.clock.monotonic();
  const snapshotIntervalMs = o.snapshotIntervalMs ?? 0;
  const snapshotByteLimit = o.snapshotBytes ?? 64 * 1024 * 1024;
  const keepBytes = o.keepBytes ?? 16 * 1024 * 1024;
  /** Command bytes applied since the last snapshot (the part of the in-memory log a snapshot frees). */
  let appliedBytesSinceSnapshot = 0;
  const snapshotDue = () => {
    if (appliedBytesSinceSnapshot >= snapshotByteLimit) return true;
    const pending = applied - snapshotIndex;
    if (pending < snapshotEntries) return false;
    if (snapshotIntervalMs <= 0 || pending >= snapshotEntries * 8) return true;
    return o.clock.monotonic() - lastSnapshotAt >= snapshotIntervalMs;
  };
  let confState: ConfState | undefined;
  let soft: SoftState = { lead: "", raftState: "Follower" };
  /** Monotonic time of the last message from the current leader (followers' X-Consul-LastContact). */
  let lastLeaderContact: number | undefined;
  /** While leading: monotonic time of the last message from each peer (autopilot's last contact). */
  const peerContact = new Map<string, number>();
  /** Term of the stored entry at `index`, or undefined when it is compacted away or not stored yet. */
  const storedTerm = (index: number): number | undefined => {
    if (index === 0) return 0;
    try {
      return storage.term(index);
    } catch {
      return undefined;
    }
  };
  let loopDone: Promise<void> = Promise.resolve();
  /** The snapshot being taken here (startSnapshot); settles once its outcome is queued for the loop. */
  let snapshotInFlight: Promise<void> | undefined;
  /** Counts log replacements (reopenStorage); a snapshot taken from an older log is dropped. */
  let logGeneration = 0;
  /** One timer turn: lets the event loop run between slices of snapshot work. */
  const pause = () => nextTimerTurn(o.clock);
  /** Snapshot bytes received from a leader, by index, until the core asks us to install them. */
  const receivedSnapshots = new Map<number, Uint8Array>();

  const enqueue = (e: Event) => {
    if (stopped || storageFailure) return;
    inbox.push(e);
    if (!busy) {
      busy = true;
      loopDone = runLoop().catch((err) => {
        if (o.reopenLog && !stopped && isDiskFull(err)) return failStorage(err);
        log.error("consensus loop failed; stopping the node", { error: err });
        void node.stop();
      });
    }
  };

  async function runLoop(): Promise<void> {
    try {
      // Yield once so that events raised in the same turn are batched.
      await Promise.resolve();
      while (!stopped && raw) {
        const batch = inbox;
        inbox = [];
        for (const e of batch) {
          if (e.kind === "bootstrap") e.done(await bootstrapNow(e.voters));
          else if (e.kind === "snapshot-written" || e.kind === "snapshot-failed") await finishSnapshot(e);
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
          metrics.ticked(storage.lastIndex(), applied, o.clock.monotonic(), soft.raftState === "Leader" ? peerContact : undefined);
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
    if (rd.snapshot) await installSnapshot(rd.snapshot);
    // A leader whose term and vote are already durable sends before its own fsync, so followers
    // write in parallel with it (Raft thesis 10.2.1; etcd's server does the same). Safe here: the
    // acks that could commit these entries are stepped only after this Ready, i.e. after the fsync,
    // and a fresh term or vote (a new leader's first Ready) is always persisted before any send.
    const durableTerm = storage.initialState().hardState;
    const sendEarly = soft.raftState === "Leader" && !rd.snapshot &&
      (!rd.hardState || (rd.hardState.term === durableTerm.term && rd.hardState.vote === durableTerm.vote));
    if (sendEarly) sendMessages(rd.messages);
    if (rd.hardState || rd.entries.length) {
      const startedAt = o.clock.monotonic();
      logStore.save(rd.hardState, rd.entries);
      if (rd.entries.length) storage.append(rd.entries);
      if (rd.hardState) storage.setHardState(rd.hardState);
      if (rd.mustSync) {
        const syncStart = o.clock.monotonic();
        await logStore.sync();
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
    reads.answer(applied);
    r.advance();
    if (applied > snapshotIndex && (freshSnapshotWanted || snapshotDue())) startSnapshot();
  }

  function sendMessages(messages: readonly Message[]): void {
    for (const m of messages) {
      if (m.type === "MsgSnap") streamSnapshot(m);
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

  /** The Raft core's config, kept to rebuild the core after a late bootstrap. */
  let raftConfig: RaftConfig | undefined;
  const makeRaw = () => (o.createRawNode ? o.createRawNode({ ...raftConfig!, applied }) : new RawNode({ ...raftConfig!, applied }));

  /** The first configuration of a new cluster: the same snapshot (index 1, term 1) on every bootstrapping server. */
  function bootstrapSnapshot(voters: readonly string[]): Snapshot {
    return { index: 1, term: 1, confState: { voters: [...voters].sort(), learners: [], votersOutgoing: [], learnersNext: [], autoLeave: false } };
  }

  /**
   * Bootstraps a node that started with an empty log, unless it has heard from a cluster meanwhile
   * (any term, entry or snapshot): then that cluster's leader brings it in and bootstrapping would fork.
   */
  async function bootstrapNow(voters: readonly string[]): Promise<boolean> {
    const st = raw!.status();
    if (st.lastIndex > 0 || st.hardState.term > 0 || snapshotIndex > 0 || voters.length === 0) return false;
    const meta = bootstrapSnapshot(voters);
    await logStore.saveSnapshot(meta, snapshotBytes());
    if (stopped) return false;
    storage.applySnapshot(meta);
    applied = snapshotIndex = meta.index;
    confState = meta.confState;
    raw = makeRaw();
    log.info("bootstrapped a new cluster", { voters: meta.confState.voters.join(",") });
    return true;
  }

  function applyEntry(r: RawNode, e: Entry): void {
    if (e.index <= applied) return;
    if (e.type === "ConfChange") {
      // A duplicated conf change is treated as a no-op: not applying it is what etcd's contract asks
      // for a rejected change, and applying an old AddLearner again would demote a promoted voter.
      const id = e.change.context;
      if (!id || appliedProposals.firstTime(id, e.index)) {
        confState = r.applyConfChange(e.change);
        const key = id ? envelopeKey(id) : undefined;
        if (key) confChanges.resolve(key, confState);
      }
    } else if (e.data.length > 0 && appliedProposals.firstTime(e.data, e.index)) {
      appliedBytesSinceSnapshot += e.data.length;
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
    applied = e.index;
  }

  /** The bytes of a snapshot at the current applied index: the dedup table and the state machine. */
  function snapshotBytes(): Uint8Array {
    return encodeDriverSnapshot(appliedProposals.encode(), o.stateMachine.snapshot());
  }

  function restoreFrom(data: Uint8Array): void {
    const { table, machine } = decodeDriverSnapshot(data);
    appliedProposals.restore(table);
    o.stateMachine.restore(machine);
  }

  async function installSnapshot(meta: Snapshot): Promise<void> {
    // One snapshot file written at a time; the one taken here is dropped when its outcome comes.
    if (snapshotInFlight) await snapshotInFlight;
    const data = receivedSnapshots.get(meta.index);
    if (!data) throw new Error(`core asked to install snapshot ${meta.index} whose bytes were never received`);
    for (const k of [...receivedSnapshots.keys()]) if (k <= meta.index) receivedSnapshots.delete(k);
    await logStore.saveSnapshot(meta, data);
    if (stopped) return;
    storage.applySnapshot(meta);
    restoreFrom(data);
    applied = meta.index;
    snapshotIndex = meta.index;
    confState = meta.confState;
    log.info("installed snapshot from leader", { index: meta.index, term: meta.term, bytes: data.length });
  }

  /** Sends the snapshot a MsgSnap names; its file is read without blocking the loop. */
  function streamSnapshot(m: Message & { type: "MsgSnap" }): void {
    log.debug("streaming snapshot", { to: m.to, index: m.snapshot.index });
    const cs = m.snapshot.confState;
    if (![...cs.voters, ...cs.learners, ...cs.votersOutgoing].includes(m.to)) {
      // A server added after this snapshot would refuse it (Raft cores only restore snapshots that
      // name them). Take a fresh one, which includes the applied membership change, and let the core retry.
      freshSnapshotWanted = true;
      enqueue({ kind: "snapshot-status", to: m.to, ok: false });
      return;
    }
    const failed = () => enqueue({ kind: "snapshot-status", to: m.to, ok: false });
    logStore.readSnapshot().then((snap) => {
      // A newer snapshot may have replaced it meanwhile: the core asks again with that one.
      if (!snap || snap.meta.index !== m.snapshot.index) return failed();
      return o.transport.sendSnapshot(m.to, m, snap.data).then((ok) => enqueue({ kind: "snapshot-status", to: m.to, ok }));
    }).catch((err) => {
      log.error("could not stream a snapshot to a follower", { to: m.to, index: m.snapshot.index, error: err });
      failed();
    });
  }

  /** The lowest index from which the entries up to `upTo` hold at most keepBytes (never past `upTo`). */
  function firstKeptByBytes(upTo: number): number {
    let bytes = 0;
    let i = upTo;
    while (i > storage.firstIndex()) {
      const e = storage.entries(i, i + 1, Infinity)[0]!;
      bytes += e.type === "ConfChange" ? 0 : e.data.length;
      if (bytes > keepBytes && i < upTo) break;
      i--;
    }
    return i;
  }

  /**
   * Takes a snapshot at the applied index without stopping the loop: the state is captured now, then
   * encoded in slices (pauses of one timer turn between them), checksummed and written to its file off
   * the loop; the loop then records it in the log and compacts (finishSnapshot). One at a time.
   */
  function startSnapshot(): void {
    if (snapshotInFlight) return;
    const term = storedTerm(applied);
    if (term === undefined || !confState) return;
    freshSnapshotWanted = false;
    const startedAt = o.clock.monotonic();
    const meta: Snapshot = { index: applied, term, confState };
    const bytesCovered = appliedBytesSinceSnapshot;
    const head = driverSnapshotHead(appliedProposals.encode());
    const machine = o.stateMachine.snapshotInSlices ? o.stateMachine.snapshotInSlices(pause) : Promise.resolve([o.stateMachine.snapshot()]);
    const store = logStore;
    const generation = logGeneration;
    snapshotInFlight = machine
      .then(async (parts): Promise<SnapshotOutcome> => {
        const all = [head, ...parts];
        // Not for a log that was replaced, nor after stop (its directory may be gone).
        if (generation === logGeneration && !stopped) {
          const writeStart = o.clock.monotonic();
          await store.writeSnapshot(meta, all, pause);
          metrics.snapshotPersist.observe(o.clock.monotonic() - writeStart);
        }
        return { kind: "snapshot-written", generation, meta, bytesCovered, bytes: all.reduce((n, p) => n + p.length, 0), startedAt };
      })
      .catch((error): SnapshotOutcome => ({ kind: "snapshot-failed", generation, error }))
      .then(enqueue);
  }

  /** Records a snapshot written by startSnapshot in the log and compacts (a loop event). */
  async function finishSnapshot(e: SnapshotOutcome): Promise<void> {
    snapshotInFlight = undefined;
    if (e.generation !== logGeneration) return;
    if (e.kind === "snapshot-failed") throw e.error;
    // A snapshot installed from the leader meanwhile is newer: this one is not needed.
    if (e.meta.index <= snapshotIndex) return;
    storage.createSnapshot(e.meta.index, e.meta.confState);
    await logStore.recordSnapshot(e.meta);
    snapshotIndex = e.meta.index;
    lastSnapshotAt = o.clock.monotonic();
    appliedBytesSinceSnapshot = Math.max(0, appliedBytesSinceSnapshot - e.bytesCovered);
    const compactTo = Math.max(e.meta.index - keepEntries, firstKeptByBytes(e.meta.index));
    if (compactTo > storage.firstIndex()) {
      storage.compact(compactTo);
      logStore.compact(compactTo);
    }
    metrics.snapshotTake.observe(lastSnapshotAt - e.startedAt);
    log.info("took snapshot", { index: e.meta.index, bytes: e.bytes, compactedTo: storage.firstIndex() - 1 });
  }

  /**
   * Loads what the log recovered into the in-memory log and the state machine (from its snapshot; the
   * core then hands back the committed entries after it), as at start-up.
   */
  function loadDurable(initial: RecoveredLog): void {
    if (initial.snapshot.index > 0) {
      storage.applySnapshot(initial.snapshot);
      const snap = logStore.loadSnapshot();
      if (!snap || snap.meta.index !== initial.snapshot.index) throw new Error(`snapshot ${initial.snapshot.index} is recorded in the log but its file is missing`);
      restoreFrom(snap.data);
      applied = snapshotIndex = initial.snapshot.index;
      confState = initial.snapshot.confState;
    }
    // A snapshot holds only committed state, so the commit index is at least its index even when the
    // hard state that said so was not synced before a crash (commit-only updates need no fsync).
    const hs = initial.hardState;
    storage.setHardState(hs.commit < initial.snapshot.index ? { ...hs, commit: initial.snapshot.index } : hs);
    if (initial.entries.length) storage.append(initial.entries);
  }

  let cancelReopen: (() => void) | undefined;
  /**
   * The disk is full: what the log holds in memory may not be what reached the disk, so
   * the node stops taking part (no ticks, votes or acks; requests refused with StorageFailedError) and
   * retries reopenStorage with backoff. Like a restart, but the process and its listeners stay up.
   */
  function failStorage(err: unknown): void {
    storageFailure = err instanceof Error ? err : new Error(String(err));
    const term = raw?.status().hardState.term ?? 0;
    raw = undefined;
    stopTicker?.();
    stopTicker = undefined;
    inbox = [];
    receivedSnapshots.clear();
    const refuse = () => new StorageFailedError(storageFailure!);
    proposals.rejectAll(refuse);
    confChanges.rejectAll(refuse);
    reads.rejectAll(refuse);
    noteSoftState({ lead: "", raftState: "Follower" }, term);
    try {
      logStore.close();
    } catch {
      // already failed; the reopened log reads what reached the disk
    }
    scheduleReopen(0);
  }

  function scheduleReopen(attempt: number): void {
    const delay = Math.min(STORAGE_RETRY_MAX_MS, (o.storageRetryMs ?? 1000) * 2 ** attempt);
    log.error("raft log failed: this server takes no part in the cluster and refuses requests until it can write again", {
      error: storageFailure!.message, retryInMs: delay,
    });
    cancelReopen = o.clock.setTimer(delay, () => void reopenStorage(attempt));
  }

  /** Reopens the log and starts again from what is durable (snapshot, then the committed entries after it). */
  async function reopenStorage(attempt: number): Promise<void> {
    cancelReopen = undefined;
    if (stopped) return;
    // A snapshot still being written belongs to the failed log: let it end, then drop its outcome.
    if (snapshotInFlight) await snapshotInFlight;
    snapshotInFlight = undefined;
    logGeneration++;
    if (stopped) return;
    try {
      logStore = o.reopenLog!();
      const rec = logStore.recover();
      if (rec.snapshot.index === 0 && applied > 0) throw new Error("the durable log has no snapshot to rebuild the applied state from");
      storage = new MemoryStorage();
      applied = snapshotIndex = 0;
      appliedBytesSinceSnapshot = 0;
      loadDurable(rec);
      raftConfig = { ...raftConfig!, storage, applied };
      await logStore.sync();
      if (stopped) return;
      storageFailure = undefined;
      raw = makeRaw();
      stopTicker = o.clock.setInterval(o.tickMs ?? 100, () => enqueue({ kind: "tick" }));
      log.info("raft log writable again: rejoined from the durable log", { snapshot: rec.snapshot.index, entries: rec.entries.length, term: rec.hardState.term });
    } catch (err) {
      try {
        logStore.close();
      } catch {
        // nothing more to release
      }
      storageFailure = err instanceof Error ? err : new Error(String(err));
      scheduleReopen(attempt + 1);
    }
  }

  const node: ConsensusNode<R> = {
    async start() {
      const rec = logStore.recover();
      let initial = rec;
      if (rec.snapshot.index === 0 && rec.entries.length === 0 && rec.hardState.term === 0 && o.bootstrapVoters?.length) {
        // A new cluster: every bootstrapping server starts from the same snapshot at index 1, term 1,
        // holding the initial voters and the empty state.
        const meta = bootstrapSnapshot(o.bootstrapVoters);
        await logStore.saveSnapshot(meta, snapshotBytes());
        initial = { ...rec, snapshot: meta };
      }
      loadDurable(initial);
      raftConfig = {
        id: o.id,
        storage,
        applied,
        electionTick: o.electionTicks ?? 10,
        heartbeatTick: o.heartbeatTicks ?? 1,
        maxInflightMsgs: o.maxInflightMsgs ?? 256,
        maxSizePerMsg: o.maxSizePerMsg ?? 1024 * 1024,
        maxEntryBytes,
        checkQuorum: true,
        preVote: true,
        rng: o.rng,
      };
      // What recovery read may have been only in the page cache (a process crash keeps it); make it
      // durable before any message can acknowledge it.
      await logStore.sync();
      raw = makeRaw();
      o.transport.onMessage((msg) => enqueue({ kind: "message", msg }));
      o.transport.onSnapshot((msg, data) => {
        if (storageFailure) return;
        log.debug("received snapshot", { from: msg.from, index: msg.snapshot.index, bytes: data.length });
        receivedSnapshots.set(msg.snapshot.index, data);
        enqueue({ kind: "message", msg });
      });
      stopTicker = o.clock.setInterval(o.tickMs ?? 100, () => enqueue({ kind: "tick" }));
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
        applied,
        lastIndex: s?.lastIndex ?? 0,
        lastLogTerm: storedTerm(storage.lastIndex()) ?? 0,
        config: s?.config ?? { voters: [], learners: [], votersOutgoing: [], learnersNext: [], autoLeave: false },
      };
    },
    progress(id) {
      const p = raw?.status().progress.get(id);
      if (!p) return undefined;
      if (id === o.id) return { match: p.match, isLearner: p.isLearner, matchTerm: storedTerm(p.match), lastContactMs: 0 };
      const heard = peerContact.get(id);
      return { match: p.match, isLearner: p.isLearner, matchTerm: storedTerm(p.match), lastContactMs: heard === undefined ? undefined : o.clock.monotonic() - heard };
    },
    onLeaderChange: (fn) => void leaderListeners.push(fn),
    async stop() {
      if (stopped) return;
      stopped = true;
      stopTicker?.();
      cancelReopen?.();
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
