/**
 * The scale benchmark's figures and its Markdown report (in the style of the README's KV benchmark
 * tables): the KV comparison with etcd, then Causeway's snapshot, restart, catalog and watcher figures.
 */
import { cpus, loadavg, release } from "node:os";
import { readFileSync } from "node:fs";
import type { ReadLatency, CatalogShape } from "./scale_catalog.ts";
import type { BatchResult } from "./scale_load.ts";
import type { ProbeResult } from "./scale_probe.ts";
import type { WakeResult } from "./scale_watch.ts";

export interface RunFacts {
  readonly quick: boolean;
  readonly keys: number;
  readonly shape: CatalogShape;
  readonly watchers: number;
  readonly watchKeys: number;
  readonly loaders: number;
  readonly settleMs: number;
  readonly fsType: string;
  readonly fsyncs: number;
  readonly etcd: string | null;
  readonly causewayTxnOps: number;
  readonly etcdTxnOps: number;
  readonly minutes: number;
}

interface KvFigures {
  readonly load: BatchResult;
  /** CPU time the server used during the load. */
  readonly cpuLoadMs: number;
  readonly rssBefore: number | null;
  readonly rssAfter: number | null;
  readonly rssSettled: number | null;
  readonly dataBytes: number;
  readonly readback: string;
}

export interface EtcdFigures extends KvFigures {
  readonly dbSize: number;
  readonly snapshot: { readonly ms: number; readonly bytes: number } | string;
}

export interface CausewayFigures extends KvFigures {
  readonly loadProbe: ProbeResult;
  readonly snapshotsDuringLoad: number;
  readonly snapshot: {
    readonly ms: number;
    /** The gzipped archive. */
    readonly bytes: number;
    /** Its state.bin, uncompressed (from meta.json). */
    readonly stateBytes: number;
    readonly probe: ProbeResult;
    readonly rssAfter: number | null;
    /** VmHWM before and after: a higher one after means the snapshot set a new memory peak. */
    readonly peakBefore: number | null;
    readonly peakAfter: number | null;
  };
  readonly raftSnapshot: {
    readonly overwrites: BatchResult;
    readonly probe: ProbeResult;
    readonly snapshots: readonly { readonly at: number; readonly name: string; readonly bytes: number }[];
    readonly phaseStart: number;
  };
  readonly restart: {
    readonly dirBytes: number;
    readonly rssBeforeKill: number | null;
    readonly answeredMs: number;
    readonly upMs: number;
    /** Spawn to leader of the first, empty start (the runtime's own start-up cost). */
    readonly freshUpMs: number;
    readonly rss: number | null;
    readonly readback: string;
  };
  readonly catalog: {
    readonly load: { readonly nodes: BatchResult; readonly instances: BatchResult };
    readonly cpuMs: number;
    readonly rssBefore: number | null;
    readonly rssAfter: number | null;
    readonly reads: readonly ReadLatency[];
  };
  readonly wake: readonly WakeResult[];
}

const MiB = 2 ** 20;
const n0 = (x: number) => (Number.isFinite(x) ? Math.round(x).toLocaleString("en-US") : "-");
const f = (x: number, d: number) => (Number.isFinite(x) ? x.toFixed(d) : "-");
const mbs = (b: number | null | undefined) => (b === null || b === undefined || !Number.isFinite(b) ? "-" : (b / MiB).toFixed(1));
const ratio = (a: number | null | undefined, b: number | null | undefined) =>
  a === null || a === undefined || b === null || b === undefined || !Number.isFinite(a) || !Number.isFinite(b) || b === 0 ? "-" : `${(a / b).toFixed(2)}x`;
const keysPerSec = (r: BatchResult, keys: number) => (r.elapsedMs > 0 ? (Math.min(keys, r.ok * (keys / r.batches)) * 1000) / r.elapsedMs : Number.NaN);
const growth = (after: number | null, before: number | null, per: number) => (after === null || before === null ? Number.NaN : (after - before) / per);

