/**
 * The Causeway half of the scale benchmark (test/bench/scale.ts says what each phase measures): one
 * server, loaded with the key set, then snapshot, Raft snapshot under writes, kill -9 and restart,
 * catalog and watchers, in that order on the same server and data dir.
 */
import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { gunzipSync } from "node:zlib";
import { cpuMs, dirBytes, peakRssBytes, rssBytes } from "./machine.ts";
import { catalogReads, loadCatalog, type CatalogShape } from "./scale_catalog.ts";
import { consulTxnSet, incomplete, readBackSample, runBatches, type KeySet } from "./scale_load.ts";
import { startProbe } from "./scale_probe.ts";
import type { CausewayFigures } from "./scale_report.ts";
import { causewayServer, removeDir, tempDir, track, type CausewayServer, type ServerProcess } from "./scale_servers.ts";
import { wakeUp, type WakeResult } from "./scale_watch.ts";

/** What a run is asked to do, and where it reports. */
export interface ScaleRun {
  readonly keys: KeySet;
  readonly shape: CatalogShape;
  readonly watchers: number;
  readonly watchKeys: number;
  readonly loaders: number;
  readonly settleMs: number;
  readonly quick: boolean;
  readonly tmpRoot: string;
  readonly startTimeoutMs: number;
  /** Deadline of one load (keys, overwrites, catalog) and of a restart. */
  readonly loadTimeoutMs: number;
  /** How long the overwrites may run waiting for a Raft snapshot. */
  readonly raftSnapshotPhaseMs: number;
  log(line: string): void;
  /** Something wrong: the numbers are not a clean measurement. */
  problem(line: string): void;
  /** Something skipped or worth saying. */
  note(line: string): void;
}

/** Keys sampled for read-back checks. */
export const READBACK_SAMPLE = 50;
const TXN_OPS = 64;
const PROBE_INTERVAL_MS = 10;

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
export const mb = (b: number | null) => (b === null ? "?" : `${(b / 2 ** 20).toFixed(1)} MB`);
const msg = (e: unknown) => (e instanceof Error ? e.message : String(e));
const cpuSince = (pid: number, before: number | null) => (cpuMs(pid) ?? Number.NaN) - (before ?? Number.NaN);

/** Reads back a sample and reports a wrong one as a problem; "k/n" right. */
export async function readBack(run: ScaleRun, system: "causeway" | "etcd", url: string, round?: (i: number) => number): Promise<string> {
  const r = await readBackSample(system, url, run.keys, READBACK_SAMPLE, round);
  if (r.ok < r.n) run.problem(`${system}: read-back ${r.ok}/${r.n} right (e.g. ${r.first})`);
  return `${r.ok}/${r.n}`;
}

/** New `raft/snap-*.snap` files of a data dir, with when they were first seen (epoch ms) and their size. */
function watchSnapshots(dataDir: string) {
  const raft = join(dataDir, "raft");
  const seen = new Set<string>();
  const fresh: { at: number; name: string; bytes: number }[] = [];
  const scan = (record: boolean) => {
    let names: string[];
    try {
      names = readdirSync(raft);
    } catch {
      return; // not created yet
    }
    for (const name of names) {
      if (!/^snap-.*\.snap$/.test(name) || seen.has(name)) continue;
      seen.add(name);
      let bytes = 0;
      try {
        bytes = statSync(join(raft, name)).size;
      } catch {
        // Already replaced by a newer one.
      }
      if (record) fresh.push({ at: Date.now(), name, bytes });
    }
  };
  scan(false);
  const timer = setInterval(() => scan(true), 100);
  return { taken: () => fresh, stop: () => clearInterval(timer) };
}
type SnapshotWatch = ReturnType<typeof watchSnapshots>;

