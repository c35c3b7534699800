/**
 * Commit-level checks of the whole-cluster simulation, made on the Raft cores themselves: what each
 * server's core hands out as committed, and what a newly elected leader finds in its log.
 */
import type { Entry, RawNode, Ready } from "../../src/raft/index.ts";

/**
 * State Machine Safety (Raft §5.4.3) at the commit point: once any server's core hands out an entry
 * as committed at an index, every server's core must hand out the same entry (term and data) there.
 * Unlike ApplySafety it also sees leaders' empty entries, so a committed entry that a later leader
 * overwrites with its own empty entry (Raft Figure 8) is still reported.
 */
export class CommitSafety {
  private readonly byIndex = new Map<number, { entry: Entry; node: string; by: Committer; at: number }>();
  /** Indexes already reported: every further server would repeat the same finding. */
  private readonly reported = new Set<number>();
  readonly violations: string[] = [];

  /** `by` is the observing core's state when it handed `e` out as committed. */
  observeCommitted(node: string, e: Entry, by: Committer, at: number): void {
    const first = this.byIndex.get(e.index);
    if (!first) {
      this.byIndex.set(e.index, { entry: e, node, by, at });
      return;
    }
    if (sameEntry(first.entry, e) || this.reported.has(e.index)) return;
    this.reported.add(e.index);
    const who = first.by.leader ? `${first.node} (leader of term ${first.by.term})` : first.node;
    const earlierTerm = first.by.leader && first.entry.term < first.by.term
      ? `; ${first.node} committed an entry of an earlier term than its own, which Raft allows only by committing ` +
        `an entry of its own term after it (§5.4.2, Figure 8)`
      : "";
    this.violations.push(
      `committed entry lost: ${who} committed index ${e.index} with term ${first.entry.term} (t=${first.at}ms) ` +
        `but ${node} later committed term ${e.term} there (t=${at}ms)${earlierTerm}`,
    );
  }
}

/** A core's state when it hands out committed entries. */
export interface Committer {
  readonly term: number;
  readonly leader: boolean;
}

/**
 * Wraps `raw.ready` so that every entry it hands out as committed is passed to `onCommitted` first,
 * with the core's term and role at that moment.
 */
export function observeCommits(raw: RawNode, onCommitted: (e: Entry, by: Committer) => void): RawNode {
  const ready = raw.ready.bind(raw);
  raw.ready = (): Ready => {
    const rd = ready();
    const by = { term: raw.raft.term, leader: raw.raft.state === "Leader" };
    for (const e of rd.committedEntries) onCommitted(e, by);
    return rd;
  };
  return raw;
}

/**
 * Whether a leader's log holds entries past the commit index it knows that are of an earlier term
 * than its own: entries it must not commit by counting replicas, only by committing one of its own
 * term after them (Raft §5.4.2). Called when a server becomes leader, this is the precondition of
 * the paper's Figure 8.
 */
export function hasUncommittedTail(raw: RawNode): boolean {
  const r = raw.raft;
  const log = r.raftLog;
  return log.lastIndex() > log.committed && log.termOrZero(log.committed + 1) < r.term;
}

/** Same term and type, and for a normal entry the same bytes (a conf change is known by its term). */
function sameEntry(a: Entry, b: Entry): boolean {
  if (a.term !== b.term || a.type !== b.type) return false;
  if (a.type !== "Normal" || b.type !== "Normal") return true;
  if (a.data.length !== b.data.length) return false;
  for (let i = 0; i < a.data.length; i++) if (a.data[i] !== b.data[i]) return false;
  return true;
}