/** The longest probe of `p` and, when a snapshot file appeared within 10 s after it started, that file's delay. */
function gapText(p: ProbeResult, snapshots: readonly { at: number }[] = []): string {
  const near = snapshots.find((s) => s.at >= p.maxAt && s.at - p.maxAt < 10_000);
  const when = near ? ` (a Raft snapshot file appeared ${((near.at - p.maxAt) / 1000).toFixed(1)} s after it began)` : "";
  return `${f(p.max, 0)} ms${when}; p99 ${f(p.p99, 1)} ms, ${p.count} probes${p.errors ? `, **${p.errors} failed** (${p.firstError})` : ""}`;
}

function kvTable(facts: RunFacts, c: CausewayFigures | undefined, e: EtcdFigures | undefined): string[] {
  const row = (what: string, cv: string, ev: string, r = "-") => `| ${what} | ${cv} | ${ev} | ${r} |`;
  const out = ["| measure | Causeway | etcd | Causeway/etcd |", "|---|---:|---:|---:|"];
  const kps = (x: KvFigures | undefined) => (x ? keysPerSec(x.load, facts.keys) : Number.NaN);
  out.push(row(`load, keys/s (${facts.causewayTxnOps} / ${facts.etcdTxnOps} per txn, ${facts.loaders} loaders)`, n0(kps(c)), n0(kps(e)), ratio(kps(c), kps(e))));
  out.push(row("load, txn p50 / p99 ms", c ? `${f(c.load.p50, 1)} / ${f(c.load.p99, 1)}` : "-", e ? `${f(e.load.p50, 1)} / ${f(e.load.p99, 1)}` : "-"));
  const tenth = (x: KvFigures | undefined, k: number, ops: number) => (x?.load.tenths[k] !== undefined ? n0(x.load.tenths[k]! * ops) : "-");
  out.push(row("load, keys/s in the first / last tenth", c ? `${tenth(c, 0, facts.causewayTxnOps)} / ${tenth(c, 9, facts.causewayTxnOps)}` : "-", e ? `${tenth(e, 0, facts.etcdTxnOps)} / ${tenth(e, 9, facts.etcdTxnOps)}` : "-"));
  const cpk = (x: KvFigures | undefined) => (x ? (x.cpuLoadMs * 1000) / facts.keys : Number.NaN);
  out.push(row("load, server CPU per key, µs", f(cpk(c), 1), f(cpk(e), 1), ratio(cpk(c), cpk(e))));
  out.push(row("RSS before loading, MB", mbs(c?.rssBefore), mbs(e?.rssBefore), ratio(c?.rssBefore, e?.rssBefore)));
  out.push(row("RSS right after loading, MB", mbs(c?.rssAfter), mbs(e?.rssAfter), ratio(c?.rssAfter, e?.rssAfter)));
  out.push(row(`RSS ${facts.settleMs / 1000} s later, MB`, mbs(c?.rssSettled), mbs(e?.rssSettled), ratio(c?.rssSettled, e?.rssSettled)));
  const bpk = (x: KvFigures | undefined, after: "rssAfter" | "rssSettled") => (x ? growth(x[after], x.rssBefore, facts.keys) : Number.NaN);
  out.push(row("bytes per key, right after loading (RSS growth / keys)", n0(bpk(c, "rssAfter")), n0(bpk(e, "rssAfter")), ratio(bpk(c, "rssAfter"), bpk(e, "rssAfter"))));
  out.push(row("**bytes per key**, settled", n0(bpk(c, "rssSettled")), n0(bpk(e, "rssSettled")), ratio(bpk(c, "rssSettled"), bpk(e, "rssSettled"))));
  out.push(row("data dir after loading, MB", mbs(c?.dataBytes), mbs(e?.dataBytes), ratio(c?.dataBytes, e?.dataBytes)));
  out.push(row("etcd: backend db size (its WAL files are preallocated 64 MB each), MB", "-", mbs(e?.dbSize)));
  const es = e && typeof e.snapshot === "object" ? e.snapshot : undefined;
  out.push(row("snapshot (`GET /v1/snapshot` / `/v3/maintenance/snapshot`), s", c ? f(c.snapshot.ms / 1000, 2) : "-", es ? f(es.ms / 1000, 2) : "-", ratio(c?.snapshot.ms, es?.ms)));
  out.push(row("snapshot size, MB (Causeway: uncompressed state; gzipped archive)", c ? `${mbs(c.snapshot.stateBytes)}; ${mbs(c.snapshot.bytes)}` : "-", mbs(es?.bytes), ratio(c?.snapshot.stateBytes, es?.bytes)));
  out.push(row("read-back sample (right values)", c?.readback ?? "-", e?.readback ?? "-"));
  return out;
}

