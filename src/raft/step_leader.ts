import { ErrProposalDropped } from "./errors.ts";
import type { Raft } from "./raft.ts";
import type { Entry, Message, MsgAppResp, MsgReadIndex } from "./types.ts";
import { confChangeLeavesJoint, NONE } from "./types.ts";

/**
 * Leader step function (etcd stepLeader). Handles local ticks-turned-messages, proposals, ReadIndex,
 * and responses from followers.
 */
export function stepLeader(r: Raft, m: Message): ErrProposalDropped | undefined {
  switch (m.type) {
    case "MsgBeat":
      r.bcastHeartbeat();
      return undefined;
    case "MsgCheckQuorum": {
      const self = r.trk.progress.get(r.id);
      if (self) self.recentActive = true;
      // Thesis §6.2: a leader that has not heard from a quorum within an election timeout steps down.
      if (!r.trk.quorumActive()) r.becomeFollower(r.term, NONE);
      r.trk.visit((id, pr) => {
        if (id !== r.id) pr.recentActive = false;
      });
      return undefined;
    }
    case "MsgProp":
      return propose(r, m.entries);
    case "MsgReadIndex":
      if (r.trk.isSingleton()) {
        // Only voter: our commit index is trivially up to date.
        responseToReadIndexReq(r, m, r.raftLog.committed);
        return undefined;
      }
      // Thesis §6.4: the read index must include all entries committed by previous leaders, which is
      // only known once this leader committed an entry of its own term. Queue until then.
      if (!r.committedEntryInCurrentTerm()) {
        r.pendingReadIndexMessages.push(m);
        return undefined;
      }
      sendReadIndexResponse(r, m);
      return undefined;
    default:
      break;
  }

  const pr = r.trk.progress.get(m.from);
  if (!pr) return undefined;
  switch (m.type) {
    case "MsgAppResp":
      handleAppendResponse(r, m);
      break;
    case "MsgHeartbeatResp": {
      pr.recentActive = true;
      pr.probeSent = false;
      // Free one slot so a stalled pipeline (lost acks) makes progress again.
      if (pr.state === "Replicate" && pr.inflights.full()) pr.inflights.freeFirstOne();
      if (pr.match < r.raftLog.lastIndex()) r.sendAppend(m.from);
      if (r.readOnly.option !== "Safe" || m.context === "") break;
      const acks = r.readOnly.recvAck(m.from, m.context);
      if (!acks || r.trk.voteResult(acks) !== "VoteWon") break;
      for (const rs of r.readOnly.advance(m.context)) responseToReadIndexReq(r, rs.req, rs.index);
      break;
    }
    case "MsgSnapStatus":
      if (pr.state !== "Snapshot") break;
      if (m.reject) pr.pendingSnapshot = 0;
      // Success: resume probing after the snapshot. Failure: probe from match. Either way wait for the
      // follower's MsgAppResp (or the next heartbeat) before sending the next append.
      pr.becomeProbe();
      pr.probeSent = true;
      break;
    case "MsgUnreachable":
      // In optimistic replication a MsgApp was likely lost; fall back to probing.
      if (pr.state === "Replicate") pr.becomeProbe();
      break;
    case "MsgTransferLeader": {
      if (pr.isLearner) break;
      const transferee = m.from;
      if (r.leadTransferee !== NONE) {
        if (r.leadTransferee === transferee) break; // same transfer already in progress
        r.abortLeaderTransfer();
      }
      if (transferee === r.id) break;
      // The transfer must finish within one election timeout (thesis §3.10).
      r.electionElapsed = 0;
      r.leadTransferee = transferee;
      if (pr.match === r.raftLog.lastIndex()) sendTimeoutNow(r, transferee);
      else r.sendAppend(transferee);
      break;
    }
    default:
      break;
  }
  return undefined;
}

