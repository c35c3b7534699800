/**
 * Randomized in-process runs: 3 and 5 nodes, random ticks, proposals, compactions, drops, reordering,
 * duplication and isolation; then heal and require convergence. Checks election safety, log matching,
 * state machine safety (committed entries never change) and that all nodes apply the same sequence.
 * Failing runs print their seed; replay with RAFT_SEED=<seed>.
 */
import { expect, test } from "bun:test";
import { seededRng } from "../../src/platform/rng.ts";
import { RaftError } from "../../src/raft/index.ts";
import type { Message } from "../../src/raft/index.ts";
import { Cluster } from "./cluster.ts";

function runRandom(seed: number, size: number): string[] {
  const rng = seededRng(seed);
  const ids = Array.from({ length: size }, (_, i) => String(i + 1));
  const c = new Cluster(ids, {
    seed, checkQuorum: rng.next() < 0.5, preVote: rng.next() < 0.5, maxSizePerMsg: rng.int(3) * 8, maxInflightMsgs: 1 + rng.int(4),
  });
  const isolated = new Set<string>();
  let proposals = 0;
  const storages = () => new Map([...c.nodes].map(([id, n]) => [id, n.storage]));
  const report = (m: Message, ok: boolean) => {
    if (m.type === "MsgSnap") c.node(m.from).raw.reportSnapshot(m.to, ok ? "Finish" : "Failure");
  };

  for (let step = 0; step < 2500; step++) {
    for (const id of ids) if (rng.next() < 0.3) c.node(id).raw.tick();
    if (rng.next() < 0.3) {
      const id = ids[rng.int(size)]!;
      try { c.node(id).raw.propose(new TextEncoder().encode(`p${proposals++}`)); } catch (e) { if (!(e instanceof RaftError)) throw e; }
    }
    if (rng.next() < 0.01) {
      const n = c.node(ids[rng.int(size)]!);
      const idx = n.raw.raft.raftLog.applied - 2;
      const rec = n.snaps.get(idx);
      if (rec && idx > n.storage.snapshot().index && idx >= n.storage.firstIndex()) {
        n.storage.createSnapshot(idx, rec.confState);
        n.storage.compact(idx);
      }
    }
    if (rng.next() < 0.005) isolated.add(ids[rng.int(size)]!);
    if (rng.next() < 0.01) isolated.clear();
    c.processAll();
    const pool = c.pool;
    c.pool = [];
    // Random order; each message is dropped, delayed, duplicated or delivered.
    for (let i = pool.length - 1; i > 0; i--) {
      const j = rng.int(i + 1);
      [pool[i], pool[j]] = [pool[j]!, pool[i]!];
    }
    for (const m of pool) {
      const x = rng.next();
      if (isolated.has(m.from) || isolated.has(m.to) || x < 0.1) {
        report(m, false);
        continue;
      }
      if (x < 0.3) { c.pool.push(m); continue; }
      if (x < 0.33) c.deliver(m);
      c.deliver(m);
      report(m, true);
    }
    if (step % 50 === 0) c.checker.checkLogMatching(storages());
  }

  // Heal and converge.
  for (let step = 0; step < 3000; step++) {
    for (const id of ids) c.node(id).raw.tick();
    c.processAll();
    const pool = c.pool;
    c.pool = [];
    for (const m of pool) { c.deliver(m); report(m, true); }
    const applied = ids.map((id) => c.node(id).applied.join(","));
    const leader = ids.find((id) => c.node(id).raw.raft.state === "Leader");
    if (leader && applied.every((a) => a === applied[0]) &&
      ids.every((id) => c.node(id).raw.raft.raftLog.committed === c.node(leader).raw.raft.raftLog.lastIndex())) break;
  }
  c.checker.checkLogMatching(storages());
  const v = [...c.checker.violations];
  const first = c.node("1").applied;
  for (const id of ids) {
    const a = c.node(id).applied;
    if (a.join(",") !== first.join(",")) v.push(`node ${id} applied ${a.length} entries, node 1 applied ${first.length}: diverged`);
  }
  if (first.length === 0) v.push("no progress: nothing applied");
  if (process.env.RAFT_STATS) {
    const terms = Math.max(...ids.map((id) => c.node(id).raw.raft.term));
    console.log(`seed=${seed} size=${size} applied=${first.length}/${proposals} terms=${terms}`, Object.fromEntries(c.delivered));
  }
  return v;
}

const seeds = process.env.RAFT_SEED ? [Number(process.env.RAFT_SEED)] : [1, 2, 3, 4, 5, 6, 7, 8];
for (const size of [3, 5]) {
  test(`randomized ${size} nodes`, () => {
    for (const seed of seeds) {
      const v = runRandom(seed, size);
      if (v.length > 0) console.error(`randomized raft run failed: seed=${seed} size=${size}`);
      expect({ seed, size, violations: v }).toEqual({ seed, size, violations: [] });
    }
  });
}