function causewayTable(facts: RunFacts, c: CausewayFigures): string[] {
  const out = ["| measure | value |", "|---|---|"];
  const row = (what: string, v: string) => out.push(`| ${what} | ${v} |`);
  const snaps = c.raftSnapshot.snapshots;
  row("longest 10 ms probe during the KV load", `${gapText(c.loadProbe)}; ${c.snapshotsDuringLoad} Raft snapshot(s) taken during the load`);
  row("longest 10 ms probe during `GET /v1/snapshot`", `${gapText(c.snapshot.probe)}; server RSS after it ${mbs(c.snapshot.rssAfter)} MB, peak RSS ${mbs(c.snapshot.peakBefore)} -> ${mbs(c.snapshot.peakAfter)} MB`);
  row("Raft snapshot under overwrites (2 writers, 64-op txns)", snaps.length
    ? `${snaps.length} taken (${snaps.map((s) => `${mbs(s.bytes)} MB after ${((s.at - c.raftSnapshot.phaseStart) / 1000).toFixed(0)} s`).join(", ")}); longest probe ${gapText(c.raftSnapshot.probe, snaps)}`
    : `none taken in ${f(c.raftSnapshot.overwrites.elapsedMs / 1000, 0)} s; longest probe ${gapText(c.raftSnapshot.probe)}`);
  row("restart after kill -9: data dir", `${mbs(c.restart.dirBytes)} MB`);
  row("restart: spawn to `?consistent` GET of the last write", `**${f(c.restart.answeredMs / 1000, 2)} s** (leader reported after ${f(c.restart.upMs / 1000, 2)} s; an empty server: ${f(c.restart.freshUpMs / 1000, 2)} s)`);
  row("restart: RSS before kill / after restart", `${mbs(c.restart.rssBeforeKill)} / ${mbs(c.restart.rss)} MB; read-back ${c.restart.readback}`);
  const cl = c.catalog.load;
  const catMs = cl.nodes.elapsedMs + cl.instances.elapsedMs;
  row(`catalog load: ${n0(facts.shape.nodes)} nodes, ${n0(facts.shape.services)} services, ${n0(facts.shape.instances)} instances`, `${f(catMs / 1000, 1)} s (${n0((facts.shape.instances * 1000) / cl.instances.elapsedMs)} instances/s; txn p99 ${f(cl.instances.p99, 1)} ms; keys/s first / last tenth ${n0((cl.instances.tenths[0] ?? Number.NaN) * 64)} / ${n0((cl.instances.tenths[9] ?? Number.NaN) * 64)})`);
  row("catalog: server CPU per instance", `${f((c.catalog.cpuMs * 1000) / facts.shape.instances, 1)} µs (nodes and checks included)`);
  row("catalog: RSS growth per instance", `${n0(growth(c.catalog.rssAfter, c.catalog.rssBefore, facts.shape.instances))} bytes (${mbs(c.catalog.rssBefore)} -> ${mbs(c.catalog.rssAfter)} MB, nodes and checks included)`);
  for (const r of c.catalog.reads) row(`${r.what} (${r.count} sequential)`, `p50 ${f(r.p50, 2)} ms, p99 ${f(r.p99, 2)} ms, max ${f(r.max, 2)} ms; ${n0(r.bytes)} bytes`);
  for (const w of c.wake) {
    const head = `${n0(w.watchers)} watchers on ${w.keys} key${w.keys === 1 ? "" : "s"}`;
    row(`${head}: returned after the writes`, `${w.returned}/${w.watchers}${w.early ? `, **${w.early} early**` : ""}${w.bad ? `, **${w.bad} wrong**` : ""}${w.errors ? `, **${w.errors} errors** (${w.firstError})` : ""}; last after ${f(w.spanMs, 0)} ms; server CPU ${f((w.cpuWakeMs * 1000) / w.watchers, 0)} µs per watcher`);
    row(`${head}: write answer -> watcher answer`, `p50 ${f(w.fromAnswer.p50, 1)} ms, p99 ${f(w.fromAnswer.p99, 1)} ms, max ${f(w.fromAnswer.max, 1)} ms (negative: the watcher answered before the write did)`);
    row(`${head}: write sent -> watcher answer`, `p50 ${f(w.fromSend.p50, 1)} ms, p99 ${f(w.fromSend.p99, 1)} ms, max ${f(w.fromSend.max, 1)} ms; slowest write's own latency ${f(w.writeMaxMs, 1)} ms`);
    if (w.probe) row(`${head}: longest 10 ms probe during the wake-up`, gapText(w.probe));
    row(`${head}: server RSS`, `${mbs(w.rssBefore)} -> ${mbs(w.rssBlocked)} MB with them open (${n0(growth(w.rssBlocked, w.rssBefore, w.watchers))} bytes per watcher; quiet ${f(w.settleMs / 1000, 1)} s after sending)`);
  }
  return out;
}

