/**
 * Runs the whole-cluster simulation over many seeds:
 *
 *   bun run sim --seeds 10000 [--start 1]      every seed in [start, start+seeds)
 *   bun run sim --seed 1234 [--verbose]        one seed, with the servers' logs when --verbose
 *
 * Prints each failing seed with its violations and a summary (with the leader changes whose new leader
 * held an uncommitted tail of earlier-term entries, the precondition of Raft's Figure 8); exits 1 if
 * any seed failed.
 */
import { createLogger } from "../../src/platform/index.ts";
import { runSimulation } from "./cluster_sim.ts";

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

const single = arg("seed");
const start = Number(single ?? arg("start") ?? 1);
const count = single ? 1 : Number(arg("seeds") ?? 200);
const verbose = process.argv.includes("--verbose");
if (!Number.isInteger(start) || !Number.isInteger(count) || count < 1) {
  console.error("usage: bun run sim [--seeds N] [--start S] | --seed S [--verbose]");
  process.exit(2);
}
const began = performance.now();
let failed = 0, tails = 0, runsWithTails = 0, figure8Runs = 0;
for (let seed = start; seed < start + count; seed++) {
  const logger = verbose ? createLogger("sim", { level: "debug", sink: (l) => console.log(l) }) : undefined;
  const r = await runSimulation({ seed, logger });
  tails += r.stats.uncommittedTails ?? 0;
  if (r.stats.uncommittedTails) runsWithTails++;
  figure8Runs += r.stats.figure8 ?? 0;
  if (!r.ok) {
    failed++;
    console.log(`seed ${seed} FAILED\n  ${r.violations.join("\n  ")}\n  stats ${JSON.stringify(r.stats)}`);
  } else if (single) {
    console.log(`seed ${seed} ok ${JSON.stringify(r.stats)}`);
  }
  if (single) console.log(`leader changes with uncommitted tails: ${r.stats.uncommittedTails ?? 0}${r.stats.figure8 ? " (Figure 8 nemesis)" : ""}`);
  if (!single && (seed - start + 1) % 1000 === 0) console.log(`... ${seed - start + 1} seeds, ${failed} failed`);
}
const secs = ((performance.now() - began) / 1000).toFixed(1);
if (!single) console.log(`leader changes with uncommitted tails: ${tails} in ${runsWithTails} of ${count} runs (${figure8Runs} ran the Figure 8 nemesis)`);
console.log(`${count - failed} seeds passed, ${failed} failed (seeds ${start}..${start + count - 1}, ${secs}s)`);
process.exit(failed ? 1 : 0);
