/**
 * KV benchmark: Causeway against etcd, each through its own HTTP API, 256-byte values, real server
 * processes on 127.0.0.1 with data dirs in a temp dir on the normal disk (fsync on).
 *
 *   bun run bench:kv [--quick] [--only causeway|etcd] [--servers 1,3] [--leader-only]
 *                    [--phase-timeout <s>] [--tmp <dir>] [--max-minutes <m>]
 *
 * Systems: Causeway 1 and 3 servers (`causeway agent -server -bootstrap-expect N -retry-join ...` from
 * source), etcd 1 and 3 members (the `etcd` on PATH, Debian package etcd-server; its rows are skipped
 * when it is missing). Workloads per system and cluster size: sequential PUT from 1 client (2,000 ops),
 * PUT from 64 clients (20,000 ops), linearizable GET from 64 clients (20,000 ops over the keys the
 * 64-client PUT wrote); --quick runs 10x fewer. Causeway: PUT /v1/kv/<key> (raw body, answer `true`) and
 * GET /v1/kv/<key>?consistent. etcd: the v3 JSON gateway, POST /v3/kv/put and /v3/kv/range (linearizable
 * by default). Requests go to the leader; with 3 servers the workloads run again spread over all servers
 * (client c talks to server c mod 3), where followers forward writes and confirm reads with the leader.
 *
 * HTTP/1.1 keep-alive through fetch, one connection per client (checked from /proc on Linux: the
 * "conns" column shows the connections open during the measured operations, and any opened or closed).
 * Bun's fetch keeps at most 64 idle connections (more concurrent clients would reconnect): 64 clients is
 * its limit, and each (system, size, routing) gets a fresh cluster so no idle connection carries over. Every GET checks the
 * value; after the PUT phases a sample of keys is read back. Errors are counted, grouped and printed loudly.
 *
 * Reports throughput and p50/p99 latency per row, then Causeway/etcd ratios, as markdown for the README.
 * It never asserts: the issue's target (Causeway >= etcd's throughput with 64 clients and a p99 no
 * worse) is reported as met or not. Everything it starts is killed, and its temp dirs removed, at the end,
 * on error and on Ctrl-C. The client shares the CPU with the servers: compare ratios, not absolute numbers.
 */
import { Buffer } from "node:buffer";
import { readFileSync } from "node:fs";
import { cpus, loadavg, release, tmpdir } from "node:os";
import { etcdVersion, killEverythingSync, startCauseway, startEtcd, type KvCluster } from "./kv_clusters.ts";
import { runPhase, type PhaseResult } from "./kv_workload.ts";
import { benchFlags, installCleanup } from "./bench_cli.ts";
import { filesystemOf, fsyncRate } from "./machine.ts";

// ---------------------------------------------------------------------------------------------------
// Flags

const { flag, option } = benchFlags(new URL(import.meta.url));
const quick = flag("--quick");
const only = option("--only");
if (only !== undefined && only !== "causeway" && only !== "etcd") throw new Error("--only takes causeway or etcd");
const sizes = (option("--servers") ?? "1,3").split(",").map(Number);
if (!sizes.every((n) => n === 1 || n === 3)) throw new Error("--servers takes 1, 3 or 1,3");
const leaderOnly = flag("--leader-only");
const phaseTimeoutMs = Number(option("--phase-timeout") ?? (quick ? 20 : 60)) * 1000;
const maxMinutes = Number(option("--max-minutes") ?? (quick ? 10 : 30));
const tmpRoot = option("--tmp") ?? tmpdir();
if (!(phaseTimeoutMs > 0) || !(maxMinutes > 0)) throw new Error("--phase-timeout and --max-minutes take positive numbers");

const SCALE = quick ? 10 : 1;
const SEQ_OPS = 2000 / SCALE;
const CONC_OPS = 20000 / SCALE;
const GET_OPS = 20000 / SCALE;
const CLIENTS = 64;
const VALUE_BYTES = 256;
const START_TIMEOUT_MS = 60_000;
const READBACK_SAMPLE = 50;

// ---------------------------------------------------------------------------------------------------
// Cleanup: whatever happens, no process or temp dir outlives the benchmark.

const disarmWatchdog = installCleanup(killEverythingSync, maxMinutes);

const log = (s: string) => console.error(s);
/** Errors, failures and unfair conditions: printed loudly at the end, exit code 1. */
const problems: string[] = [];
/** Skipped parts: printed at the end, not a failure. */
const notes: string[] = [];

// ---------------------------------------------------------------------------------------------------
// Data: 256-byte printable values that name their key, so a value under the wrong key is caught.

