/**
 * The fixed CI seeds of the whole-cluster simulation (`bun run sim --seeds N` runs more), plus proofs
 * that a run replays from its seed and that the checkers catch broken Raft cores.
 */
import { describe, expect, test } from "bun:test";
import { RawNode, type Config } from "../../src/raft/index.ts";
import { CountingCommitRaft, NoElectionRestrictionRaft, safetyViolations } from "./broken_variants.ts";
import { runSimulation } from "./cluster_sim.ts";

export const CI_SEEDS = 300;

describe("simulation", () => {
  test(`safety and liveness hold for seeds 1..${CI_SEEDS}`, async () => {
    const failures: string[] = [];
    let refusedByLeader = 0, oversizedApplied = 0, tails = 0, runsWithTails = 0, figure8Runs = 0;
    for (let seed = 1; seed <= CI_SEEDS; seed++) {
      const r = await runSimulation({ seed });
      if (!r.ok) failures.push(`seed ${seed} (replay: bun run sim --seed ${seed}): ${r.violations.join("; ")}`);
      refusedByLeader += r.stats.tooLargeRefusedByLeader ?? 0;
      oversizedApplied += r.stats.oversizedApplied ?? 0;
      tails += r.stats.uncommittedTails ?? 0;
      if (r.stats.uncommittedTails) runsWithTails++;
      figure8Runs += r.stats.figure8 ?? 0;
    }
    console.log(`leader changes with uncommitted tails: ${tails} in ${runsWithTails} of ${CI_SEEDS} runs (${figure8Runs} ran the Figure 8 nemesis)`);
    expect(failures).toEqual([]);
    // New leaders holding entries of earlier terms past their commit index: the precondition of Figure 8.
    expect(tails).toBeGreaterThan(0);
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
    const caught = await firstCaught((c) => new RawNode(new NoElectionRestrictionRaft(c)));
    expect(caught).toBeDefined();
    console.log(`broken core (no election restriction) caught at seed ${caught!.seed}: ${caught!.violations[0]!.split("\n")[0]}`);
  }, 120_000);

  test("a core that commits earlier-term entries by counting (Figure 8) is caught within the CI seeds", async () => {
    const caught = await firstCaught((c) => new RawNode(new CountingCommitRaft(c)));
    expect(caught).toBeDefined();
    // The commit checker names what happened: a leader committed an earlier-term entry that was then lost.
    const lost = caught!.violations.find((v) => v.startsWith("committed entry lost:") && v.includes("earlier term"));
    expect(lost).toBeDefined();
    console.log(`broken core (commits by counting) caught at seed ${caught!.seed}: ${lost}`);
  }, 120_000);
});

/** The first CI seed whose run with this core reports a safety violation, with those violations. */
async function firstCaught(createRawNode: (c: Config) => RawNode): Promise<{ seed: number; violations: string[] } | undefined> {
  for (let seed = 1; seed <= CI_SEEDS; seed++) {
    const safety = safetyViolations((await runSimulation({ seed, createRawNode })).violations);
    if (safety.length) return { seed, violations: safety };
  }
  return undefined;
}
