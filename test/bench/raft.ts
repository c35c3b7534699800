/**
 * Raft micro-benchmark: commit throughput and latency of the consensus driver on the real disk with
 * fsync, 1 and 3 servers in one process (in-memory transport), 1 and 64 concurrent proposers, 256-byte
 * commands. The peer measured in the same run is the disk itself: 256-byte appends each followed by an
 * fsync, the rate a log without group commit could reach at best.
 *
 *   bun run bench:raft [--seconds 3]
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createMemoryNetwork } from "../../src/consensus/index.ts";
import { nodeFileSystem } from "../../src/platform/index.ts";
import { encodeKvCommand } from "../harness/kv_state_machine.ts";
import { startRealNode, waitFor, type RealNode } from "../harness/real_raft.ts";

const secondsFlag = process.argv.indexOf("--seconds");
const seconds = secondsFlag > 0 ? Number(process.argv[secondsFlag + 1]) : 3;
if (!(seconds > 0)) throw new Error("--seconds needs a positive number");
const COMMAND_BYTES = 256;

function command(i: number): Uint8Array {
  const base = { op: "put" as const, key: `k${i % 1000}`, value: "" };
  const overhead = encodeKvCommand(base).length;
  return encodeKvCommand({ ...base, value: "x".repeat(Math.max(0, COMMAND_BYTES - overhead)) });
}

async function rawFsyncRate(dir: string, ms: number): Promise<number> {
  const f = nodeFileSystem().openAppend(join(dir, "raw.bin"));
  const buf = new Uint8Array(COMMAND_BYTES);
  let n = 0;
  const end = performance.now() + ms;
  while (performance.now() < end) {
    f.append(buf);
    await f.sync();
    n++;
  }
  f.close();
  return (n * 1000) / ms;
}

interface Result { nodes: number; proposers: number; commitsPerSec: number; p50: number; p99: number; commitsPerFsync: number }

async function run(dir: string, nodes: number, proposers: number): Promise<Result> {
  const net = createMemoryNetwork();
  const ids = Array.from({ length: nodes }, (_, i) => `n${i + 1}`);
  const cluster: RealNode[] = [];
  for (const id of ids) cluster.push(await startRealNode({ id, dir: join(dir, `${nodes}-${proposers}-${id}`), bootstrap: ids, peerPorts: new Map(), transport: net.join(id), snapshotEntries: 1_000_000 }));
  try {
    await waitFor(() => cluster.some((n) => n.node.status().role === "Leader"), 10_000, "a leader");
    const leader = cluster.find((n) => n.node.status().role === "Leader")!;
    for (let i = 0; i < 100; i++) await leader.node.propose(command(i));
    const fsyncsBefore = leader.store.stats().fsyncs;
    const latencies: number[] = [];
    let commits = 0;
    const end = performance.now() + seconds * 1000;
    const proposer = async (p: number) => {
      for (let i = 0; performance.now() < end; i++) {
        const t = performance.now();
        await leader.node.propose(command(p * 1_000_000 + i));
        latencies.push(performance.now() - t);
        commits++;
      }
    };
    const began = performance.now();
    await Promise.all(Array.from({ length: proposers }, (_, p) => proposer(p)));
    const elapsed = performance.now() - began;
    latencies.sort((a, b) => a - b);
    const pct = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? Number.NaN;
    const fsyncs = leader.store.stats().fsyncs - fsyncsBefore;
    return { nodes, proposers, commitsPerSec: (commits * 1000) / elapsed, p50: pct(0.5), p99: pct(0.99), commitsPerFsync: commits / Math.max(1, fsyncs) };
  } finally {
    for (const n of cluster) await n.close();
  }
}

const dir = mkdtempSync(join(tmpdir(), "causeway-bench-raft-"));
try {
  const raw = await rawFsyncRate(dir, seconds * 1000);
  const results: Result[] = [];
  for (const nodes of [1, 3]) for (const proposers of [1, 64]) results.push(await run(dir, nodes, proposers));
  console.log(`disk baseline: ${raw.toFixed(0)} fsync'd ${COMMAND_BYTES}-byte appends/s`);
  console.log("| servers | proposers | commits/s | vs disk baseline | p50 ms | p99 ms | commits per fsync (leader) |");
  console.log("|---|---|---|---|---|---|---|");
  for (const r of results) {
    console.log(`| ${r.nodes} | ${r.proposers} | ${r.commitsPerSec.toFixed(0)} | ${(r.commitsPerSec / raw).toFixed(2)}x | ${r.p50.toFixed(2)} | ${r.p99.toFixed(2)} | ${r.commitsPerFsync.toFixed(1)} |`);
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
