/**
 * Scale benchmark: Causeway with a big state, etcd measured in the same run where a comparison makes
 * sense. Real server processes on 127.0.0.1, data dirs in a temp dir on the normal disk (fsync on).
 *
 *   bun run bench:scale [--quick] [--keys N] [--services N] [--instances N] [--nodes N] [--watchers N]
 *                       [--watch-keys N] [--loaders N] [--only causeway|etcd] [--settle <s>] [--tmp <dir>]
 *                       [--max-minutes <m>]
 *
 * Defaults: 1,000,000 KV keys (64-byte values), 50,000 services with 200,000 instances on 2,000 nodes,
 * 10,000 watchers over 100 keys (and all on one key); --quick takes 1/20 of each; explicit counts win.
 *
 * 1. KV: the keys go into one etcd (Debian etcd-server; skipped, and said so, when it is missing:
 *    `apt-get install etcd-server`) through `/v3/kv/txn` (128 puts each, its --max-txn-ops default),
 *    then into one Causeway server (`causeway agent -server -bootstrap-expect 1` from source) through
 *    `PUT /v1/txn` (64 sets each, Consul's limit), `--loaders` transactions at a time. Each system runs
 *    alone (etcd is stopped before Causeway starts). Reported: keys/s (and per tenth of the load: a
 *    server slowing as its state grows shows there), VmRSS before, right after and `--settle` seconds
 *    after the load, bytes per key, data dir size, and a sample of keys read back.
 * 2. Snapshot: time and size of `GET /v1/snapshot` (and etcd's `/v3/maintenance/snapshot` through its
 *    JSON gateway). A probe process sends `GET /v1/status/leader` every 10 ms throughout the Causeway
 *    load, the snapshot and a phase of overwrites that runs until the server takes its own Raft
 *    snapshot (a new `raft/snap-*.snap` file): its slowest answer is the longest event-loop stall.
 * 3. Restart: SIGKILL, start again on the same data dir, time until `?consistent` GET of the key
 *    written last answers (snapshot load + log replay).
 * 4. Catalog: nodes, services and instances registered through `/v1/txn` Node/Check/Service ops; load
 *    time, RSS growth per instance, latency of `/v1/catalog/services`, `/v1/catalog/service/<one>`,
 *    `/v1/health/service/<one>`.
 * 5. Watchers: raw-socket blocking `GET /v1/kv/<key>?index=<current>&wait=5m`, spread over
 *    `--watch-keys` keys, then all on one key; one write per key; time from each write's answer to each
 *    watcher's answer, and the server's RSS with the watchers open. The bench raises its open-files
 *    limit (prlimit) when it is below watchers + 2048; the server inherits it.
 *
 * Prints a Markdown report at the end. Everything it starts is SIGKILLed by PID and its temp dirs
 * removed at the end, on error, on Ctrl-C and when --max-minutes runs out. Client and servers share
 * the CPUs: compare ratios, not absolute numbers.
 */
import { tmpdir } from "node:os";
import { join } from "node:path";
import { benchFlags, installCleanup } from "./bench_cli.ts";
import { etcdVersion } from "./kv_clusters.ts";
import { cpuMs, dirBytes, ensureOpenFiles, filesystemOf, fsyncRate, rssBytes } from "./machine.ts";
import type { CatalogShape } from "./scale_catalog.ts";
import { mb, readBack, runCauseway, sleep, type ScaleRun } from "./scale_causeway.ts";
import { etcdTxnPut, incomplete, keySet, runBatches } from "./scale_load.ts";
import { printReport, type CausewayFigures, type EtcdFigures, type RunFacts } from "./scale_report.ts";
import { killAllSync, removeDir, startEtcdServer, tempDir } from "./scale_servers.ts";

// ---------------------------------------------------------------------------------------------------
// Flags