/** The `Size` (bytes of state.bin) in the meta.json that opens a `/v1/snapshot` archive, or NaN. */
function archiveStateBytes(archive: Uint8Array): number {
  try {
    const tar = gunzipSync(archive);
    const name = new TextDecoder().decode(tar.subarray(0, 100)).replace(/\0.*$/s, "");
    const size = parseInt(new TextDecoder().decode(tar.subarray(124, 136)), 8);
    if (name !== "meta.json") return Number.NaN;
    return Number((JSON.parse(new TextDecoder().decode(tar.subarray(512, 512 + size))) as { Size?: number }).Size);
  } catch {
    return Number.NaN;
  }
}

const probeOf = (url: string) => startProbe(url, PROBE_INTERVAL_MS, track);

async function kvPhase(run: ScaleRun, proc: ServerProcess, snaps: SnapshotWatch) {
  const { keys } = run;
  await sleep(run.settleMs);
  const rssBefore = rssBytes(proc.pid);
  const cpu0 = cpuMs(proc.pid);
  run.log(`[causeway] up (pid ${proc.pid}, ${mb(rssBefore)}); loading ${keys.n} keys, ${TXN_OPS} per txn, ${run.loaders} loaders`);
  const probe = await probeOf(proc.url);
  const load = await runBatches({
    batches: Math.ceil(keys.n / TXN_OPS), loaders: run.loaders, timeoutMs: run.loadTimeoutMs,
    send: (b, signal) => consulTxnSet(proc.url, keys, b * TXN_OPS, Math.min(keys.n, (b + 1) * TXN_OPS), 0, signal),
  });
  const loadProbe = await probe.stop();
  const rssAfter = rssBytes(proc.pid);
  const cpuLoadMs = cpuSince(proc.pid, cpu0);
  const cut = incomplete(load);
  if (cut) run.problem(`Causeway load: ${cut}`);
  run.log(`[causeway] loaded in ${(load.elapsedMs / 1000).toFixed(1)} s; RSS ${mb(rssAfter)}; longest probe ${loadProbe.max.toFixed(0)} ms; settling ${run.settleMs / 1000} s`);
  await sleep(run.settleMs);
  const rssSettled = rssBytes(proc.pid);
  const readback = await readBack(run, "causeway", proc.url);
  return { load, cpuLoadMs, rssBefore, rssAfter, rssSettled, dataBytes: dirBytes(proc.dataDir), readback, loadProbe, snapshotsDuringLoad: snaps.taken().length };
}

async function snapshotPhase(run: ScaleRun, proc: ServerProcess) {
  run.log(`[causeway] GET /v1/snapshot`);
  const peakBefore = peakRssBytes(proc.pid);
  const probe = await probeOf(proc.url);
  const t = performance.now();
  const r = await fetch(`${proc.url}/v1/snapshot`, { signal: AbortSignal.timeout(run.loadTimeoutMs) });
  const archive = new Uint8Array(await r.arrayBuffer());
  const ms = performance.now() - t;
  const probed = await probe.stop();
  if (r.status !== 200) run.problem(`GET /v1/snapshot: HTTP ${r.status}`);
  run.log(`[causeway] /v1/snapshot: ${mb(archive.length)} in ${(ms / 1000).toFixed(2)} s, longest probe ${probed.max.toFixed(0)} ms`);
  return { ms, bytes: archive.length, stateBytes: archiveStateBytes(archive), probe: probed, rssAfter: rssBytes(proc.pid), peakBefore, peakAfter: peakRssBytes(proc.pid) };
}

