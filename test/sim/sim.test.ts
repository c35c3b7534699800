/**
 * The fixed CI seeds of the whole-cluster simulation (`bun run sim --seeds N` runs more), plus proofs
 * that a run replays from its seed and that the checkers catch a broken Raft core.
 */
import { describe, expect, test } from "bun:test";
import { RawNode } from "../../src/raft/index.ts";
import { NoElectionRestrictionRaft, safetyViolations } from "./broken_variants.ts";
import { runSimulation } from "./cluster_sim.ts";

export const CI_SEEDS = 300;

describe("simulation", () => {
  test(`safety and liveness hold for seeds 1..${CI_SEEDS}`, async () => {
    const failures: string[] = [];
    let refusedByLeader = 0, oversizedApplied = 0;
    for (let seed = 1; seed <= CI_SEEDS; seed++) {
      const r = await runSimulation({ seed });
      if (!r.ok) failures.push(`seed ${seed} (replay: bun run sim --seed ${seed}): ${r.violations.join("; ")}`);
      refusedByLeader += r.stats.tooLargeRefusedByLeader ?? 0;
      oversizedApplied += r.stats.oversizedApplied ?? 0;
    }
    expect(failures).toEqual([]);
    // The seeds exercise both sides of the entry limit: a misconfigured server's oversized proposal refused
    // by the leader (a definite error its client saw), and one it appended as leader.
    expect(refusedByLeader).toBeGreaterThan(0);
    expect(oversizedApplied).toBeGreaterThan(0);
  }, 240_000);

  test("a run replays exactly from its seed", async () => {
    const a = await runSimulation({ seed: 4242 });
    const b = await runSimulation({ seed: 4242 });
    expect(b).toEqual(a);
    expect(a.stats.ops).toBeGreaterThan(20);
  });

  test("a core without the election restriction is caught within the CI seeds", async () => {
    let caught: { seed: number; violations: string[] } | undefined;
    for (let seed = 1; seed <= CI_SEEDS && !caught; seed++) {
      const r = await runSimulation({ seed, createRawNode: (c) => new RawNode(new NoElectionRestrictionRaft(c)) });
      const safety = safetyViolations(r.violations);
      if (safety.length) caught = { seed, violations: safety };
    }
    expect(caught).toBeDefined();
    console.log(`broken core caught at seed ${caught!.seed}: ${caught!.violations[0]!.split("\n")[0]}`);
  }, 120_000);
});
