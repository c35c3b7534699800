/**
 * One nemesis run: a cluster of real servers in network namespaces, clients writing and reading a few
 * keys, and faults from a seeded plan (see faults.ts); at the end the network heals, the cluster must
 * agree on a leader again, every client reads every key once more, and the whole history goes through
 * the linearizability checker. A failure writes the history to a file and names the seed.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { seededRng, type Rng } from "../../src/platform/index.ts";
import { checkLinearizable, kvModel, type CheckResult } from "../harness/linearizability.ts";
import { NemesisCluster } from "./cluster.ts";
import { describeFault, planFaults, type Fault } from "./faults.ts";
import { checkLockHolds, startLockClients, type LockHold, type LockStats } from "./locks.ts";
import { startWorkload, type WorkloadStats } from "./workload.ts";

export interface NemesisOptions {
  readonly servers: number;
  readonly durationMs: number;
  readonly seed: number;
  readonly clients?: number;
  readonly keys?: number;
  /** The clients' read mode: "stale" is the broken variant (not linearizable under partitions). */
  readonly readMode?: "consistent" | "stale";
  /** Keep unanswered writes open to the end of the run (see UNKNOWN_EFFECT_WINDOW_MS). */
  readonly strictUnknowns?: boolean;
  /** Write the history file even when the run passes (for measuring the checker on it). */
  readonly keepHistory?: boolean;
  /** Progress lines (default: none). */
  readonly log?: (line: string) => void;
}

export interface NemesisReport {
  readonly seed: number;
  readonly servers: number;
  readonly operations: WorkloadStats;
  readonly faults: readonly string[];
  readonly result: CheckResult;
  readonly locks: LockStats;
  readonly disk: DiskFullStats;
  readonly transfers: TransferStats;
  /** Raft snapshots the servers took, and installed from a leader, in the run (from their logs). */
  readonly snapshots: { readonly taken: number; readonly installed: number };
  /** Overlapping holds of one lock by two clients (must be none). */
  readonly lockViolations: readonly [LockHold, LockHold][];
  /** Where the history was written when the check failed. */
  readonly historyFile?: string;
  /** The servers' output when the check failed. */
  readonly serverOutput?: string;
}

/** How long after its call an unanswered write may still take effect, for the checker (see runNemesis). */
export const UNKNOWN_EFFECT_WINDOW_MS = 60_000;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, Math.max(0, ms)));

