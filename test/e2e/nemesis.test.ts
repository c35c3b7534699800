/**
 * The real-process nemesis's CI profile (the long runs: `npm run nemesis -- --duration 1800`): three
 * servers, each in its own network namespace, under a seeded plan of partitions, a leader isolated,
 * one-way cuts, kill -9 and restart, SIGSTOP, packet loss, slow links, leader transfers, full disks (a server's log write fails with
 * ENOSPC; it rejoins when space returns); clients read (?consistent), write and CAS a
 * few keys on random servers, and the history must be linearizable. The same nemesis with stale reads
 * (the broken variant) must be caught by the checker. Needs root; every process and namespace is
 * removed by PID and by name.
 */
import { expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { runNemesis, type NemesisReport } from "../nemesis/run.ts";

/** Removes a run's history files once its assertions passed (a failure keeps them and prints their path). */
const removeHistory = (r: NemesisReport) => {
  if (r.historyFile) for (const suffix of ["", ".locks", ".dropped"]) rmSync(`${r.historyFile}${suffix}`, { force: true });
};

const summary = (r: NemesisReport) =>
  `seed ${r.seed}: ${r.faults.length} faults (${r.faults.join("; ")}); ${r.operations.ok} ok / ${r.operations.unknown} unknown / ${r.operations.failed} failed; ${r.result.kind}; ` +
  `${r.locks.acquired} lock holds, ${r.lockViolations.length} overlapping; ${r.disk.faults} disk-full faults, ${r.disk.serversRefused} servers refused writes, log reopened ${r.disk.reopened} times; ${r.transfers.succeeded} of ${r.transfers.asked} leader transfers done; ${r.snapshots.taken} Raft snapshots taken, ${r.snapshots.installed} installed`;

test("three servers under a seeded nemesis: every history linearizable", async () => {
  const report = await runNemesis({ servers: 3, durationMs: 40_000, seed: 198 });
  console.log(summary(report));
  if (report.result.kind !== "ok") console.log(`history: ${report.historyFile}\n${report.serverOutput}`);
  expect(report.result.kind).toBe("ok");
  expect(report.faults.length).toBeGreaterThanOrEqual(4);
  expect(report.operations.ok).toBeGreaterThan(1_000);
  expect(report.lockViolations).toEqual([]);
  expect(report.locks.acquired).toBeGreaterThan(20);
  // Seed 198's plan: a slow link, a full disk, loss, kill -9, leader transfers. The full server's log
  // write failed and it reopened its log; the run's end (every server agreeing on one leader) shows it
  // rejoined once space returned.
  expect(report.faults.map((f) => f.replace(/^[\d.]+ s: /, "").replace(/ for [\d.]+ s$/, ""))).toEqual([
    "links of [0] slowed to 1024 kbit/s", "disk full [1]", "13% packet loss everywhere", "kill -9 [0]", "leader transfers",
  ]);
  expect(report.transfers.succeeded).toBeGreaterThanOrEqual(1);
  expect(report.disk.faults).toBe(1);
  expect(report.disk.serversRefused).toBeGreaterThanOrEqual(1);
  expect(report.disk.reopened).toBeGreaterThanOrEqual(1);
  // Snapshots (raft_snapshot_threshold 256) were taken under the faults, off the Raft loop.
  expect(report.snapshots.taken).toBeGreaterThanOrEqual(3);
  removeHistory(report);
}, 180_000);

test("the broken variant (stale reads) is caught under the same nemesis", async () => {
  const report = await runNemesis({ servers: 3, durationMs: 20_000, seed: 1, readMode: "stale" });
  console.log(summary(report));
  if (report.result.kind !== "illegal") console.log(`history: ${report.historyFile}`);
  expect(report.result.kind).toBe("illegal");
  removeHistory(report);
}, 180_000);
