/**
 * Quorum arithmetic as pure functions (etcd raft/quorum). A majority config is a set of voter IDs; a
 * joint config is a pair (incoming, outgoing) and needs a majority in BOTH halves (Raft thesis §4.3).
 * An empty majority config is "vacuously satisfied": committed index +Infinity, vote won — so that a
 * joint config with an empty outgoing half behaves like its incoming half.
 */

export type MajorityConfig = ReadonlySet<string>;
export type JointConfig = readonly [incoming: MajorityConfig, outgoing: MajorityConfig];

export type VoteResult = "VotePending" | "VoteLost" | "VoteWon";

/** Returns the acknowledged index of a voter, or undefined if it has not acknowledged anything. */
export type AckedIndexer = (id: string) => number | undefined;

/**
 * The largest index acknowledged by a majority: sort the voters' acked indexes (missing = 0) and
 * take the one at the quorum position.
 */
export function majorityCommittedIndex(c: MajorityConfig, acked: AckedIndexer): number {
  const n = c.size;
  if (n === 0) return Infinity;
  const srt: number[] = [];
  for (const id of c) srt.push(acked(id) ?? 0);
  srt.sort((a, b) => a - b);
  // With n voters a quorum is floor(n/2)+1; the index at position n-quorum (ascending) is acked by a quorum.
  return srt[n - (Math.floor(n / 2) + 1)]!;
}

/** Election outcome for `votes` (true = granted; absent = not yet voted). Votes of non-members are ignored. */
export function majorityVoteResult(c: MajorityConfig, votes: ReadonlyMap<string, boolean>): VoteResult {
  if (c.size === 0) return "VoteWon";
  let yes = 0, missing = 0;
  for (const id of c) {
    const v = votes.get(id);
    if (v === undefined) missing++;
    else if (v) yes++;
  }
  const q = Math.floor(c.size / 2) + 1;
  if (yes >= q) return "VoteWon";
  if (yes + missing >= q) return "VotePending";
  return "VoteLost";
}

/** Committed index of a joint config: the minimum of both halves. */
export function jointCommittedIndex(c: JointConfig, acked: AckedIndexer): number {
  return Math.min(majorityCommittedIndex(c[0], acked), majorityCommittedIndex(c[1], acked));
}

/** Won only if won in both halves; lost if lost in either. */
export function jointVoteResult(c: JointConfig, votes: ReadonlyMap<string, boolean>): VoteResult {
  const r1 = majorityVoteResult(c[0], votes);
  const r2 = majorityVoteResult(c[1], votes);
  if (r1 === r2) return r1;
  if (r1 === "VoteLost" || r2 === "VoteLost") return "VoteLost";
  return "VotePending";
}

/** Union of both halves' IDs. */
export function jointIds(c: JointConfig): Set<string> {
  return new Set([...c[0], ...c[1]]);
}