export async function runNemesis(o: NemesisOptions): Promise<NemesisReport> {
  const log = o.log ?? (() => {});
  const work = mkdtempSync(join(tmpdir(), "causeway-nemesis-"));
  const cluster = new NemesisCluster(work, o.servers);
  const rng = seededRng(o.seed);
  const faults: string[] = [];
  const disk: DiskFullStats = { faults: 0, serversRefused: 0, reopened: 0 };
  const transfers: TransferStats = { asked: 0, succeeded: 0 };
  try {
    cluster.build();
    await cluster.startAll();
    const first = await cluster.waitLeader(60_000);
    log(`seed ${o.seed}: ${o.servers} servers up, leader s${first}`);
    const plan = planFaults(rng, { servers: o.servers, durationMs: o.durationMs });
    const transferRng = seededRng(o.seed + 4);
    const t0 = performance.now();
    log(`t0 (the 0 of every time below) is ${new Date().toISOString()}`);
    const workload = startWorkload({ target: cluster, clients: o.clients ?? 8, keys: o.keys ?? 8, rng: seededRng(o.seed + 1), opTimeoutMs: 3_000, t0, readMode: o.readMode });
    const lockClients = startLockClients({ target: cluster, clients: 3, locks: 2, rng: seededRng(o.seed + 3), opTimeoutMs: 3_000, t0 });

    for (const p of plan) {
      await sleep(p.at - (performance.now() - t0));
      const heal = await apply(cluster, p.fault, disk, transfers, transferRng);
      const line = `${((performance.now() - t0) / 1000).toFixed(1)} s: ${describeFault(p.fault)} for ${(p.forMs / 1000).toFixed(1)} s`;
      faults.push(line);
      log(line);
      await sleep(p.forMs);
      await heal();
    }
    await sleep(o.durationMs - (performance.now() - t0));
    cluster.healNetwork();
    for (let i = 0; i < o.servers; i++) cluster.emptyDisk(i);
    await Promise.all([workload.stop(), lockClients.stop()]);
    // Recovery: one leader again, and a last read of every key by one client through each server.
    const leader = await cluster.waitLeader(60_000);
    log(`healed; leader s${leader}; ${workload.stats.ok} ok, ${workload.stats.unknown} unknown, ${workload.stats.failed} failed`);
    const final = startWorkload({ target: { size: 1, url: () => cluster.url(leader) }, clients: 1, keys: o.keys ?? 8, rng: seededRng(o.seed + 2), opTimeoutMs: 10_000, t0 });
    await sleep(2_000);
    await final.stop();
    // An unanswered write takes effect, if at all, within UNKNOWN_EFFECT_WINDOW_MS of its call (faults
    // last at most seconds; a proposal is committed or discarded by the next leader). Without this
    // bound every unknown write stays a candidate to the end of the run and a long run's search
    // explodes; `strictUnknowns` keeps them open (Infinity) as the checker allows.
    const window = o.strictUnknowns ? Infinity : UNKNOWN_EFFECT_WINDOW_MS;
    const history = [...workload.history, ...final.history].map((h) => (Number.isFinite(h.returnTime) ? h : { ...h, returnTime: h.callTime + window, outcomeUnknown: true }));
    const operations = { ok: workload.stats.ok + final.stats.ok, failed: workload.stats.failed + final.stats.failed, unknown: workload.stats.unknown + final.stats.unknown };
    const reasons = new Map<string, number>();
    for (const d of workload.dropped) {
      const r = d.reason.replace(/http:\/\/[^ ]+/, "").replace(/[0-9a-f-]{36}/g, "<id>").slice(0, 80);
      reasons.set(r, (reasons.get(r) ?? 0) + 1);
    }
    for (const [r, n] of reasons) log(`writes left out as not done: ${n} x ${r}`);
    // A 30-minute run holds about 80,000 operations per key: more steps than the default budget.
    const result = checkLinearizable(kvModel, history, 20_000_000);
    const lockViolations = checkLockHolds(lockClients.holds);
    const output = cluster.dump();
    disk.reopened = output.split(LOG_REJOINED).length - 1;
    const snapshots = { taken: output.split(SNAPSHOT_TAKEN).length - 1, installed: output.split(SNAPSHOT_INSTALLED).length - 1 };
    const base = { seed: o.seed, servers: o.servers, operations, faults, result, locks: lockClients.stats, lockViolations, disk, transfers, snapshots };
    const passed = result.kind === "ok" && lockViolations.length === 0;
    if (passed && !o.keepHistory) return base;
    const historyFile = join(tmpdir(), `causeway-nemesis-seed-${o.seed}-${Date.now()}.json`);
    writeFileSync(historyFile, JSON.stringify(history.map((h) => ({ ...h, returnTime: Number.isFinite(h.returnTime) ? h.returnTime : null })), null, 1));
    writeFileSync(`${historyFile}.locks`, JSON.stringify(lockClients.holds, null, 1));
    writeFileSync(`${historyFile}.dropped`, JSON.stringify([...workload.dropped, ...final.dropped], null, 1));
    return { ...base, historyFile, serverOutput: passed ? undefined : cluster.dump() };
  } catch (err) {
    // A run that could not finish (no leader after healing, a server that would not start): keep what
    // the servers said.
    const file = join(tmpdir(), `causeway-nemesis-seed-${o.seed}-${Date.now()}.log`);
    writeFileSync(file, `${faults.join("\n")}\n${cluster.dump()}`);
    throw new Error(`nemesis seed ${o.seed}: ${(err as Error).message} (faults and server output: ${file})`, { cause: err });
  } finally {
    await cluster.destroy();
    rmSync(work, { recursive: true, force: true });
  }
}

