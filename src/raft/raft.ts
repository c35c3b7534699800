import type { Rng } from "../platform/index.ts";
import type { ResolvedConfig, Config } from "./config.ts";
import { validateConfig } from "./config.ts";
import { confStatesEqual, restoreConfig } from "./confchange.ts";
import type { ConfigAndProgress } from "./confchange.ts";
import type { ErrProposalDropped } from "./errors.ts";
import { ErrSnapshotTemporarilyUnavailable, ErrCompacted, ErrUnavailable } from "./errors.ts";
import { NO_LIMIT, RaftLog } from "./log.ts";
import { ReadOnly } from "./read_only.ts";
import { stepLeader } from "./step_leader.ts";
import { stepCandidate, stepFollower } from "./step_follower.ts";
import { applyConfChange, switchToConfig } from "./membership.ts";
import { ProgressTracker } from "./tracker.ts";
import type {
  ConfChange, ConfState, Entry, HardState, Message, MsgApp, MsgHeartbeat, MsgReadIndex, MsgSnap, ReadState, RefusedProposal, SoftState, StateType,
} from "./types.ts";
import { noteRefusedProposal, refuseOversized } from "./proposal_size.ts";
import { entryPayloadSize, NONE } from "./types.ts";

/** Kind of campaign (etcd CampaignType). "Transfer" skips pre-vote and bypasses leader leases. */
export type CampaignType = "PreElection" | "Election" | "Transfer";

/**
 * The Raft state machine (etcd `raft` struct). Synchronous and deterministic: it changes only through
 * `step()` and `tick()`, emits messages into `msgs` and read states into `readStates`; RawNode turns
 * these into Ready batches. Fields are public for the step functions and for tests; other layers use
 * RawNode.
 *
 * Subclassing hook: `maybeCommit()` is the only place the commit index advances on the leader, so a
 * test-only subclass can inject a deliberately unsafe commit rule.
 */
export class Raft {
  readonly id: string;
  term = 0;
  vote: string = NONE;
  readStates: ReadState[] = [];
  /** This node's proposals that another node refused for their size (MsgPropTooLarge), for the next Ready. */
  refusedProposals: RefusedProposal[] = [];
  readonly raftLog: RaftLog;
  readonly maxMsgSize: number;
  readonly maxUncommittedSize: number;
  readonly maxEntryBytes: number;
  trk: ProgressTracker;
  state: StateType = "Follower";
  /** True if this node is a learner in the current configuration. */
  isLearner = false;
  msgs: Message[] = [];
  lead: string = NONE;
  /** Target of an ongoing leadership transfer (NONE if none). */
  leadTransferee: string = NONE;
  /** Index of the latest conf change proposed by this leader; a new one waits until it is applied. */
  pendingConfIndex = 0;
  uncommittedSize = 0;
  readOnly: ReadOnly;
  /** Ticks since the last election timeout reset (followers/candidates) or CheckQuorum (leader). */
  electionElapsed = 0;
  heartbeatElapsed = 0;
  readonly checkQuorum: boolean;
  readonly preVote: boolean;
  readonly heartbeatTimeout: number;
  readonly electionTimeout: number;
  randomizedElectionTimeout = 0;
  readonly disableProposalForwarding: boolean;
  readonly stepDownOnRemoval: boolean;
  /** ReadIndex requests received before this leader committed an entry of its term. */
  pendingReadIndexMessages: MsgReadIndex[] = [];
  private readonly rng: Rng;
  readonly config: ResolvedConfig;