/** Overwrites keys (round 1) with 2 writers until a new Raft snapshot file has been there for 2 s. */
async function raftSnapshotPhase(run: ScaleRun, proc: ServerProcess, snaps: SnapshotWatch) {
  const { keys } = run;
  run.log(`[causeway] overwriting keys until the server takes a Raft snapshot (at most ${run.raftSnapshotPhaseMs / 1000} s)`);
  const known = snaps.taken().length;
  let snappedAt: number | undefined;
  const probe = await probeOf(proc.url);
  const phaseStart = Date.now();
  const overwrites = await runBatches({
    batches: Number.MAX_SAFE_INTEGER, loaders: 2, timeoutMs: run.raftSnapshotPhaseMs,
    until: () => {
      if (snappedAt === undefined && snaps.taken().length > known) snappedAt = Date.now();
      return snappedAt !== undefined && Date.now() - snappedAt > 2000;
    },
    send: (b, signal) => {
      const from = (b * TXN_OPS) % keys.n;
      return consulTxnSet(proc.url, keys, from, Math.min(keys.n, from + TXN_OPS), 1, signal);
    },
  });
  const probed = await probe.stop();
  const snapshots = snaps.taken().slice(known);
  if (snapshots.length === 0) run.note(`no Raft snapshot was taken during ${Math.round((Date.now() - phaseStart) / 1000)} s of overwrites (${overwrites.ok} transactions)`);
  run.log(`[causeway] ${overwrites.ok} overwrite txns in ${(overwrites.elapsedMs / 1000).toFixed(1)} s, ${snapshots.length} Raft snapshot(s); longest probe ${probed.max.toFixed(0)} ms`);
  return { overwrites, probe: probed, snapshots, phaseStart };
}

/** Writes a marker, SIGKILLs the server, starts it on the same data dir and times the marker's `?consistent` GET. */
async function restartPhase(run: ScaleRun, server: CausewayServer, proc: ServerProcess, rewritten: number | undefined) {
  const marker = "scale-restart/marker";
  const markerValue = `written-last-${Date.now()}`;
  const put = await fetch(`${proc.url}/v1/kv/${marker}`, { method: "PUT", body: markerValue });
  if ((await put.text()).trim() !== "true") run.problem(`PUT of the restart marker: HTTP ${put.status}`);
  const dirBefore = dirBytes(proc.dataDir);
  const rssBeforeKill = rssBytes(proc.pid);
  await server.kill();
  run.log(`[causeway] killed (-9) with ${mb(dirBefore)} in its data dir; restarting`);
  let spawnedAt = 0;
  const started = server.start(run.loadTimeoutMs, () => (spawnedAt = performance.now()));
  started.catch(() => {});
  let answeredMs = Number.NaN;
  const deadline = performance.now() + run.loadTimeoutMs;
  while (performance.now() < deadline) {
    try {
      const r = await fetch(`${proc.url}/v1/kv/${marker}?consistent&raw`, { signal: AbortSignal.timeout(30_000) });
      if (r.status === 200 && (await r.text()) === markerValue) {
        answeredMs = performance.now() - spawnedAt;
        break;
      }
    } catch {
      // Not listening yet.
    }
    await sleep(20);
  }
  const restarted = await started;
  const upMs = performance.now() - spawnedAt;
  if (!Number.isFinite(answeredMs)) run.problem("after the restart the marker key never answered");
  await sleep(run.settleMs);
  const rss = rssBytes(restarted.pid);
  // Overwrite batch b rewrote keys from (b * 64) mod n on, in order: the first `rewritten` keys are in round 1.
  const readback = rewritten === undefined ? "skipped (overwrite errors)" : await readBack(run, "causeway", restarted.url, (i) => (i < rewritten ? 1 : 0));
  run.log(`[causeway] restarted: consistent GET answered after ${(answeredMs / 1000).toFixed(2)} s; RSS ${mb(rss)}`);
  return { proc: restarted, figures: { dirBytes: dirBefore, rssBeforeKill, answeredMs, upMs, rss, readback } };
}

