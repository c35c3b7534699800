import { ErrProposalDropped } from "./errors.ts";
import { handleAppendEntries, handleHeartbeat, handleSnapshot } from "./handlers.ts";
import type { Raft } from "./raft.ts";
import type { Message } from "./types.ts";
import { NONE } from "./types.ts";

/** Candidate and pre-candidate step function (etcd stepCandidate). */
export function stepCandidate(r: Raft, m: Message): ErrProposalDropped | undefined {
  const myVoteResp = r.state === "PreCandidate" ? "MsgPreVoteResp" : "MsgVoteResp";
  switch (m.type) {
    case "MsgProp":
      return new ErrProposalDropped("no leader");
    case "MsgApp":
      r.becomeFollower(m.term, m.from);
      handleAppendEntries(r, m);
      break;
    case "MsgHeartbeat":
      r.becomeFollower(m.term, m.from);
      handleHeartbeat(r, m);
      break;
    case "MsgSnap":
      r.becomeFollower(m.term, m.from);
      handleSnapshot(r, m);
      break;
    case "MsgVoteResp":
    case "MsgPreVoteResp": {
      // Only responses to our current kind of campaign count (a stale vote response is ignored).
      if (m.type !== myVoteResp) break;
      const res = r.poll(m.from, !m.reject);
      if (res === "VoteWon") {
        if (r.state === "PreCandidate") {
          r.campaign("Election");
        } else {
          r.becomeLeader();
          r.bcastAppend();
        }
      } else if (res === "VoteLost") {
        // A rejection may carry a higher term; Step already adopted it. Otherwise stay in our term.
        r.becomeFollower(r.term, NONE);
      }
      break;
    }
    case "MsgTimeoutNow":
      // Ignored: we are already campaigning.
      break;
    default:
      break;
  }
  return undefined;
}

/** Follower step function (etcd stepFollower). */
export function stepFollower(r: Raft, m: Message): ErrProposalDropped | undefined {
  switch (m.type) {
    case "MsgProp":
      if (r.lead === NONE) return new ErrProposalDropped("no leader");
      if (r.disableProposalForwarding) return new ErrProposalDropped("proposal forwarding disabled");
      r.send({ ...m, to: r.lead, term: 0 });
      break;
    case "MsgApp":
      r.electionElapsed = 0;
      r.lead = m.from;
      handleAppendEntries(r, m);
      break;
    case "MsgHeartbeat":
      r.electionElapsed = 0;
      r.lead = m.from;
      handleHeartbeat(r, m);
      break;
    case "MsgSnap":
      r.electionElapsed = 0;
      r.lead = m.from;
      handleSnapshot(r, m);
      break;
    case "MsgTransferLeader":
      if (r.lead === NONE) break;
      r.send({ ...m, to: r.lead, term: r.term });
      break;
    case "MsgTimeoutNow":
      // Leadership transfer: campaign at once, without pre-vote, bypassing leases (thesis §3.10).
      r.hup("Transfer");
      break;
    case "MsgReadIndex":
      if (r.lead === NONE) break;
      r.send({ ...m, to: r.lead, term: 0 });
      break;
    case "MsgReadIndexResp":
      r.readStates.push({ index: m.index, requestCtx: m.context });
      break;
    default:
      break;
  }
  return undefined;
}
