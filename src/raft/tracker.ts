import { Progress } from "./progress.ts";
import type { VoteResult } from "./quorum.ts";
import { jointCommittedIndex, jointIds, jointVoteResult } from "./quorum.ts";
import type { ConfState } from "./types.ts";
import { sortedIds } from "./types.ts";

/**
 * A membership configuration (etcd tracker.Config). `voters[1]` (outgoing) is non-empty only while
 * joint. `learnersNext` holds outgoing voters that become learners when the joint config is left
 * (a node cannot be a voter and a learner at the same time).
 */
export interface TrackerConfig {
  voters: [incoming: Set<string>, outgoing: Set<string>];
  autoLeave: boolean;
  learners: Set<string>;
  learnersNext: Set<string>;
}

export type ProgressMap = Map<string, Progress>;

export function emptyConfig(): TrackerConfig {
  return { voters: [new Set(), new Set()], autoLeave: false, learners: new Set(), learnersNext: new Set() };
}

export function cloneConfig(c: TrackerConfig): TrackerConfig {
  return {
    voters: [new Set(c.voters[0]), new Set(c.voters[1])],
    autoLeave: c.autoLeave,
    learners: new Set(c.learners),
    learnersNext: new Set(c.learnersNext),
  };
}

export function isJoint(c: TrackerConfig): boolean {
  return c.voters[1].size > 0;
}

export function configToConfState(c: TrackerConfig): ConfState {
  return {
    voters: sortedIds(c.voters[0]),
    votersOutgoing: sortedIds(c.voters[1]),
    learners: sortedIds(c.learners),
    learnersNext: sortedIds(c.learnersNext),
    autoLeave: c.autoLeave,
  };
}

/** Readable form, e.g. "voters=(1 2)&&(1 2 3) learners=(4) autoleave". */
export function describeConfig(c: TrackerConfig): string {
  let s = `voters=(${sortedIds(c.voters[0]).join(" ")})`;
  if (c.voters[1].size > 0) s += `&&(${sortedIds(c.voters[1]).join(" ")})`;
  if (c.learners.size > 0) s += ` learners=(${sortedIds(c.learners).join(" ")})`;
  if (c.learnersNext.size > 0) s += ` learners_next=(${sortedIds(c.learnersNext).join(" ")})`;
  if (c.autoLeave) s += " autoleave";
  return s;
}

/** Tracks the active configuration, per-peer Progress and votes (etcd tracker.ProgressTracker). */
export class ProgressTracker {
  config: TrackerConfig = emptyConfig();
  progress: ProgressMap = new Map();
  votes = new Map<string, boolean>();

  constructor(readonly maxInflight: number) {}

  confState(): ConfState {
    return configToConfState(this.config);
  }

  /** Exactly one voter and not joint. */
  isSingleton(): boolean {
    return this.config.voters[0].size === 1 && this.config.voters[1].size === 0;
  }

  /** Largest index replicated on a quorum of voters (joint-aware). */
  committed(): number {
    return jointCommittedIndex(this.config.voters, (id) => this.progress.get(id)?.match);
  }

  /** Visits all progresses in sorted ID order (deterministic output). */
  visit(f: (id: string, pr: Progress) => void): void {
    for (const id of sortedIds(this.progress.keys())) f(id, this.progress.get(id)!);
  }

  /** Whether a quorum of voters was recently active (CheckQuorum, Raft thesis §6.2). */
  quorumActive(): boolean {
    const votes = new Map<string, boolean>();
    this.visit((id, pr) => {
      if (!pr.isLearner) votes.set(id, pr.recentActive);
    });
    return jointVoteResult(this.config.voters, votes) === "VoteWon";
  }

  voterIds(): string[] {
    return sortedIds(jointIds(this.config.voters));
  }

  learnerIds(): string[] {
    return sortedIds(this.config.learners);
  }

  resetVotes(): void {
    this.votes = new Map();
  }

  /** Records a vote; only the first vote of each peer counts. */
  recordVote(id: string, granted: boolean): void {
    if (!this.votes.has(id)) this.votes.set(id, granted);
  }

  tallyVotes(): { granted: number; rejected: number; result: VoteResult } {
    let granted = 0, rejected = 0;
    for (const [id, pr] of this.progress) {
      if (pr.isLearner) continue;
      const v = this.votes.get(id);
      if (v === undefined) continue;
      if (v) granted++;
      else rejected++;
    }
    return { granted, rejected, result: jointVoteResult(this.config.voters, this.votes) };
  }

  voteResult(votes: ReadonlyMap<string, boolean>): VoteResult {
    return jointVoteResult(this.config.voters, votes);
  }
}