const FILL = "abcdefghijklmnopqrstuvwxyz0123456789".repeat(Math.ceil(VALUE_BYTES / 36) + 1);
const value = (key: string) => `${key}|${FILL}`.slice(0, VALUE_BYTES);
const valueB64 = (key: string) => Buffer.from(value(key)).toString("base64");

// ---------------------------------------------------------------------------------------------------
// Runs

type SystemName = "causeway" | "etcd";
type Routing = "leader" | "spread";
type Workload = "put-seq" | "put" | "get";
const WORKLOADS: readonly Workload[] = ["put-seq", "put", "get"];
const WORKLOAD_LABEL: Record<Workload, string> = {
  "put-seq": "PUT, 1 client",
  put: `PUT, ${CLIENTS} clients`,
  get: `linearizable GET, ${CLIENTS} clients`,
};
const ROUTING_LABEL: Record<Routing, string> = { leader: "leader", spread: "all servers" };

interface Row {
  readonly system: SystemName;
  readonly servers: number;
  readonly routing: Routing;
  readonly workload: Workload;
  /** A result, or why there is none (the cluster did not start). */
  readonly result: PhaseResult | string;
}
const rows: Row[] = [];
const readbacks: string[] = [];
const fsyncNotes: string[] = [];

const msText = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

function summary(r: PhaseResult): string {
  const conns = r.conns ? `, conns ${r.conns.peak} open, ${r.conns.opened} opened, ${r.conns.closed} closed` : "";
  const errs = r.errors > 0 ? `, ${r.errors} ERRORS` : "";
  const stop = r.stopped ? `, STOPPED: ${r.stopped}` : "";
  return `${r.ok}/${r.ops} ok in ${msText(r.elapsedMs)}: ${r.opsPerSec.toFixed(0)} ops/s, p50 ${r.p50.toFixed(2)} ms, p99 ${r.p99.toFixed(2)} ms${conns}${errs}${stop}`;
}

/** Reads back a sample of written keys from the leader and checks the values. */
async function readBack(cluster: KvCluster, url: string, keys: readonly string[]): Promise<{ ok: number; bad: string[] }> {
  let ok = 0;
  const bad: string[] = [];
  const signal = AbortSignal.timeout(Math.min(phaseTimeoutMs, 30_000));
  let next = 0;
  // Few at a time: more concurrent requests than clients would open extra connections.
  await Promise.all(Array.from({ length: 8 }, async () => {
    while (next < keys.length) {
      const key = keys[next++]!;
      try {
        const got = await cluster.get(url, key, signal);
        if (got === valueB64(key)) ok++;
        else bad.push(`${key}: wrong value ${JSON.stringify(Buffer.from(got, "base64").toString().slice(0, 40))}`);
      } catch (e) {
        bad.push(`${key}: ${e instanceof Error ? e.message : String(e)}`);
      }
    }
  }));
  return { ok, bad };
}

const sample = (prefix: string, n: number) => Array.from({ length: Math.min(READBACK_SAMPLE, n) }, (_, j) => `${prefix}/${Math.floor((j * n) / Math.min(READBACK_SAMPLE, n))}`);

