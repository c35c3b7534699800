/**
 * Deliberately broken Raft cores, used only to prove that the simulation's checkers catch real bugs.
 */
import { Raft, type Config } from "../../src/raft/index.ts";

/** Grants votes and pre-votes without the election restriction (Raft §5.4.1): stale logs can win. */
export class NoElectionRestrictionRaft extends Raft {
  constructor(config: Config) {
    super(config);
    this.raftLog.isUpToDate = () => true;
  }
}

/**
 * Commits whatever a quorum holds, even entries of earlier terms (forbidden by Raft §5.4.2, Figure 8).
 * Caught by the simulation's Figure 8 nemesis and by the scripted test/raft/figure8.test.ts.
 */
export class CountingCommitRaft extends Raft {
  override maybeCommit(): boolean {
    const idx = Math.min(this.trk.committed(), this.raftLog.lastIndex());
    if (idx <= this.raftLog.committed) return false;
    this.raftLog.commitTo(idx);
    return true;
  }
}

/** Violations that are about safety (not liveness or message volume). */
export function safetyViolations(violations: readonly string[]): string[] {
  return violations.filter((v) => !v.startsWith("liveness:") && !v.startsWith("message storm:"));
}