  constructor(c: Config) {
    const cfg = validateConfig(c);
    this.config = cfg;
    this.id = cfg.id;
    this.rng = cfg.rng;
    this.raftLog = new RaftLog(cfg.storage, cfg.maxCommittedSizePerReady);
    this.maxMsgSize = cfg.maxSizePerMsg;
    this.maxUncommittedSize = cfg.maxUncommittedEntriesSize;
    this.maxEntryBytes = cfg.maxEntryBytes;
    this.trk = new ProgressTracker(cfg.maxInflightMsgs);
    this.electionTimeout = cfg.electionTick;
    this.heartbeatTimeout = cfg.heartbeatTick;
    this.checkQuorum = cfg.checkQuorum;
    this.preVote = cfg.preVote;
    this.readOnly = new ReadOnly(cfg.readOnlyOption);
    this.disableProposalForwarding = cfg.disableProposalForwarding;
    this.stepDownOnRemoval = cfg.stepDownOnRemoval;

    const { hardState, confState } = cfg.storage.initialState();
    const restored = restoreConfig(confState, this.trk.maxInflight, this.raftLog.lastIndex());
    const cs = this.switchToConfig(restored);
    if (!confStatesEqual(cs, confState)) throw new Error(`restored ConfState differs from storage's`);
    if (hardState.term !== 0 || hardState.vote !== NONE || hardState.commit !== 0) this.loadState(hardState);
    if (cfg.applied > 0) this.raftLog.appliedTo(cfg.applied);
    this.becomeFollower(this.term, NONE);
  }

  hardState(): HardState {
    return { term: this.term, vote: this.vote, commit: this.raftLog.committed };
  }

  softState(): SoftState {
    return { lead: this.lead, raftState: this.state };
  }

  private loadState(hs: HardState): void {
    if (hs.commit < this.raftLog.committed || hs.commit > this.raftLog.lastIndex()) {
      throw new Error(`${this.id} state.commit ${hs.commit} is out of range [${this.raftLog.committed}, ${this.raftLog.lastIndex()}]`);
    }
    this.raftLog.committed = hs.commit;
    this.term = hs.term;
    this.vote = hs.vote;
  }

  /** Queues an outgoing message. */
  send(m: Message): void {
    this.msgs.push(m);
  }

  // ---- replication -------------------------------------------------------------------------------

  sendAppend(to: string): void {
    this.maybeSendAppend(to, true);
  }

  /**
   * Sends a MsgApp with new entries (or an empty one if sendIfEmpty), or a MsgSnap if the needed
   * entries were compacted. Returns true if a message was sent. Respects flow control (isPaused).
   */
  maybeSendAppend(to: string, sendIfEmpty: boolean): boolean {
    const pr = this.trk.progress.get(to);
    if (!pr || pr.isPaused()) return false;
    let prevTerm: number | undefined;
    let ents: readonly Entry[] | undefined;
    try {
      prevTerm = this.raftLog.term(pr.next - 1);
      ents = this.raftLog.entries(pr.next, this.maxMsgSize);
    } catch (e) {
      if (!(e instanceof ErrCompacted || e instanceof ErrUnavailable)) throw e;
      prevTerm = undefined;
    }
    if (prevTerm !== undefined && ents !== undefined) {
      if (ents.length === 0 && !sendIfEmpty) return false;
      const m: MsgApp = {
        type: "MsgApp", from: this.id, to, term: this.term, index: pr.next - 1, logTerm: prevTerm, entries: ents,
        commit: this.raftLog.committed,
      };
      if (ents.length > 0) {
        if (pr.state === "Replicate") {
          const last = ents[ents.length - 1]!.index;
          pr.optimisticUpdate(last);
          pr.inflights.add(last);
        } else if (pr.state === "Probe") {
          pr.probeSent = true;
        } else {
          throw new Error(`${this.id} is sending append in unhandled state ${pr.state}`);
        }
      }
      this.send(m);
      return true;
    }
    // The entries are compacted: send a snapshot, but only to a peer we heard from recently.
    if (!pr.recentActive) return false;
    let snapshot;
    try {
      snapshot = this.raftLog.snapshot();
    } catch (e) {
      if (e instanceof ErrSnapshotTemporarilyUnavailable) return false;
      throw e;
    }
    if (snapshot.index === 0) throw new Error("need non-empty snapshot");
    pr.becomeSnapshot(snapshot.index);
    const m: MsgSnap = { type: "MsgSnap", from: this.id, to, term: this.term, snapshot };
    this.send(m);
    return true;
  }

  /** Heartbeat to `to`; commit is capped at the peer's match so it never commits entries it lacks. */
  sendHeartbeat(to: string, context: string): void {
    const commit = Math.min(this.trk.progress.get(to)!.match, this.raftLog.committed);
    const m: MsgHeartbeat = { type: "MsgHeartbeat", from: this.id, to, term: this.term, commit, context };
    this.send(m);
  }