async function runTarget(cluster: KvCluster, routing: Routing): Promise<void> {
  const name = `${cluster.system} x${cluster.servers}, to ${ROUTING_LABEL[routing]}`;
  const tag = `bench/${cluster.system}${cluster.servers}-${routing}`;
  let leader = await cluster.leader();
  const urlFor = (client: number) => (routing === "leader" ? cluster.urls[leader]! : cluster.urls[client % cluster.urls.length]!);
  // The ports the phase's clients talk to (not every server: status probes leave idle connections elsewhere).
  const portsFor = (clients: number) => [...new Set(Array.from({ length: clients }, (_, c) => Number(new URL(urlFor(c)).port)))];
  const record = (workload: Workload, result: PhaseResult) => {
    rows.push({ system: cluster.system, servers: cluster.servers, routing, workload, result });
    log(`[${name}] ${WORKLOAD_LABEL[workload]}: ${summary(result)}`);
    for (const k of result.errorKinds.slice(0, 3)) log(`    ${k.count} x ${k.example}`);
    if (result.errors > 0 || result.stopped) {
      const stop = result.stopped ? `stopped by ${result.stopped} after ${result.ok} of ${result.ops} operations, ` : "";
      problems.push(`${name}, ${WORKLOAD_LABEL[workload]}: ${stop}${result.errors} errors${result.errorKinds[0] ? ` (e.g. ${result.errorKinds[0].example})` : ""}`);
    }
  };
  const checkLeader = async () => {
    const now = await cluster.leader().catch(() => -1);
    if (now !== leader) {
      problems.push(`${name}: leader changed from server ${leader} to ${now} during the run`);
      log(`[${name}] leader changed from server ${leader} to ${now}`);
      if (now >= 0) leader = now;
    }
  };

  const put = (prefix: string) => (client: number, i: number, warm: boolean, signal: AbortSignal) => {
    const key = `${tag}/${prefix}${warm ? "-warm" : ""}/${i}`;
    return cluster.put(urlFor(client), key, value(key), signal);
  };
  /** Runs a PUT phase and, where the system counts them, notes how many PUTs the leader's log fsync covered. */
  const putPhase = async (workload: Workload, clients: number, ops: number, warmup: number, prefix: string) => {
    const fsyncs = () => cluster.walFsyncs?.(leader).catch(() => undefined) ?? Promise.resolve(undefined);
    const before = await fsyncs();
    const result = await runPhase({ clients, ops, warmup, timeoutMs: phaseTimeoutMs, ports: portsFor(clients), op: put(prefix) });
    const after = await fsyncs();
    record(workload, result);
    if (before !== undefined && after !== undefined && after > before) {
      const puts = result.ok + warmup; // approximate when there were errors
      fsyncNotes.push(`${name}, ${WORKLOAD_LABEL[workload]}: ${after - before} leader WAL fsyncs for ${puts} PUTs (${(puts / (after - before)).toFixed(1)} PUTs per fsync)`);
    }
    await checkLeader();
    return result;
  };
  const seq = await putPhase("put-seq", 1, SEQ_OPS, SEQ_OPS / 10, "seq");
  const conc = await putPhase("put", CLIENTS, CONC_OPS, CLIENTS * 4, "conc");
  // Keys are handed out in order, so when a phase was cut short the first `ok` of them were written.
  const written = (r: PhaseResult) => (r.stopped !== undefined && r.ok > 0 ? r.ok : r.ops);

  const rb = await readBack(cluster, cluster.urls[leader]!, [...sample(`${tag}/seq`, written(seq)), ...sample(`${tag}/conc`, written(conc))]);
  const total = rb.ok + rb.bad.length;
  readbacks.push(`${name}: ${rb.ok}/${total} sampled keys read back with the right value`);
  log(`[${name}] read-back: ${rb.ok}/${total} ok${rb.bad[0] ? `, e.g. ${rb.bad[0]}` : ""}`);
  if (rb.bad.length > 0) problems.push(`${name}: read-back after the PUT phases: ${rb.bad.length}/${total} wrong or missing (e.g. ${rb.bad[0]})`);

  // Reads walk the keys the 64-client PUT wrote in a scattered order (7919 is prime, coprime with the counts).
  const keyspace = written(conc);
  const get = (client: number, i: number, warm: boolean, signal: AbortSignal) => {
    const key = `${tag}/conc/${((warm ? i * 104729 + 13 : i * 7919) % keyspace)}`;
    return cluster.get(urlFor(client), key, signal).then((got) => {
      if (got !== valueB64(key)) throw new Error(`GET ${key}: wrong value ${JSON.stringify(Buffer.from(got, "base64").toString().slice(0, 40))}`);
    });
  };
  record("get", await runPhase({ clients: CLIENTS, ops: GET_OPS, warmup: CLIENTS * 4, timeoutMs: phaseTimeoutMs, ports: portsFor(CLIENTS), op: get }));
  await checkLeader();
}

/**
 * One fresh cluster per (system, size, routing): a new cluster starts empty, and connections pooled by
 * fetch for an earlier cluster die with it (Bun keeps at most 64 idle connections, so leftovers would be
 * evicted, and counted as churn, in the middle of the next run).
 */
async function runSystem(system: SystemName, servers: number, routing: Routing): Promise<void> {
  const began = performance.now();
  const name = `${system} x${servers}, to ${ROUTING_LABEL[routing]}`;
  let cluster: KvCluster;
  try {
    cluster = system === "causeway" ? await startCauseway(servers, tmpRoot, START_TIMEOUT_MS) : await startEtcd(servers, tmpRoot, START_TIMEOUT_MS);
  } catch (e) {
    const msg = e instanceof Error ? e.message : String(e);
    // The first line, and the first error line of the process output when that is what explains it.
    const lines = msg.split("\n");
    const cause = lines.slice(1).find((l) => /error/i.test(l));
    const first = `${lines[0]!.replace(/:$/, "")}${cause ? `: ${cause.trim().slice(0, 160)}` : ""}`;
    log(`[${name}] FAILED TO START: ${msg}`);
    problems.push(`${name}: failed to start: ${first}`);
    for (const workload of WORKLOADS) rows.push({ system, servers, routing, workload, result: "did not start (see PROBLEMS)" });
    return;
  }
  try {
    const leader = await cluster.leader();
    log(`[${name}] up in ${msText(performance.now() - began)}, leader is server ${leader} (${cluster.urls[leader]})`);
    await runTarget(cluster, routing);
  } catch (e) {
    const msg = e instanceof Error ? e.message : String(e);
    log(`[${name}] FAILED: ${msg}`);
    problems.push(`${name}: ${msg.split("\n")[0]}`);
  } finally {
    await cluster.close();
  }
}

