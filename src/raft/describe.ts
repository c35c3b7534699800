import type { ConfChange, Entry, HardState, Message, Snapshot } from "./types.ts";

/**
 * Human-readable, deterministic renderings of Raft values for logs and transcript tests
 * (modelled on etcd's DescribeMessage / DescribeEntry).
 */

const decoder = new TextDecoder();

export function describeConfChange(cc: ConfChange): string {
  const parts = cc.changes.map((c) => `${c.type === "AddNode" ? "v" : c.type === "AddLearnerNode" ? "l" : "r"}${c.nodeId}`);
  if (cc.transition !== "Auto") parts.unshift(cc.transition);
  return parts.length === 0 ? "leave-joint" : parts.join(" ");
}

export function describeEntry(e: Entry): string {
  if (e.type === "ConfChange") return `${e.term}/${e.index} EntryConfChange ${describeConfChange(e.change)}`;
  return `${e.term}/${e.index} EntryNormal ${JSON.stringify(decoder.decode(e.data))}`;
}

export function describeEntries(ents: readonly Entry[]): string {
  return ents.map(describeEntry).join(", ");
}

export function describeHardState(hs: HardState): string {
  return `Term:${hs.term} Vote:${hs.vote || "0"} Commit:${hs.commit}`;
}

export function describeSnapshot(s: Snapshot): string {
  const cs = s.confState;
  let c = `voters=(${cs.voters.join(" ")})`;
  if (cs.votersOutgoing.length > 0) c += `&&(${cs.votersOutgoing.join(" ")})`;
  if (cs.learners.length > 0) c += ` learners=(${cs.learners.join(" ")})`;
  if (cs.learnersNext.length > 0) c += ` learners_next=(${cs.learnersNext.join(" ")})`;
  if (cs.autoLeave) c += " autoleave";
  return `Index:${s.index} Term:${s.term} ConfState:${c}`;
}

export function describeMessage(m: Message): string {
  let s = `${m.from || "_"}->${m.to || "_"} ${m.type} Term:${m.term}`;
  switch (m.type) {
    case "MsgApp":
      s += ` Log:${m.logTerm}/${m.index} Commit:${m.commit}`;
      if (m.entries.length > 0) s += ` Entries:[${describeEntries(m.entries)}]`;
      break;
    case "MsgAppResp":
      s += ` Log:0/${m.index}`;
      if (m.reject) s += ` Rejected (Hint: ${m.rejectHint}/${m.logTerm})`;
      break;
    case "MsgVote":
    case "MsgPreVote":
      s += ` Log:${m.logTerm}/${m.index}${m.transfer ? " (transfer)" : ""}`;
      break;
    case "MsgVoteResp":
    case "MsgPreVoteResp":
    case "MsgSnapStatus":
      if (m.reject) s += " Rejected";
      break;
    case "MsgProp":
      s += ` Entries:[${describeEntries(m.entries)}]`;
      break;
    case "MsgPropTooLarge":
      s += ` Context:${m.context} Size:${m.size} Limit:${m.limit}`;
      break;
    case "MsgSnap":
      s += ` Snapshot: ${describeSnapshot(m.snapshot)}`;
      break;
    case "MsgHeartbeat":
      s += ` Commit:${m.commit}`;
      if (m.context) s += ` Context:${m.context}`;
      break;
    case "MsgHeartbeatResp":
    case "MsgReadIndex":
      if (m.context) s += ` Context:${m.context}`;
      break;
    case "MsgReadIndexResp":
      s += ` Index:${m.index} Context:${m.context}`;
      break;
    default:
      break;
  }
  return s;
}