function propose(r: Raft, entries: readonly Entry[]): ErrProposalDropped | undefined {
  if (entries.length === 0) throw new Error(`${r.id} stepped empty MsgProp`);
  if (!r.trk.progress.has(r.id)) return new ErrProposalDropped("leader was removed from the configuration");
  if (r.leadTransferee !== NONE) return new ErrProposalDropped("leadership transfer in progress");
  const out: Entry[] = [];
  for (let i = 0; i < entries.length; i++) {
    const e = entries[i]!;
    if (e.type !== "ConfChange") {
      out.push(e);
      continue;
    }
    // Only one conf change may be pending (not yet applied) at a time (thesis §4.1).
    const alreadyPending = r.pendingConfIndex > r.raftLog.applied;
    const alreadyJoint = r.trk.config.voters[1].size > 0;
    const wantsLeaveJoint = confChangeLeavesJoint(e.change);
    const refused = alreadyPending || (alreadyJoint && !wantsLeaveJoint) || (!alreadyJoint && wantsLeaveJoint);
    if (refused) {
      // Replaced by an empty normal entry, as etcd does, so the proposal's index slot still exists.
      out.push({ type: "Normal", term: 0, index: 0, data: new Uint8Array() });
    } else {
      r.pendingConfIndex = r.raftLog.lastIndex() + i + 1;
      out.push(e);
    }
  }
  if (!r.appendEntry(out)) return new ErrProposalDropped("too many uncommitted entries");
  r.bcastAppend();
  return undefined;
}

function handleAppendResponse(r: Raft, m: MsgAppResp): void {
  const pr = r.trk.progress.get(m.from)!;
  pr.recentActive = true;
  if (m.reject) {
    // Fast backtracking: with the follower's (hint, term) find the last index where our logs may agree.
    let nextProbeIdx = m.rejectHint;
    if (m.logTerm > 0) nextProbeIdx = r.raftLog.findConflictByTerm(m.rejectHint, m.logTerm).index;
    if (pr.maybeDecrTo(m.index, nextProbeIdx)) {
      if (pr.state === "Replicate") pr.becomeProbe();
      r.sendAppend(m.from);
    }
    return;
  }
  const oldPaused = pr.isPaused();
  if (!(pr.maybeUpdate(m.index) || (pr.match === m.index && pr.state === "Probe"))) return;
  if (pr.state === "Probe") {
    pr.becomeReplicate();
  } else if (pr.state === "Snapshot" && pr.match + 1 >= r.raftLog.firstIndex()) {
    // The follower caught up past the snapshot (or got it): resume normal replication.
    pr.becomeProbe();
    pr.becomeReplicate();
  } else if (pr.state === "Replicate") {
    pr.inflights.freeLE(m.index);
  }
  if (r.maybeCommit()) {
    releasePendingReadIndexMessages(r);
    r.bcastAppend();
  } else if (oldPaused) {
    r.sendAppend(m.from);
  }
  // Keep the pipeline full, within the inflight window.
  while (r.maybeSendAppend(m.from, false)) { /* send more */ }
  if (m.from === r.leadTransferee && pr.match === r.raftLog.lastIndex()) sendTimeoutNow(r, m.from);
}

/** Safe mode: record the request and confirm leadership by a heartbeat round; LeaseBased: answer now. */
export function sendReadIndexResponse(r: Raft, m: MsgReadIndex): void {
  if (r.readOnly.option === "Safe") {
    r.readOnly.addRequest(r.raftLog.committed, m);
    r.readOnly.recvAck(r.id, m.context);
    r.bcastHeartbeatWithCtx(m.context);
  } else {
    responseToReadIndexReq(r, m, r.raftLog.committed);
  }
}

function sendTimeoutNow(r: Raft, to: string): void {
  r.send({ type: "MsgTimeoutNow", from: r.id, to, term: r.term });
}

/** Answers a ReadIndex request: locally as a ReadState, or with a MsgReadIndexResp to a follower. */
export function responseToReadIndexReq(r: Raft, req: MsgReadIndex, readIndex: number): void {
  if (req.from === NONE || req.from === r.id) {
    r.readStates.push({ index: readIndex, requestCtx: req.context });
    return;
  }
  r.send({ type: "MsgReadIndexResp", from: r.id, to: req.from, term: r.term, index: readIndex, context: req.context });
}

/** Serves the ReadIndex requests queued before this leader committed an entry of its term. */
export function releasePendingReadIndexMessages(r: Raft): void {
  if (r.pendingReadIndexMessages.length === 0 || !r.committedEntryInCurrentTerm()) return;
  const msgs = r.pendingReadIndexMessages;
  r.pendingReadIndexMessages = [];
  for (const m of msgs) sendReadIndexResponse(r, m);
}