  bcastAppend(): void {
    this.trk.visit((id) => {
      if (id !== this.id) this.sendAppend(id);
    });
  }

  bcastHeartbeat(): void {
    this.bcastHeartbeatWithCtx(this.readOnly.lastPendingRequestCtx());
  }

  bcastHeartbeatWithCtx(ctx: string): void {
    this.trk.visit((id) => {
      if (id !== this.id) this.sendHeartbeat(id, ctx);
    });
  }

  /**
   * Advances the commit index to the quorum-acknowledged index if that entry is of the current term
   * (Raft §5.4.2 / Figure 8). Returns true if the commit index changed. Overridable by tests only.
   */
  maybeCommit(): boolean {
    return this.raftLog.maybeCommit(this.trk.committed(), this.term);
  }

  /** Leader: appends entries stamped with the current term. Returns false if the uncommitted limit drops them. */
  appendEntry(es: readonly Entry[]): boolean {
    let li = this.raftLog.lastIndex();
    const stamped: Entry[] = es.map((e, i) => ({ ...e, term: this.term, index: li + 1 + i }));
    if (!this.increaseUncommittedSize(stamped)) return false;
    li = this.raftLog.append(stamped);
    this.trk.progress.get(this.id)?.maybeUpdate(li);
    this.maybeCommit();
    return true;
  }

  private increaseUncommittedSize(ents: readonly Entry[]): boolean {
    let s = 0;
    for (const e of ents) s += entryPayloadSize(e);
    if (this.uncommittedSize > 0 && s > 0 && this.uncommittedSize + s > this.maxUncommittedSize) return false;
    this.uncommittedSize += s;
    return true;
  }

  /** Called on advance with the entries the application applied. */
  reduceUncommittedSize(ents: readonly Entry[]): void {
    if (this.uncommittedSize === 0) return;
    let s = 0;
    for (const e of ents) s += entryPayloadSize(e);
    this.uncommittedSize = Math.max(0, this.uncommittedSize - s);
  }

  // ---- time ----------------------------------------------------------------------------------------

  tick(): void {
    if (this.state === "Leader") this.tickHeartbeat();
    else this.tickElection();
  }

  private tickElection(): void {
    this.electionElapsed++;
    if (this.promotable() && this.pastElectionTimeout()) {
      this.electionElapsed = 0;
      this.step({ type: "MsgHup", from: this.id, to: NONE, term: 0 });
    }
  }

  private tickHeartbeat(): void {
    this.heartbeatElapsed++;
    this.electionElapsed++;
    if (this.electionElapsed >= this.electionTimeout) {
      this.electionElapsed = 0;
      if (this.checkQuorum) this.step({ type: "MsgCheckQuorum", from: this.id, to: NONE, term: 0 });
      // A transfer that did not complete within an election timeout is aborted (thesis §3.10).
      if (this.state === "Leader" && this.leadTransferee !== NONE) this.abortLeaderTransfer();
    }
    if (this.state !== "Leader") return;
    if (this.heartbeatElapsed >= this.heartbeatTimeout) {
      this.heartbeatElapsed = 0;
      this.step({ type: "MsgBeat", from: this.id, to: NONE, term: 0 });
    }
  }

  pastElectionTimeout(): boolean {
    return this.electionElapsed >= this.randomizedElectionTimeout;
  }

  private resetRandomizedElectionTimeout(): void {
    this.randomizedElectionTimeout = this.electionTimeout + this.rng.int(this.electionTimeout);
  }

  // ---- role changes --------------------------------------------------------------------------------

  private reset(term: number): void {
    if (this.term !== term) {
      this.term = term;
      this.vote = NONE;
    }
    this.lead = NONE;
    this.electionElapsed = 0;
    this.heartbeatElapsed = 0;
    this.resetRandomizedElectionTimeout();
    this.abortLeaderTransfer();
    this.trk.resetVotes();
    const last = this.raftLog.lastIndex();
    this.trk.visit((id, pr) => {
      pr.match = id === this.id ? last : 0;
      pr.next = last + 1;
      pr.state = "Probe";
      pr.pendingSnapshot = 0;
      pr.probeSent = false;
      pr.recentActive = false;
      pr.inflights.reset();
    });
    this.pendingConfIndex = 0;
    this.uncommittedSize = 0;
    this.readOnly = new ReadOnly(this.readOnly.option);
    this.pendingReadIndexMessages = [];
  }

