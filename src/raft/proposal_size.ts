/**
 * The entry size limit (Config.maxEntryBytes), checked wherever a MsgProp is stepped: an entry that no
 * transport message could carry must never be appended, or replication stops at it. Not in etcd's raft
 * (etcd's server checks request sizes before proposing); here the core enforces it on every node, so a
 * leader is safe whatever an older or differently configured follower forwards.
 */
import { ErrProposalTooLarge } from "./errors.ts";
import type { Raft } from "./raft.ts";
import type { MsgProp, MsgPropTooLarge } from "./types.ts";
import { entryPayloadSize, NONE } from "./types.ts";

/**
 * Refuses a proposal holding an entry larger than maxEntryBytes, on any node (so a follower never
 * forwards it and a leader never appends it), and answers the proposer of a forwarded one with a
 * MsgPropTooLarge, so that it gets a definite answer instead of a timeout.
 */
export function refuseOversized(r: Raft, m: MsgProp): ErrProposalTooLarge | undefined {
  for (const e of m.entries) {
    const size = entryPayloadSize(e);
    if (size <= r.maxEntryBytes) continue;
    if (m.from !== NONE && m.from !== r.id && m.context) {
      r.send({ type: "MsgPropTooLarge", from: r.id, to: m.from, term: 0, context: m.context, size, limit: r.maxEntryBytes });
    }
    return new ErrProposalTooLarge(size, r.maxEntryBytes);
  }
  return undefined;
}

/** A proposal of ours was refused for its size (in any role): reported in the next Ready. */
export function noteRefusedProposal(r: Raft, m: MsgPropTooLarge): undefined {
  r.refusedProposals.push({ context: m.context, size: m.size, limit: m.limit });
  return undefined;
}
