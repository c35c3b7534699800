/**
 * Safety checkers for Raft runs: state machine safety (an index, once applied anywhere, always holds the
 * same entry everywhere), election safety (one leader per term) and log matching.
 */
import type { Entry, MemoryStorage } from "../../src/raft/index.ts";
import { describeEntry } from "../../src/raft/index.ts";

function key(e: Entry): string {
  return describeEntry(e);
}

export class SafetyChecker {
  private readonly applied = new Map<number, { key: string; by: string }>();
  private readonly leaders = new Map<number, string>();
  readonly violations: string[] = [];

  /** Node `id` applied `e`. Every node must apply the same entry at the same index. */
  observeApplied(id: string, e: Entry): void {
    const k = key(e);
    const prev = this.applied.get(e.index);
    if (!prev) this.applied.set(e.index, { key: k, by: id });
    else if (prev.key !== k) {
      this.violations.push(`state machine safety: index ${e.index} applied as ${prev.key} by ${prev.by} but as ${k} by ${id}`);
    }
  }

  observeLeader(term: number, id: string): void {
    const prev = this.leaders.get(term);
    if (prev === undefined) this.leaders.set(term, id);
    else if (prev !== id) this.violations.push(`election safety: term ${term} has leaders ${prev} and ${id}`);
  }

  /** Log matching: if two logs hold an entry with the same index and term, all entries up to it are identical. */
  checkLogMatching(logs: ReadonlyMap<string, MemoryStorage>): void {
    const all = [...logs.entries()];
    for (let a = 0; a < all.length; a++) {
      for (let b = a + 1; b < all.length; b++) {
        const [ia, sa] = all[a]!, [ib, sb] = all[b]!;
        const lo = Math.max(sa.firstIndex(), sb.firstIndex());
        const hi = Math.min(sa.lastIndex(), sb.lastIndex());
        if (hi < lo) continue;
        const ea = sa.entries(lo, hi + 1, Number.MAX_SAFE_INTEGER);
        const eb = sb.entries(lo, hi + 1, Number.MAX_SAFE_INTEGER);
        // Find the highest index where the terms agree; everything from lo up to it must be identical.
        let top = -1;
        for (let i = ea.length - 1; i >= 0; i--) if (ea[i]!.term === eb[i]!.term) { top = i; break; }
        for (let i = 0; i <= top; i++) {
          if (key(ea[i]!) !== key(eb[i]!)) {
            this.violations.push(`log matching: ${ia} and ${ib} agree at index ${ea[top]!.index} but differ at ${ea[i]!.index}: ${key(ea[i]!)} vs ${key(eb[i]!)}`);
            return;
          }
        }
      }
    }
  }
}