/**
 * What the disk-full faults did: faults, servers whose log write failed, and how often a server reopened
 * its log (a reopen while still full fails again and backs off). That every server rejoined once space
 * returned is shown by the end of the run: every server must agree on one leader again.
 */
export interface DiskFullStats {
  faults: number;
  serversRefused: number;
  reopened: number;
}

/** What the leader-transfer faults did: transfers asked for, and those answered {"Success":true}. */
export interface TransferStats {
  asked: number;
  succeeded: number;
}

/**
 * Hands leadership over every 1-2 s until stopped: `POST /v1/operator/raft/transfer-leader` at a random
 * server, half the time naming a random other voter (from the Raft configuration), else letting the
 * leader pick. Answers are counted, not required: a transfer may meet a fault or an election.
 */
function startTransfers(cluster: NemesisCluster, rng: Rng, stats: TransferStats): () => Promise<void> {
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      const at = cluster.url(rng.int(cluster.size));
      try {
        let id = "";
        if (rng.int(2) === 0) {
          const conf = (await (await fetch(`${at}/v1/operator/raft/configuration`, { signal: AbortSignal.timeout(2_000) })).json()) as { Servers: { ID: string; Leader: boolean }[] };
          const others = conf.Servers.filter((x) => !x.Leader);
          id = others[rng.int(others.length)]?.ID ?? "";
        }
        stats.asked++;
        const res = await fetch(`${at}/v1/operator/raft/transfer-leader${id ? `?id=${id}` : ""}`, { method: "POST", signal: AbortSignal.timeout(8_000), keepalive: false });
        if (res.ok && ((await res.json()) as { Success?: boolean }).Success) stats.succeeded++;
      } catch {
        // a server down or cut off: the next one
      }
      await sleep(1_000 + rng.int(1_000));
    }
  })();
  return async () => {
    stopped = true;
    await loop;
  };
}

const LOG_FAILED = "raft log failed";
/** The servers' log lines for a Raft snapshot taken here, and one installed from the leader (consensus/node.ts). */
const SNAPSHOT_TAKEN = "took snapshot";
const SNAPSHOT_INSTALLED = "installed snapshot from leader";
const LOG_REJOINED = "raft log writable again";

/** Starts a fault; resolves with what heals it. */
async function apply(cluster: NemesisCluster, f: Fault, disk: DiskFullStats, transfers: TransferStats, rng: Rng): Promise<() => Promise<void>> {
  const others = (i: number) => Array.from({ length: cluster.size }, (_, j) => j).filter((j) => j !== i);
  switch (f.kind) {
    case "partition":
      cluster.partition(f.groups);
      return async () => cluster.healNetwork();
    case "isolate-leader": {
      const l = (await cluster.leader()) ?? 0;
      cluster.partition([[l], others(l)]);
      return async () => cluster.healNetwork();
    }
    case "one-way":
      cluster.oneWay(f.from, f.to);
      return async () => cluster.healNetwork();
    case "loss":
      cluster.loss(f.percent);
      return async () => cluster.loss(0);
    case "slow":
      for (const i of f.nodes) cluster.slow(i, f.kbit);
      return async () => f.nodes.forEach((i) => cluster.slow(i, 0));
    case "kill":
      for (const i of f.nodes) await cluster.kill(i);
      return async () => {
        for (const i of f.nodes) await cluster.start(i);
      };
    case "pause":
      for (const i of f.nodes) cluster.pause(i);
      return async () => f.nodes.forEach((i) => cluster.resume(i));
    case "disk-full": {
      const before = f.nodes.map((i) => cluster.mentions(i, LOG_FAILED));
      for (const i of f.nodes) cluster.fillDisk(i);
      disk.faults++;
      return async () => {
        f.nodes.forEach((i, k) => void (cluster.mentions(i, LOG_FAILED) > before[k]! && disk.serversRefused++));
        for (const i of f.nodes) cluster.emptyDisk(i);
      };
    }
    case "transfers":
      return startTransfers(cluster, rng, transfers);
    case "pause-leader": {
      const l = (await cluster.leader()) ?? 0;
      cluster.pause(l);
      return async () => cluster.resume(l);
    }
  }
}