// ---------------------------------------------------------------------------------------------------
// Report

const fmt = (n: number, digits: number) => (Number.isFinite(n) ? n.toFixed(digits) : "-");
/** Comparable: no errors and something measured (a phase cut by its deadline still measured what ran). */
const comparable = (r: PhaseResult) => r.errors === 0 && r.ok > 0 && (r.stopped === undefined || r.timedOut);
const SYSTEM_LABEL: Record<SystemName, string> = { causeway: "Causeway", etcd: "etcd" };

function connsCell(r: PhaseResult): string {
  if (!r.conns) return "n/a";
  const c = r.conns;
  if (c.peak === r.clients && c.opened === 0 && c.closed === 0) return String(c.peak);
  return `**${c.peak} open, ${c.opened} opened, ${c.closed} closed**`;
}

function resultsTable(): string[] {
  const out = [
    "| system | servers | sent to | workload | ops/s | p50 ms | p99 ms | errors | conns |",
    "|---|---|---|---|---:|---:|---:|---:|---|",
  ];
  for (const row of rows) {
    const head = `| ${SYSTEM_LABEL[row.system]} | ${row.servers} | ${ROUTING_LABEL[row.routing]} | ${WORKLOAD_LABEL[row.workload]}`;
    const r = row.result;
    if (typeof r === "string") {
      out.push(`${head} | - | - | - | **${r}** | - |`);
      continue;
    }
    const errors = r.errors > 0 || r.stopped ? `**${r.errors}${r.stopped ? `; stopped: ${r.stopped}` : ""}**` : "0";
    out.push(`${head} | ${r.ok > 0 ? fmt(r.opsPerSec, 0) : "-"} | ${fmt(r.p50, 2)} | ${fmt(r.p99, 2)} | ${errors} | ${connsCell(r)} |`);
  }
  return out;
}

