/**
 * Safety checkers of the whole-cluster simulation. Each records observations as the run goes and
 * reports violations as readable strings.
 */
import type { Entry } from "../../src/raft/index.ts";

/** At most one leader per term (Raft §5.2, Election Safety). */
export class ElectionSafety {
  private readonly leaders = new Map<number, string>();
  readonly violations: string[] = [];

  observeLeader(term: number, id: string, at: number): void {
    const prev = this.leaders.get(term);
    if (prev === undefined) this.leaders.set(term, id);
    else if (prev !== id) this.violations.push(`two leaders in term ${term}: ${prev} and ${id} (t=${at}ms)`);
  }

  terms(): number {
    return this.leaders.size;
  }
}

/**
 * State machine safety: every node applies the same command at the same index, and indexes only grow.
 * The first node to apply an index fixes its command; a node that applies something else at that index
 * means a committed entry was lost or changed.
 */
export class ApplySafety {
  private readonly byIndex = new Map<number, { command: string; node: string }>();
  private readonly lastApplied = new Map<string, number>();
  readonly violations: string[] = [];

  /** Per node: the index at which each command text was applied (client values are unique per operation). */
  private readonly appliedAt = new Map<string, Map<string, number>>();

  observeApply(node: string, index: number, command: string, at: number): void {
    let seen = this.appliedAt.get(node);
    if (!seen) this.appliedAt.set(node, (seen = new Map()));
    const before = seen.get(command);
    if (before !== undefined && before !== index) this.violations.push(`${node} applied ${command} twice, at ${before} and ${index} (t=${at}ms)`);
    seen.set(command, index);
    const last = this.lastApplied.get(node) ?? 0;
    if (index <= last) this.violations.push(`${node} applied index ${index} after ${last} (t=${at}ms)`);
    this.lastApplied.set(node, index);
    const first = this.byIndex.get(index);
    if (!first) this.byIndex.set(index, { command, node });
    else if (first.command !== command) {
      this.violations.push(`index ${index}: ${first.node} applied ${first.command} but ${node} applied ${command} (t=${at}ms)`);
    }
  }

  /** A node restored from a snapshot: its next apply may jump. */
  observeRestore(node: string, index: number): void {
    this.lastApplied.set(node, index);
  }

  maxIndex(): number {
    let m = 0;
    for (const k of this.byIndex.keys()) m = Math.max(m, k);
    return m;
  }
}

/**
 * Log Matching (Raft §5.3): if two logs hold an entry with the same index and term, the logs are
 * identical up to that index. Checked over the durable logs at the end of a run.
 */
export function checkLogMatching(logs: ReadonlyMap<string, readonly Entry[]>): string[] {
  const violations: string[] = [];
  const ids = [...logs.keys()].sort();
  const key = (e: Entry) => (e.type === "Normal" ? `N${e.term}:${Array.from(e.data).join(",")}` : `C${e.term}:${JSON.stringify(e.change.changes)}`);
  for (let i = 0; i < ids.length; i++) {
    for (let j = i + 1; j < ids.length; j++) {
      const a = new Map(logs.get(ids[i]!)!.map((e) => [e.index, e]));
      const b = new Map(logs.get(ids[j]!)!.map((e) => [e.index, e]));
      let match = 0;
      for (const [idx, ea] of a) if (b.get(idx)?.term === ea.term) match = Math.max(match, idx);
      for (const [idx, ea] of a) {
        if (idx > match) continue;
        const eb = b.get(idx);
        if (eb && key(ea) !== key(eb)) {
          violations.push(`log matching: ${ids[i]} and ${ids[j]} agree at index ${match} but differ at ${idx}`);
          break;
        }
      }
    }
  }
  return violations;
}
