import { confStatesEqual, restoreConfig } from "./confchange.ts";
import type { Raft } from "./raft.ts";
import { ProgressTracker } from "./tracker.ts";
import type { ConfState, MsgApp, MsgHeartbeat, MsgSnap } from "./types.ts";
import { NONE } from "./types.ts";

/** Follower-side handlers of leader messages (etcd handleAppendEntries / handleHeartbeat / handleSnapshot). */

export function handleAppendEntries(r: Raft, m: MsgApp): void {
  if (m.index < r.raftLog.committed) {
    r.send({ type: "MsgAppResp", from: r.id, to: m.from, term: r.term, index: r.raftLog.committed, reject: false, rejectHint: 0, logTerm: 0 });
    return;
  }
  const lastNew = r.raftLog.maybeAppend(m.index, m.logTerm, m.commit, m.entries);
  if (lastNew !== undefined) {
    r.send({ type: "MsgAppResp", from: r.id, to: m.from, term: r.term, index: lastNew, reject: false, rejectHint: 0, logTerm: 0 });
    return;
  }
  // Reject with a hint (fast backtracking): the last index that could match given the leader's term
  // at m.index, so the leader can skip a whole term per round trip.
  const hint = r.raftLog.findConflictByTerm(Math.min(m.index, r.raftLog.lastIndex()), m.logTerm);
  r.send({ type: "MsgAppResp", from: r.id, to: m.from, term: r.term, index: m.index, reject: true, rejectHint: hint.index, logTerm: hint.term });
}

export function handleHeartbeat(r: Raft, m: MsgHeartbeat): void {
  r.raftLog.commitTo(m.commit);
  r.send({ type: "MsgHeartbeatResp", from: r.id, to: m.from, term: r.term, context: m.context });
}

export function handleSnapshot(r: Raft, m: MsgSnap): void {
  const index = restore(r, m.snapshot) ? r.raftLog.lastIndex() : r.raftLog.committed;
  r.send({ type: "MsgAppResp", from: r.id, to: m.from, term: r.term, index, reject: false, rejectHint: 0, logTerm: 0 });
}

/**
 * Installs snapshot metadata if it is newer than our commit index and we are in its configuration.
 * Returns false if ignored (or if the log already contains the snapshot's last entry, in which case
 * we only fast-forward the commit index).
 */
export function restore(r: Raft, s: { index: number; term: number; confState: ConfState }): boolean {
  if (s.index <= r.raftLog.committed) return false;
  if (r.state !== "Follower") {
    // Defense in depth (etcd): a snapshot only comes from a leader of our term, so we cannot be one.
    r.becomeFollower(r.term + 1, NONE);
    return false;
  }
  const cs = s.confState;
  const found = [cs.voters, cs.learners, cs.votersOutgoing].some((ids) => ids.includes(r.id));
  if (!found) return false;
  if (r.raftLog.matchTerm(s.index, s.term)) {
    r.raftLog.commitTo(s.index);
    return false;
  }
  r.raftLog.restore(s);
  r.trk = new ProgressTracker(r.trk.maxInflight);
  const restored = restoreConfig(cs, r.trk.maxInflight, r.raftLog.lastIndex());
  const got = r.switchToConfig(restored);
  if (!confStatesEqual(got, cs)) throw new Error("restored ConfState differs from snapshot's");
  const pr = r.trk.progress.get(r.id)!;
  pr.maybeUpdate(pr.next - 1);
  return true;
}

