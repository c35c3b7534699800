import type { Config } from "./config.ts";
import { ErrStepLocalMsg, ErrStepPeerNotFound, RaftError } from "./errors.ts";
import type { ProgressState } from "./progress.ts";
import { Raft } from "./raft.ts";
import type {
  ConfChange, ConfState, Entry, HardState, Message, ReadState, RefusedProposal, Snapshot, SoftState,
} from "./types.ts";
import { isLocalMsg, isResponseMsg, NONE } from "./types.ts";

/**
 * A batch of work for the driver (etcd Ready). Handle it in this order:
 * 1. Persist `hardState`, `entries` (appending, after truncating any conflicting suffix) and `snapshot`
 *    (if set: the driver already holds its bytes, see MsgSnap) — durably if `mustSync`.
 * 2. Send `messages`. NONE of them may be sent before step 1 completes (votes and acks promise durable
 *    state). A MsgSnap message tells the driver to stream the snapshot named by its metadata to
 *    `msg.to` out of band, then to call `reportSnapshot(to, ...)` with the outcome.
 * 3. Apply `committedEntries` in order (for ConfChange entries call `applyConfChange`), serve
 *    `readStates` once applied >= readState.index.
 * 4. Call `advance()`. Only then may `ready()` be called again.
 */
export interface Ready {
  /** Set when leader or role changed since the last Ready. */
  readonly softState?: SoftState;
  /** Set when term, vote or commit changed since the last Ready. */
  readonly hardState?: HardState;
  readonly readStates: readonly ReadState[];
  /**
   * This node's proposals (by the context given to `propose`) that another node refused for their size:
   * they will never be appended, so their waiters can be failed at once.
   */
  readonly refusedProposals: readonly RefusedProposal[];
  /** Entries to append to stable storage. */
  readonly entries: readonly Entry[];
  /** Snapshot metadata to persist/install (follower received a MsgSnap). */
  readonly snapshot?: Snapshot;
  /** Committed entries to apply (they may overlap `entries` of this batch: persist first). */
  readonly committedEntries: readonly Entry[];
  readonly messages: readonly Message[];
  /** Whether hardState/entries must be fsynced before sending messages. */
  readonly mustSync: boolean;
}

/** Leader-side replication status of one peer. */
export interface ProgressStatus {
  readonly match: number;
  readonly next: number;
  readonly state: ProgressState;
  readonly isLearner: boolean;
  readonly recentActive: boolean;
  readonly pendingSnapshot: number;
  readonly inflight: number;
}

/**
 * Node status. `progress` is filled only on the leader: an application decides whether a learner
 * has caught up (before proposing its promotion) by comparing `progress.get(id).match` with the
 * leader's last index.
 */
export interface Status {
  readonly id: string;
  readonly hardState: HardState;
  readonly softState: SoftState;
  readonly applied: number;
  readonly lastIndex: number;
  readonly leadTransferee: string;
  readonly config: ConfState;
  readonly progress: ReadonlyMap<string, ProgressStatus>;
}

export type SnapshotStatus = "Finish" | "Failure";

/**
 * The driver's handle on a Raft node (etcd RawNode). Not thread-safe, synchronous, deterministic.
 *
 * Errors: `propose`/`proposeConfChange`/`step` throw `ErrProposalDropped` if a proposal is dropped
 * (no leader, transfer in progress, ...); `step` throws `ErrStepLocalMsg` for local message types and
 * `ErrStepPeerNotFound` for responses from unknown peers. Drivers may drop the message on RaftError.
 */
export class RawNode {
  readonly raft: Raft;
  private prevSoftState: SoftState;
  private prevHardState: HardState;
  private inFlight: Ready | undefined;

  /** Builds a node from a Config, or wraps an existing Raft (tests inject subclasses this way). */
  constructor(configOrRaft: Config | Raft) {
    this.raft = configOrRaft instanceof Raft ? configOrRaft : new Raft(configOrRaft);
    this.prevSoftState = this.raft.softState();
    this.prevHardState = this.raft.hardState();
  }

  /** Advances logical time by one tick (election / heartbeat timers). */
  tick(): void {
    this.raft.tick();
  }

  /** Starts an election now (with pre-vote if configured). */
  campaign(): void {
    this.raft.step({ type: "MsgHup", from: this.raft.id, to: NONE, term: 0 });
  }

  /**
   * Proposes application data. Throws ErrProposalDropped if it cannot be accepted (ErrProposalTooLarge
   * when it exceeds maxEntryBytes). `context` names the proposal in a later `Ready.refusedProposals`
   * when the leader refuses it for its size; without one such a refusal is not reported.
   */
  propose(data: Uint8Array, context?: string): void {
    const entries = [{ type: "Normal" as const, term: 0, index: 0, data }];
    this.stepOrThrow({ type: "MsgProp", from: this.raft.id, to: NONE, term: 0, entries, ...(context ? { context } : {}) });
  }

  /**
   * Proposes a membership change. Only one may be pending at a time: a second one (or an invalid
   * joint transition) is replaced by an empty entry when it reaches the leader, as in etcd.
   */
  proposeConfChange(cc: ConfChange): void {
    this.stepOrThrow({ type: "MsgProp", from: this.raft.id, to: NONE, term: 0, entries: [{ type: "ConfChange", term: 0, index: 0, change: cc }] });
  }

  /** Applies a committed conf change; returns the new ConfState to store with future snapshots. */
  applyConfChange(cc: ConfChange): ConfState {
    return this.raft.applyConfChange(cc);
  }