const { flag, option } = benchFlags(new URL(import.meta.url));
const quick = flag("--quick");
const scaled = (name: string, full: number): number => {
  const given = option(name);
  const n = given === undefined ? Math.max(1, Math.round(quick ? full / 20 : full)) : Number(given);
  if (!Number.isInteger(n) || n < 1) throw new Error(`${name} takes a positive whole number`);
  return n;
};
const only = option("--only");
if (only !== undefined && only !== "causeway" && only !== "etcd") throw new Error("--only takes causeway or etcd");
const KEYS = scaled("--keys", 1_000_000);
const shape: CatalogShape = { nodes: scaled("--nodes", 2000), services: scaled("--services", 50_000), instances: scaled("--instances", 200_000) };
if (shape.instances < shape.services) throw new Error("--instances must be at least --services");
const WATCHERS = scaled("--watchers", 10_000);
const WATCH_KEYS = Math.min(WATCHERS, scaled("--watch-keys", 100));
const LOADERS = Number(option("--loaders") ?? 4);
const SETTLE_MS = Number(option("--settle") ?? 5) * 1000;
const maxMinutes = Number(option("--max-minutes") ?? (quick ? 20 : 120));
const tmpRoot = option("--tmp") ?? tmpdir();
if (!(LOADERS >= 1) || !(SETTLE_MS >= 0) || !(maxMinutes > 0)) throw new Error("--loaders, --settle and --max-minutes take positive numbers");

const START_TIMEOUT_MS = 120_000;
/** Deadline of one load (keys, overwrites, catalog). */
const LOAD_TIMEOUT_MS = Math.max(120_000, KEYS * 2, shape.instances * 5);
const RAFT_SNAPSHOT_PHASE_MS = quick ? 180_000 : 600_000;
const CAUSEWAY_TXN_OPS = 64;
const ETCD_TXN_OPS = 128;

// ---------------------------------------------------------------------------------------------------
// Cleanup: whatever happens, no process or temp dir outlives the benchmark.

const disarmWatchdog = installCleanup(killAllSync, maxMinutes);

const log = (s: string) => console.error(`[${new Date().toISOString().slice(11, 19)}] ${s}`);
const problems: string[] = [];
const notes: string[] = [];
const msg = (e: unknown) => (e instanceof Error ? e.message : String(e));
const keys = keySet(KEYS);
const run: ScaleRun = {
  keys, shape, watchers: WATCHERS, watchKeys: WATCH_KEYS, loaders: LOADERS, settleMs: SETTLE_MS, quick, tmpRoot,
  startTimeoutMs: START_TIMEOUT_MS, loadTimeoutMs: LOAD_TIMEOUT_MS, raftSnapshotPhaseMs: RAFT_SNAPSHOT_PHASE_MS,
  log, problem: (p) => problems.push(p), note: (n) => notes.push(n),
};

// ---------------------------------------------------------------------------------------------------
// etcd

async function runEtcd(): Promise<EtcdFigures> {
  const dir = tempDir(tmpRoot, "etcd-bench-scale-");
  const etcd = await startEtcdServer(join(dir, "data"), START_TIMEOUT_MS);
  try {
    await sleep(SETTLE_MS);
    const rssBefore = rssBytes(etcd.pid);
    const cpu0 = cpuMs(etcd.pid);
    log(`[etcd] up (pid ${etcd.pid}, ${mb(rssBefore)}); loading ${KEYS} keys, ${ETCD_TXN_OPS} per txn, ${LOADERS} loaders`);
    const load = await runBatches({
      batches: Math.ceil(KEYS / ETCD_TXN_OPS), loaders: LOADERS, timeoutMs: LOAD_TIMEOUT_MS,
      send: (b, signal) => etcdTxnPut(etcd.url, keys, b * ETCD_TXN_OPS, Math.min(KEYS, (b + 1) * ETCD_TXN_OPS), signal),
    });
    const rssAfter = rssBytes(etcd.pid);
    const cpuLoadMs = (cpuMs(etcd.pid) ?? Number.NaN) - (cpu0 ?? Number.NaN);
    const cut = incomplete(load);
    if (cut) problems.push(`etcd load: ${cut}`);
    log(`[etcd] loaded in ${(load.elapsedMs / 1000).toFixed(1)} s; RSS ${mb(rssAfter)}; settling ${SETTLE_MS / 1000} s`);
    await sleep(SETTLE_MS);
    const rssSettled = rssBytes(etcd.pid);
    const readback = await readBack(run, "etcd", etcd.url);
    const dbSize = await etcd.dbSize().catch(() => Number.NaN);
    const dataBytes = dirBytes(etcd.dataDir);
    log(`[etcd] RSS settled ${mb(rssSettled)}, db ${mb(dbSize)}, data dir ${mb(dataBytes)}; snapshot through the JSON gateway`);
    const snapshot = await etcdSnapshot(etcd.url);
    if (typeof snapshot === "string") notes.push(`etcd snapshot skipped: ${snapshot}`);
    else log(`[etcd] /v3/maintenance/snapshot: ${mb(snapshot.bytes)} in ${(snapshot.ms / 1000).toFixed(2)} s`);
    return { load, cpuLoadMs, rssBefore, rssAfter, rssSettled, dbSize, dataBytes, snapshot, readback };
  } finally {
    await etcd.stop();
    removeDir(dir);
  }
}