function ratioTable(): string[] {
  const out = [
    "| servers | sent to | workload | Causeway ops/s | etcd ops/s | throughput Causeway/etcd | Causeway p99 ms | etcd p99 ms | p99 Causeway/etcd | target |",
    "|---|---|---|---:|---:|---:|---:|---:|---:|---|",
  ];
  const find = (system: SystemName, servers: number, routing: Routing, workload: Workload) =>
    rows.find((r) => r.system === system && r.servers === servers && r.routing === routing && r.workload === workload)?.result;
  for (const servers of sizes) {
    for (const routing of ["leader", "spread"] as const) {
      for (const workload of WORKLOADS) {
        const c = find("causeway", servers, routing, workload);
        const e = find("etcd", servers, routing, workload);
        if (c === undefined && e === undefined) continue;
        const head = `| ${servers} | ${ROUTING_LABEL[routing]} | ${WORKLOAD_LABEL[workload]}`;
        const why = (r: PhaseResult | string | undefined, who: string) =>
          r === undefined ? `${who} not run` : typeof r === "string" ? `${who} ${r}` : !comparable(r) ? `${who} had ${r.errors} errors${r.stopped ? `, ${r.stopped}` : ""}` : "";
        const problem = why(c, "Causeway") || why(e, "etcd");
        const cr = typeof c === "object" ? c : undefined;
        const er = typeof e === "object" ? e : undefined;
        if (problem) {
          out.push(`${head} | ${cr ? fmt(cr.opsPerSec, 0) : "-"} | ${er ? fmt(er.opsPerSec, 0) : "-"} | - | ${cr ? fmt(cr.p99, 2) : "-"} | ${er ? fmt(er.p99, 2) : "-"} | - | **n/a: ${problem}** |`);
          continue;
        }
        const tput = cr!.opsPerSec / er!.opsPerSec;
        const p99 = cr!.p99 / er!.p99;
        const verdict = workload === "put-seq" ? "-" : tput >= 1 && p99 <= 1 ? "met" : "**not met**";
        const cut = ([["Causeway", cr!], ["etcd", er!]] as const).filter(([, r]) => r.timedOut).map(([who, r]) => `${who} cut by the phase timeout after ${r.ok} ops`);
        const target = cut.length > 0 ? `${verdict} (${cut.join("; ")})` : verdict;
        out.push(`${head} | ${fmt(cr!.opsPerSec, 0)} | ${fmt(er!.opsPerSec, 0)} | ${fmt(tput, 2)}x | ${fmt(cr!.p99, 2)} | ${fmt(er!.p99, 2)} | ${fmt(p99, 2)}x | ${target} |`);
      }
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------------
// Main

const etcd = only === "causeway" ? null : etcdVersion();
const systems: SystemName[] = [];
if (only !== "etcd") systems.push("causeway");
if (only !== "causeway") {
  if (etcd) systems.push("etcd");
  else {
    const msg = "etcd not installed: install the Debian package etcd-server (apt-get install etcd-server); skipping the etcd rows";
    console.error(`\n*** ${msg} ***\n`);
    notes.push(msg);
  }
}

const cpuList = cpus();
const loadStart = loadavg()[0]!;
const runtime = typeof (globalThis as { Deno?: unknown }).Deno !== "undefined" ? `Deno ${process.versions.deno}` : `Bun ${process.versions.bun}`;
const causewayVersion = (JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string }).version;
const fsType = filesystemOf(tmpRoot);
const fsyncs = fsyncRate(tmpRoot, quick ? 300 : 1000, VALUE_BYTES);
if (fsType === "tmpfs" || fsType === "ramfs") problems.push(`data dirs are on ${fsType}: fsync costs nothing there, numbers are not representative (use --tmp <dir on disk>)`);
log(`KV benchmark: ${systems.join(" and ") || "nothing"} on ${sizes.join(" and ")} server(s), ${quick ? "quick" : "full"} mode; data dirs under ${tmpRoot} (${fsType}, ${fsyncs.toFixed(0)} fsync'd appends/s)`);

try {
  for (const servers of sizes) {
    for (const routing of servers > 1 && !leaderOnly ? (["leader", "spread"] as const) : (["leader"] as const)) {
      for (const system of systems) await runSystem(system, servers, routing);
    }
  }
} catch (e) {
  problems.push(`benchmark failed: ${e instanceof Error ? e.message : String(e)}`);
} finally {
  killEverythingSync();
}

const cpuModel = cpuList[0]?.model.trim() ?? "?";
console.log("");
console.log(`### KV over HTTP: Causeway vs etcd (${VALUE_BYTES}-byte values${quick ? ", --quick: 10x fewer operations" : ""})`);
console.log("");
console.log(`- Machine: ${cpuList.length} CPU${cpuList.length === 1 ? "" : "s"} (${cpuModel}), Linux ${release()}; load average ${loadStart.toFixed(2)} at start, ${loadavg()[0]!.toFixed(2)} at end (clients and servers share these CPUs)`);
console.log(`- Versions: Causeway ${causewayVersion} from source on ${runtime} (client and servers); etcd ${etcd ?? "not installed"}`);
console.log(`- Disk: data dirs on ${fsType}; ${fsyncs.toFixed(0)} fsync'd ${VALUE_BYTES}-byte appends/s (unbatched write ceiling)`);
console.log(`- Work per row: PUT 1 client ${SEQ_OPS} ops; PUT ${CLIENTS} clients ${CONC_OPS} ops; linearizable GET ${CLIENTS} clients ${GET_OPS} ops over the ${CONC_OPS} keys written; each after a short unmeasured warm-up`);
console.log(`- HTTP/1.1 keep-alive (fetch), one connection per client; "conns" = connections open from the bench to the servers during the measured operations (bold when not equal to the clients, or when any opened or closed after the warm-up)`);
console.log(`- Each (system, servers, sent to) runs on a fresh cluster; "all servers" = client c talks to server c mod N (followers forward writes, and confirm linearizable reads, with the leader)`);
console.log("");
for (const line of resultsTable()) console.log(line);
console.log("");
if (systems.length === 2) for (const line of ratioTable()) console.log(line);
else console.log(`(no Causeway/etcd ratios: only ${systems.join(", ") || "nothing"} ran)`);
console.log("");
for (const r of readbacks) console.log(`- read-back: ${r}`);
for (const f of fsyncNotes) console.log(`- fsync: ${f}`);
for (const n of notes) console.log(`- note: ${n}`);
if (problems.length > 0) {
  console.log("");
  console.log(`**PROBLEMS (${problems.length})**: these numbers are not a clean comparison`);
  for (const p of problems) console.log(`- ${p}`);
}
disarmWatchdog();
process.exit(problems.length > 0 ? 1 : 0);
