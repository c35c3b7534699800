import { Changer } from "./confchange.ts";
import type { ConfigAndProgress } from "./confchange.ts";
import type { Raft } from "./raft.ts";
import type { ConfChange, ConfState } from "./types.ts";
import { confChangeEntersJoint, confChangeLeavesJoint, NONE } from "./types.ts";

/** Applies a committed conf change (the application calls this when applying the entry). */
export function applyConfChange(r: Raft, cc: ConfChange): ConfState {
  const changer = new Changer(r.trk.config, r.trk.progress, r.trk.maxInflight, r.raftLog.lastIndex());
  let next: ConfigAndProgress;
  if (confChangeLeavesJoint(cc)) next = changer.leaveJoint();
  else {
    const autoLeave = confChangeEntersJoint(cc);
    next = autoLeave !== undefined ? changer.enterJoint(autoLeave, cc.changes) : changer.simple(cc.changes);
  }
  return switchToConfig(r, next);
}

/** Installs a configuration; a leader may commit more (quorum changed) and probes new peers. */
export function switchToConfig(r: Raft, next: ConfigAndProgress): ConfState {
  r.trk.config = next.config;
  r.trk.progress = next.progress;
  const cs = r.trk.confState();
  const pr = r.trk.progress.get(r.id);
  r.isLearner = pr?.isLearner ?? false;
  if ((!pr || r.isLearner) && r.state === "Leader") {
    // Removed (or demoted) leader: keeps leading until it steps down, unless configured to step down now.
    if (r.stepDownOnRemoval) r.becomeFollower(r.term, NONE);
    return cs;
  }
  if (r.state !== "Leader" || cs.voters.length === 0) return cs;
  if (r.maybeCommit()) {
    r.bcastAppend();
  } else {
    r.trk.visit((id) => {
      if (id !== r.id) r.maybeSendAppend(id, false);
    });
  }
  if (r.leadTransferee !== NONE && !r.trk.voterIds().includes(r.leadTransferee)) r.abortLeaderTransfer();
  return cs;
}