  becomeFollower(term: number, lead: string): void {
    this.reset(term);
    this.lead = lead;
    this.state = "Follower";
  }

  becomeCandidate(): void {
    if (this.state === "Leader") throw new Error("invalid transition [leader -> candidate]");
    this.reset(this.term + 1);
    this.vote = this.id;
    this.state = "Candidate";
  }

  /** Pre-candidate: neither the term nor the vote changes (thesis §9.6). */
  becomePreCandidate(): void {
    if (this.state === "Leader") throw new Error("invalid transition [leader -> pre-candidate]");
    this.trk.resetVotes();
    this.lead = NONE;
    this.state = "PreCandidate";
  }

  /** New leader: replicates to itself, then appends an empty entry of its term (thesis §6.4) so it can commit. */
  becomeLeader(): void {
    if (this.state === "Follower") throw new Error("invalid transition [follower -> leader]");
    this.reset(this.term);
    this.lead = this.id;
    this.state = "Leader";
    const pr = this.trk.progress.get(this.id);
    if (pr) {
      pr.becomeReplicate();
      pr.recentActive = true;
    }
    // Conservatively treat any uncommitted entry as a possible pending conf change.
    this.pendingConfIndex = this.raftLog.lastIndex();
    if (!this.appendEntry([{ type: "Normal", term: 0, index: 0, data: new Uint8Array() }])) {
      throw new Error("empty entry was dropped");
    }
  }

  /** Starts an election unless leader, not promotable, or a committed conf change is still unapplied. */
  hup(t: CampaignType): void {
    if (this.state === "Leader") return;
    if (!this.promotable()) return;
    if (this.raftLog.committed > this.raftLog.applied) {
      const ents = this.raftLog.slice(this.raftLog.applied + 1, this.raftLog.committed + 1, NO_LIMIT);
      if (ents.some((e) => e.type === "ConfChange")) return;
    }
    this.campaign(t);
  }

  campaign(t: CampaignType): void {
    if (!this.promotable()) return;
    let term: number;
    let voteType: "MsgVote" | "MsgPreVote";
    if (t === "PreElection") {
      this.becomePreCandidate();
      voteType = "MsgPreVote";
      // Pre-votes are requested for the term we would campaign in, without incrementing ours.
      term = this.term + 1;
    } else {
      this.becomeCandidate();
      voteType = "MsgVote";
      term = this.term;
    }
    if (this.poll(this.id, true) === "VoteWon") {
      // Single-voter cluster: won by our own vote.
      if (t === "PreElection") this.campaign("Election");
      else this.becomeLeader();
      return;
    }
    for (const id of this.trk.voterIds()) {
      if (id === this.id) continue;
      this.send({
        type: voteType, from: this.id, to: id, term, index: this.raftLog.lastIndex(), logTerm: this.raftLog.lastTerm(),
        transfer: t === "Transfer",
      });
    }
  }

  poll(id: string, granted: boolean) {
    this.trk.recordVote(id, granted);
    return this.trk.tallyVotes().result;
  }

  /** Voter in the current config with no pending snapshot to install. */
  promotable(): boolean {
    const pr = this.trk.progress.get(this.id);
    return pr !== undefined && !pr.isLearner && !this.raftLog.hasPendingSnapshot();
  }

  abortLeaderTransfer(): void {
    this.leadTransferee = NONE;
  }

  committedEntryInCurrentTerm(): boolean {
    return this.raftLog.termOrZero(this.raftLog.committed) === this.term;
  }

  // ---- step ----------------------------------------------------------------------------------------