  /** Steps a message received from the network. */
  step(m: Message): void {
    if (isLocalMsg(m.type)) throw new ErrStepLocalMsg();
    if (this.raft.trk.progress.has(m.from) || !isResponseMsg(m.type)) {
      this.stepOrThrow(m);
      return;
    }
    throw new ErrStepPeerNotFound();
  }

  private stepOrThrow(m: Message): void {
    const err = this.raft.step(m);
    if (err instanceof RaftError) throw err;
  }

  /**
   * Requests a linearizable read point. The answer arrives as a ReadState with the same `ctx` in a later
   * Ready (possibly after forwarding to the leader). `ctx` must be non-empty and unique per request.
   */
  readIndex(ctx: string): void {
    if (ctx === "") throw new RangeError("readIndex: empty ctx");
    this.raft.step({ type: "MsgReadIndex", from: this.raft.id, to: NONE, term: 0, context: ctx });
  }

  /** Asks the leader to hand leadership to `transferee` (thesis §3.10). */
  transferLeadership(transferee: string): void {
    this.raft.step({ type: "MsgTransferLeader", from: transferee, to: NONE, term: 0 });
  }

  /** Tells the leader that the last message to `id` could not be delivered. */
  reportUnreachable(id: string): void {
    this.raft.step({ type: "MsgUnreachable", from: id, to: NONE, term: 0 });
  }

  /** Tells the leader whether streaming the snapshot named in a MsgSnap to `id` succeeded. */
  reportSnapshot(id: string, status: SnapshotStatus): void {
    this.raft.step({ type: "MsgSnapStatus", from: id, to: NONE, term: 0, reject: status === "Failure" });
  }

  hasReady(): boolean {
    const r = this.raft;
    if (!softStateEqual(r.softState(), this.prevSoftState)) return true;
    const hs = r.hardState();
    if (!isEmptyHardState(hs) && !hardStateEqual(hs, this.prevHardState)) return true;
    if (r.raftLog.hasPendingSnapshot()) return true;
    if (r.msgs.length > 0 || r.raftLog.unstableEntries().length > 0 || r.raftLog.hasNextEnts()) return true;
    return r.readStates.length > 0 || r.refusedProposals.length > 0;
  }

  /**
   * Returns the pending batch and takes ownership of its messages and read states. Throws if the
   * previous Ready was not advanced.
   */
  ready(): Ready {
    if (this.inFlight) throw new Error("ready() called again before advance()");
    const r = this.raft;
    const softState = r.softState();
    const hardState = r.hardState();
    const entries = [...r.raftLog.unstableEntries()];
    const hsChanged = !hardStateEqual(hardState, this.prevHardState);
    const snapshot = r.raftLog.unstable.snapshot;
    const rd: Ready = {
      ...(softStateEqual(softState, this.prevSoftState) ? {} : { softState }),
      ...(hsChanged ? { hardState } : {}),
      readStates: r.readStates,
      refusedProposals: r.refusedProposals,
      entries,
      ...(snapshot ? { snapshot } : {}),
      committedEntries: r.raftLog.nextEnts(),
      messages: r.msgs,
      mustSync: entries.length > 0 || snapshot !== undefined || hardState.term !== this.prevHardState.term ||
        hardState.vote !== this.prevHardState.vote,
    };
    if (rd.softState) this.prevSoftState = rd.softState;
    r.readStates = [];
    r.refusedProposals = [];
    r.msgs = [];
    this.inFlight = rd;
    return rd;
  }

  /** Acknowledges that the last Ready was persisted, sent and applied. */
  advance(): void {
    const rd = this.inFlight;
    if (!rd) throw new Error("advance() without ready()");
    this.inFlight = undefined;
    const r = this.raft;
    if (rd.hardState) this.prevHardState = rd.hardState;
    r.reduceUncommittedSize(rd.committedEntries);
    const n = rd.committedEntries.length;
    const applied = n > 0 ? rd.committedEntries[n - 1]!.index : rd.snapshot?.index ?? 0;
    if (applied > 0) r.appliedTo(applied);
    if (rd.entries.length > 0) {
      const e = rd.entries[rd.entries.length - 1]!;
      r.raftLog.stableTo(e.index, e.term);
    }
    if (rd.snapshot) r.raftLog.stableSnapTo(rd.snapshot.index);
  }

  status(): Status {
    const r = this.raft;
    const progress = new Map<string, ProgressStatus>();
    if (r.state === "Leader") {
      r.trk.visit((id, pr) => {
        progress.set(id, {
          match: pr.match, next: pr.next, state: pr.state, isLearner: pr.isLearner, recentActive: pr.recentActive,
          pendingSnapshot: pr.pendingSnapshot, inflight: pr.inflights.count(),
        });
      });
    }
    return {
      id: r.id,
      hardState: r.hardState(),
      softState: r.softState(),
      applied: r.raftLog.applied,
      lastIndex: r.raftLog.lastIndex(),
      leadTransferee: r.leadTransferee,
      config: r.trk.confState(),
      progress,
    };
  }
}

function softStateEqual(a: SoftState, b: SoftState): boolean {
  return a.lead === b.lead && a.raftState === b.raftState;
}

function hardStateEqual(a: HardState, b: HardState): boolean {
  return a.term === b.term && a.vote === b.vote && a.commit === b.commit;
}

function isEmptyHardState(h: HardState): boolean {
  return h.term === 0 && h.vote === NONE && h.commit === 0;
}