async function catalogPhase(run: ScaleRun, proc: ServerProcess) {
  const { shape } = run;
  const rssBefore = rssBytes(proc.pid);
  const cpu0 = cpuMs(proc.pid);
  run.log(`[causeway] catalog: ${shape.nodes} nodes, ${shape.services} services, ${shape.instances} instances`);
  const load = await loadCatalog(proc.url, shape, run.loaders, run.loadTimeoutMs);
  const cpu = cpuSince(proc.pid, cpu0);
  for (const [what, r] of Object.entries(load)) {
    const cut = incomplete(r);
    if (cut) run.problem(`catalog ${what}: ${cut}`);
  }
  await sleep(run.settleMs);
  const rssAfter = rssBytes(proc.pid);
  const reads = await catalogReads(proc.url, shape, run.quick ? 5 : 10, run.quick ? 100 : 200).catch((e) => {
    run.problem(`catalog reads: ${msg(e)}`);
    return [];
  });
  run.log(`[causeway] catalog loaded in ${((load.nodes.elapsedMs + load.instances.elapsedMs) / 1000).toFixed(1)} s; RSS ${mb(rssAfter)}`);
  return { load, cpuMs: cpu, rssBefore, rssAfter, reads };
}

/** The watchers spread over run.watchKeys keys, then all on one key. */
async function watchPhase(run: ScaleRun, proc: ServerProcess): Promise<WakeResult[]> {
  const spread = Array.from({ length: run.watchKeys }, (_, i) => `scale-watch/${String(i).padStart(5, "0")}`);
  const one = ["scale-watch/one"];
  for (const [i, key] of [...spread, ...one].entries()) {
    const r = await fetch(`${proc.url}/v1/kv/${key}`, { method: "PUT", body: `start-${i}` });
    if ((await r.text()).trim() !== "true") throw new Error(`PUT /v1/kv/${key}: HTTP ${r.status}`);
  }
  const out: WakeResult[] = [];
  for (const keys of [spread, one]) {
    run.log(`[causeway] ${run.watchers} watchers on ${keys.length} key(s)`);
    try {
      const w = await wakeUp(proc.url, proc.pid, keys, run.watchers, 120_000, () => probeOf(proc.url));
      out.push(w);
      if (w.early || w.bad || w.errors || w.returned < w.watchers) {
        run.problem(`watchers on ${keys.length} key(s): ${w.returned}/${w.watchers} returned, ${w.early} early, ${w.bad} wrong, ${w.errors} errors${w.firstError ? ` (${w.firstError})` : ""}`);
      }
      run.log(`[causeway]   ${w.returned}/${w.watchers} returned; write sent -> watcher p50 ${w.fromSend.p50.toFixed(1)} ms, max ${w.fromSend.max.toFixed(1)} ms; longest probe ${w.probe?.max.toFixed(0) ?? "?"} ms; RSS with watchers ${mb(w.rssBlocked)}`);
    } catch (e) {
      run.problem(`watchers on ${keys.length} key(s): ${msg(e)}`);
    }
    await sleep(1000);
  }
  return out;
}

/** All Causeway phases on one server in a temp data dir, removed at the end. */
export async function runCauseway(run: ScaleRun): Promise<CausewayFigures> {
  const dir = tempDir(run.tmpRoot, "causeway-bench-scale-");
  const server = await causewayServer(join(dir, "data"));
  try {
    const t0 = performance.now();
    let proc = await server.start(run.startTimeoutMs);
    const freshUpMs = performance.now() - t0;
    const snaps = watchSnapshots(proc.dataDir);
    const kv = await kvPhase(run, proc, snaps);
    const snapshot = await snapshotPhase(run, proc);
    const raftSnapshot = await raftSnapshotPhase(run, proc, snaps);
    snaps.stop();
    const ow = raftSnapshot.overwrites;
    const restart = await restartPhase(run, server, proc, ow.errors === 0 ? Math.min(run.keys.n, ow.ok * TXN_OPS) : undefined);
    proc = restart.proc;
    const catalog = await catalogPhase(run, proc);
    const wake = await watchPhase(run, proc);
    return { ...kv, snapshot, raftSnapshot, restart: { ...restart.figures, freshUpMs }, catalog, wake };
  } finally {
    await server.kill();
    removeDir(dir);
  }
}