  /**
   * Processes one message (etcd raft.Step): term checks first (Raft §5.1, leader lease, pre-vote rules),
   * then vote handling, then the role-specific step function. Returns ErrProposalDropped when a
   * proposal could not be accepted; never throws for expected conditions.
   */
  step(m: Message): ErrProposalDropped | undefined {
    if (m.type === "MsgPropTooLarge") return noteRefusedProposal(this, m);
    const tooLarge = m.type === "MsgProp" ? refuseOversized(this, m) : undefined;
    if (tooLarge) return tooLarge;
    if (m.term === 0) {
      // local message (or a forwarded MsgProp / MsgReadIndex)
    } else if (m.term > this.term) {
      if (m.type === "MsgVote" || m.type === "MsgPreVote") {
        const inLease = this.checkQuorum && this.lead !== NONE && this.electionElapsed < this.electionTimeout;
        // Leader lease (thesis §4.2.3): ignore disruptive votes while we hear from a leader.
        if (!m.transfer && inLease) return undefined;
      }
      if (m.type === "MsgPreVote") {
        // Never change our term in response to a PreVote.
      } else if (m.type === "MsgPreVoteResp" && !m.reject) {
        // Pre-vote granted for a future term: we bump the term only once we win the pre-election.
      } else if (m.type === "MsgApp" || m.type === "MsgHeartbeat" || m.type === "MsgSnap") {
        this.becomeFollower(m.term, m.from);
      } else {
        this.becomeFollower(m.term, NONE);
      }
    } else if (m.term < this.term) {
      if ((this.checkQuorum || this.preVote) && (m.type === "MsgHeartbeat" || m.type === "MsgApp")) {
        // A stale leader (e.g. a rejoining partitioned node) learns our term so it steps down; without
        // this it could not, since with pre-vote we never bump our term for it (etcd behaviour).
        this.send({ type: "MsgAppResp", from: this.id, to: m.from, term: this.term, index: 0, reject: false, rejectHint: 0, logTerm: 0 });
      } else if (m.type === "MsgPreVote") {
        this.send({ type: "MsgPreVoteResp", from: this.id, to: m.from, term: this.term, reject: true });
      }
      return undefined;
    }

    switch (m.type) {
      case "MsgHup":
        this.hup(this.preVote ? "PreElection" : "Election");
        return undefined;
      case "MsgVote":
      case "MsgPreVote": {
        const canVote = this.vote === m.from ||
          (this.vote === NONE && this.lead === NONE) ||
          (m.type === "MsgPreVote" && m.term > this.term);
        const respType = m.type === "MsgVote" ? "MsgVoteResp" : "MsgPreVoteResp";
        if (canVote && this.raftLog.isUpToDate(m.index, m.logTerm)) {
          // Grant with the request's term (for pre-votes our own term may be lower).
          this.send({ type: respType, from: this.id, to: m.from, term: m.term, reject: false });
          if (m.type === "MsgVote") {
            this.electionElapsed = 0;
            this.vote = m.from;
          }
        } else {
          this.send({ type: respType, from: this.id, to: m.from, term: this.term, reject: true });
        }
        return undefined;
      }
      default:
        switch (this.state) {
          case "Leader": return stepLeader(this, m);
          case "Candidate":
          case "PreCandidate": return stepCandidate(this, m);
          case "Follower": return stepFollower(this, m);
        }
    }
  }

  // ---- membership and follower handlers (implemented in membership.ts / handlers.ts) -----------------

  /** Applies a committed conf change (the application calls this when applying the entry). */
  applyConfChange(cc: ConfChange): ConfState {
    return applyConfChange(this, cc);
  }

  /** Installs a configuration; a leader may commit more (quorum changed) and probes new peers. */
  switchToConfig(next: ConfigAndProgress): ConfState {
    return switchToConfig(this, next);
  }


  /** Called from RawNode.advance after the application applied up to `newApplied`. */
  appliedTo(newApplied: number): void {
    const oldApplied = this.raftLog.applied;
    this.raftLog.appliedTo(newApplied);
    if (this.trk.config.autoLeave && oldApplied <= this.pendingConfIndex && newApplied >= this.pendingConfIndex &&
      this.state === "Leader") {
      // The joint config is applied: propose leaving it (etcd auto-leave). An empty conf change has a
      // tiny payload and is never refused.
      const ok = this.appendEntry([{ type: "ConfChange", term: 0, index: 0, change: { transition: "Auto", changes: [] } }]);
      if (!ok) throw new Error("refused un-refusable auto-leaving ConfChange");
      this.pendingConfIndex = this.raftLog.lastIndex();
      this.bcastAppend();
    }
  }
}