export function printReport(facts: RunFacts, c: CausewayFigures | undefined, e: EtcdFigures | undefined, notes: readonly string[], problems: readonly string[]): void {
  const cpuList = cpus();
  const version = (JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string }).version;
  const runtime = typeof (globalThis as { Deno?: unknown }).Deno !== "undefined" ? `Deno ${process.versions.deno}` : `Bun ${process.versions.bun}`;
  const lines = [
    "",
    `### Scale: ${n0(facts.keys)} KV keys (64-byte values), Causeway vs etcd${facts.quick ? " (--quick: 1/20 of the defaults)" : ""}`,
    "",
    `- Machine: ${cpuList.length} CPUs (${cpuList[0]?.model.trim() ?? "?"}), Linux ${release()}; load average ${loadavg()[0]!.toFixed(2)} at the end; ${f(facts.minutes, 1)} minutes`,
    `- Versions: Causeway ${version} from source on ${runtime}, one server (\`-bootstrap-expect 1\`); etcd ${facts.etcd ?? "not installed"}, one member, default settings`,
    `- Disk: data dirs on ${facts.fsType}; ${f(facts.fsyncs, 0)} fsync'd 256-byte appends/s. Each system loads alone; bench, probe and server share the CPUs`,
    "- RSS includes each server's in-memory Raft log since its last snapshot (Causeway: until 16384 entries and 120 s, or 64 MB of commands; etcd 3.4: up to 100,000 entries, its --snapshot-count)",
    "",
    ...kvTable(facts, c, e),
    "",
  ];
  if (c) {
    lines.push(`Causeway with that state (10 ms probe: \`GET /v1/status/leader\` from a separate process; its slowest answer is the longest stall):`, "", ...causewayTable(facts, c), "");
  }
  for (const n of notes) lines.push(`- note: ${n}`);
  if (problems.length > 0) {
    lines.push("", `**PROBLEMS (${problems.length})**:`);
    for (const p of problems) lines.push(`- ${p}`);
  }
  console.log(lines.join("\n"));
}
