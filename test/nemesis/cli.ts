/**
 * The real-process nemesis (root: network namespaces and nftables):
 *
 *   npm run nemesis -- [--servers 3|5] [--duration 60] [--seed 1] [--runs 1] [--clients 8] [--keys 8] [--strict-unknowns] [--keep-history]
 *
 * Each run uses seed, seed+1, ...; prints its faults, operation totals and the checker's verdict;
 * a failing run names its seed and the history file. Exits 1 if any run failed. Unanswered writes
 * may take effect up to 60 s after their call (--strict-unknowns: until the end of the run).
 * --keep-history writes the history file of a passing run too.
 */
import { writeFileSync } from "node:fs";
import type { LockHold } from "./locks.ts";
import { runNemesis } from "./run.ts";

function num(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  if (i < 0) return fallback;
  const v = Number(process.argv[i + 1]);
  if (!Number.isInteger(v) || v < 0) {
    console.error(`--${name}: expected a non-negative integer, got ${JSON.stringify(process.argv[i + 1])}`);
    process.exit(2);
  }
  return v;
}

const servers = num("servers", 3);
const durationS = num("duration", 60);
const seed = num("seed", 1);
const runs = num("runs", 1);
if (servers < 3) {
  console.error("--servers: at least 3 (the faults keep a majority)");
  process.exit(2);
}
let failed = 0;
let totals = { ok: 0, unknown: 0, failed: 0, faults: 0 };
for (let r = 0; r < runs; r++) {
  const report = await runNemesis({ servers, durationMs: durationS * 1000, seed: seed + r, clients: num("clients", 8), keys: num("keys", 8), strictUnknowns: process.argv.includes("--strict-unknowns"), keepHistory: process.argv.includes("--keep-history"), log: (l) => console.log(`  ${l}`) });
  totals = { ok: totals.ok + report.operations.ok, unknown: totals.unknown + report.operations.unknown, failed: totals.failed + report.operations.failed, faults: totals.faults + report.faults.length };
  const verdict = report.result.kind === "ok" ? "linearizable" : report.result.kind === "unknown" ? `UNKNOWN (${report.result.reason})` : `NOT LINEARIZABLE (key partition ${report.result.partition})`;
  const locks = `${report.locks.acquired} lock holds (${report.locks.refused} refused, ${report.locks.errors} errors), ${report.lockViolations.length} overlapping`;
  const disk = `${report.transfers.succeeded} of ${report.transfers.asked} leader transfers done; ${report.disk.faults} disk-full faults (${report.disk.serversRefused} servers refused writes, logs reopened ${report.disk.reopened} times); ${report.snapshots.taken} Raft snapshots taken, ${report.snapshots.installed} installed from a leader`;
  console.log(`seed ${report.seed}: ${report.faults.length} faults, ${report.operations.ok} ok / ${report.operations.unknown} unknown / ${report.operations.failed} failed operations: ${verdict}; ${locks}; ${disk}`);
  const hold = (h: LockHold) => `client ${h.client} (session ${h.session} via s${h.via}, called ${h.called?.toFixed(0)} ms, server saw ${h.seen ? `${h.seen.session || "no holder"} LockIndex ${h.seen.lockIndex}` : "nothing"})`;
  for (const [a, b] of report.lockViolations.slice(0, 5)) console.log(`  lock ${a.lock}: ${hold(a)} held ${a.from.toFixed(0)}-${a.to.toFixed(0)} ms; ${hold(b)} from ${b.from.toFixed(0)} ms`);
  if (report.historyFile && report.result.kind === "ok" && report.lockViolations.length === 0) console.log(`  history (kept): ${report.historyFile}`);
  if (report.result.kind !== "ok" || report.lockViolations.length > 0) {
    failed++;
    if (report.result.kind === "illegal") console.log(`  longest linearizable prefix:\n    ${report.result.longestPrefix.slice(-20).join("\n    ")}`);
    console.log(`  history: ${report.historyFile}`);
    if (report.serverOutput && report.historyFile) {
      writeFileSync(`${report.historyFile}.servers.log`, report.serverOutput);
      console.log(`  servers' output: ${report.historyFile}.servers.log`);
    }
  }
}
console.log(`${runs - failed} runs passed, ${failed} failed; ${totals.faults} faults, ${totals.ok} ok / ${totals.unknown} unknown / ${totals.failed} failed operations (${servers} servers, ${durationS} s each, seeds ${seed}..${seed + runs - 1})`);
process.exit(failed ? 1 : 0);