/** `/v3/maintenance/snapshot` through the JSON gateway (a stream of `{"result":{"blob":...}}` lines): time and bytes, or why not. */
async function etcdSnapshot(url: string): Promise<{ ms: number; bytes: number } | string> {
  const t = performance.now();
  const r = await fetch(`${url}/v3/maintenance/snapshot`, { method: "POST", body: "{}", signal: AbortSignal.timeout(LOAD_TIMEOUT_MS) });
  if (r.status !== 200 || !r.body) return `the JSON gateway answered HTTP ${r.status} to /v3/maintenance/snapshot`;
  let bytes = 0;
  let rest = "";
  const decoder = new TextDecoder();
  const take = (line: string) => {
    if (!line.trim()) return;
    const m = JSON.parse(line) as { result?: { blob?: string }; error?: { message?: string } };
    if (m.error) throw new Error(`etcd snapshot stream error: ${m.error.message}`);
    const blob = m.result?.blob ?? "";
    bytes += Math.floor((blob.length * 3) / 4) - (blob.endsWith("==") ? 2 : blob.endsWith("=") ? 1 : 0);
  };
  for await (const chunk of r.body) {
    const lines = (rest + decoder.decode(chunk, { stream: true })).split("\n");
    rest = lines.pop()!;
    lines.forEach(take);
  }
  take(rest);
  if (bytes === 0) return "the JSON gateway streamed no snapshot bytes";
  return { ms: performance.now() - t, bytes };
}

// ---------------------------------------------------------------------------------------------------
// Main

const began = Date.now();
const etcd = only === "causeway" ? null : etcdVersion();
if (only !== "causeway" && !etcd) {
  const m = "etcd not installed: install the Debian package etcd-server (apt-get install etcd-server); skipping the etcd columns";
  console.error(`\n*** ${m} ***\n`);
  notes.push(m);
}
const fdNote = only === "etcd" ? undefined : ensureOpenFiles(WATCHERS + 2048);
if (fdNote) notes.push(fdNote);
const fsType = filesystemOf(tmpRoot);
const fsyncs = fsyncRate(tmpRoot, quick ? 300 : 1000, 256);
if (fsType === "tmpfs" || fsType === "ramfs") problems.push(`data dirs are on ${fsType}: fsync costs nothing there (use --tmp <dir on disk>)`);
log(`scale benchmark: ${KEYS} keys, catalog ${shape.nodes}/${shape.services}/${shape.instances}, ${WATCHERS} watchers; data under ${tmpRoot} (${fsType}, ${fsyncs.toFixed(0)} fsync'd appends/s)`);

let etcdFigures: EtcdFigures | undefined;
let causewayFigures: CausewayFigures | undefined;
try {
  if (etcd && only !== "causeway") {
    try {
      etcdFigures = await runEtcd();
    } catch (e) {
      problems.push(`etcd: ${msg(e).split("\n")[0]}`);
      log(`[etcd] FAILED: ${msg(e)}`);
    }
  }
  if (only !== "etcd") {
    try {
      causewayFigures = await runCauseway(run);
    } catch (e) {
      problems.push(`Causeway: ${msg(e).split("\n")[0]}`);
      log(`[causeway] FAILED: ${msg(e)}`);
    }
  }
} finally {
  killAllSync();
}

const facts: RunFacts = {
  quick, keys: KEYS, shape, watchers: WATCHERS, watchKeys: WATCH_KEYS, loaders: LOADERS, settleMs: SETTLE_MS, fsType, fsyncs, etcd,
  causewayTxnOps: CAUSEWAY_TXN_OPS, etcdTxnOps: ETCD_TXN_OPS, minutes: (Date.now() - began) / 60_000,
};
printReport(facts, causewayFigures, etcdFigures, notes, problems);
disarmWatchdog();
process.exit(problems.length > 0 ? 1 : 0);
