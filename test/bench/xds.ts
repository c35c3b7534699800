/**
 * xDS benchmark: a real `causeway agent -dev` (from source, through test/bench/xds_agent.ts, which adds
 * a memory/CPU probe on SIGUSR2) serving ADS to 1,000 streams held by a separate client process
 * (test/bench/xds_client.ts, Bun, @grpc/grpc-js, one HTTP/2 connection per stream), all on 127.0.0.1.
 *
 *   bun run bench:xds [--rate 250] [--proxies 1000] [--variants sotw,delta] [--change-timeout <s>] [--max-minutes <m>]
 *                     [--profile <dir>]
 *
 * Setup over HTTP: 100 upstream services `svc-0`..`svc-99` with 20 connect-proxy instances each (2,000
 * endpoints, /v1/catalog/register on 100 nodes, each instance with a passing service check); `svc-0`
 * speaks http (service-defaults), so its upstream gets an RDS route; 1,000 local sidecars
 * (/v1/agent/service/register, Kind connect-proxy, for 100 destination services `app-*`), each with 10
 * upstreams: `svc-0` and 9 others. Stream node.id = the sidecar's ID.
 *
 * Per variant (SotW, then delta, on the same agent): time from opening all streams to every stream
 * holding a full config (clusters, listeners, every EDS and RDS it subscribes to); then three changes,
 * each timed from just before the HTTP request to each affected stream holding the result:
 *   - health: one svc-0 instance's check turns critical -> its endpoint UNHEALTHY in svc-0's EDS;
 *   - intention: a new intention `bench-* -> *` (deny) -> every public listener changes;
 *   - config entry: a service-router for svc-0 -> every stream holds the new svc-0 route (the first
 *     router makes svc-0's chain non-default, so its upstream listener switches to RDS and the route
 *     appears; in the second run the route changes).
 * Agent CPU per update = agent CPU during the change (without the probes' own garbage collection) /
 * proxies updated; client CPU per update likewise for the client process, which shares the CPUs with the
 * agent (the client decodes only what it checks: names, and the changed endpoint's health), and the
 * responses and KB the client received from arming to the last stream reached. Memory per proxy =
 * agent RSS and JS heap (after a full GC) with the streams connected, minus the same before the sidecars
 * were registered, divided by the proxies; "streams only" subtracts the figure before the streams opened.
 * Besides the limiter, proxycfg coalesces a proxy's snapshots (Consul's 200 ms coalesceTimeout).
 *
 * The server's update limiter (Consul's `xds.update_max_per_second`, default 250/s) spaces snapshot
 * updates across all streams, so a change reaching 1,000 proxies takes at least ~4 s at the default.
 * `--rate N` starts the agent with `xds { update_max_per_second = N }` (0 = unlimited) to see what is
 * left without the limiter.
 * `--profile <dir>` writes CPU profiles of both processes (test/bench/xds_profile.ts): the agent's
 * `agent-<n>.cpuprofile` for the window between its n-1th and nth stats probe (the bench prints which
 * window is which change) and the client's `client-<variant>-<change>.cpuprofile`.
 * It never asserts: targets are reported as met or not. Everything it starts is killed on exit.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { cpus, loadavg, release, tmpdir } from "node:os";
import { createInterface } from "node:readline";
import { startAgentProcess, poll, type AgentProcess } from "../harness/agent_process.ts";
import { STATS_PREFIX } from "./xds_agent.ts";

const argv = process.argv.slice(2);
const option = (name: string): string | undefined => {
  const i = argv.indexOf(name);
  return i >= 0 ? argv[i + 1] : undefined;
};
const PROXIES = Number(option("--proxies") ?? 1000);
const VARIANTS = (option("--variants") ?? "sotw,delta").split(",") as Array<"sotw" | "delta">;
const CHANGE_TIMEOUT_MS = Number(option("--change-timeout") ?? 60) * 1000;
const MAX_MINUTES = Number(option("--max-minutes") ?? 8);
const UPSTREAM_SERVICES = 100;
const INSTANCES_PER_SERVICE = 20;
const UPSTREAMS_PER_PROXY = 10;
const DESTINATIONS = 100;
const DEFAULT_RATE = 250;
const RATE = Number(option("--rate") ?? DEFAULT_RATE);
const PROFILE_DIR = option("--profile");
if (PROFILE_DIR !== undefined) process.env.XDSBENCH_CPU_PROFILE = PROFILE_DIR;
if (!Number.isInteger(RATE) || RATE < 0) throw new Error("--rate takes a non-negative integer (0 = unlimited)");
const EDS = "type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment";
const LDS = "type.googleapis.com/envoy.config.listener.v3.Listener";
const RDS = "type.googleapis.com/envoy.config.route.v3.RouteConfiguration";
if (!(PROXIES > 0) || VARIANTS.some((v) => v !== "sotw" && v !== "delta")) throw new Error("--proxies takes a positive number, --variants sotw,delta");

const log = (s: string) => console.error(s);
const problems: string[] = [];
const epochMs = () => performance.timeOrigin + performance.now();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

// ---------------------------------------------------------------------------------------------------
// Processes: the agent and the client, killed whatever happens.

let agent: AgentProcess | undefined;
let client: ChildProcess | undefined;
const killAll = () => {
  if (client?.pid && client.exitCode === null) client.kill("SIGKILL");
  if (agent?.child.pid && agent.child.exitCode === null) agent.child.kill("SIGKILL");
};
process.on("exit", killAll);
for (const sig of ["SIGINT", "SIGTERM"] as const) process.on(sig, () => { killAll(); process.exit(130); });
const watchdog = setTimeout(() => { log(`bench exceeded --max-minutes ${MAX_MINUTES}: killing everything`); killAll(); process.exit(2); }, MAX_MINUTES * 60_000);

/** An agent probe (test/bench/xds_agent.ts): CPU read before and after its own full GC. */
interface Stats { rss: number; heapUsed: number; cpuUs: number; cpuAfterGcUs: number }
let probes = 0;
/** Asks the agent for its memory and CPU (SIGUSR2 -> one stats line) and waits for the answer. */
async function agentStats(): Promise<Stats> {
  const seen = agent!.output().split(STATS_PREFIX).length;
  agent!.child.kill("SIGUSR2");
  probes++;
  const out = await poll(async () => agent!.output(), (o) => o.split(STATS_PREFIX).length > seen && o.split(STATS_PREFIX)[seen]!.includes("\n"), 20_000, "agent stats");
  return JSON.parse(out.split(STATS_PREFIX)[seen]!.split("\n")[0]!) as Stats;
}

type ClientEvent = { ev: "ready"; ms: number[]; failed: number; errors: string[] } | { ev: "armed"; id: string; affected: number } | { ev: "done"; id: string; ms: number[]; missing: number; cpuMs: number; messages: number; bytes: number } | { ev: "closed" };
const waiting: Array<{ match: (e: ClientEvent) => boolean; resolve: (e: ClientEvent) => void }> = [];
function startClient(): void {
  client = spawn(process.execPath, [new URL("./xds_client.ts", import.meta.url).pathname], { stdio: ["pipe", "pipe", "inherit"] });
  createInterface({ input: client.stdout! }).on("line", (line) => {
    const e = JSON.parse(line) as ClientEvent;
    const i = waiting.findIndex((w) => w.match(e));
    if (i >= 0) waiting.splice(i, 1)[0]!.resolve(e);
  });
}
function tell<E extends ClientEvent>(cmd: unknown, match: (e: ClientEvent) => e is E): Promise<E> {
  const p = new Promise<E>((resolve) => waiting.push({ match, resolve: resolve as (e: ClientEvent) => void }));
  client!.stdin!.write(`${JSON.stringify(cmd)}\n`);
  return p;
}
const send = (cmd: unknown) => void client!.stdin!.write(`${JSON.stringify(cmd)}\n`);

// ---------------------------------------------------------------------------------------------------
// HTTP setup

async function http(method: string, path: string, body?: unknown): Promise<unknown> {
  const res = await fetch(`${agent!.httpUrl}${path}`, { method, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`${method} ${path}: ${res.status} ${text}`);
  return text === "" ? null : JSON.parse(text);
}
async function inParallel<T>(items: readonly T[], width: number, f: (t: T) => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: width }, async () => {
    while (next < items.length) await f(items[next++]!);
  }));
}

/** The catalog registration of upstream instance `j` of `svc-k`, with its check in `status`. */
function backend(k: number, j: number, status: "passing" | "critical") {
  const address = `10.${1 + Math.floor(k / 200)}.${k % 200}.${1 + j}`;
  const id = `svc-${k}-${j}-sidecar-proxy`;
  return {
    endpoint: `${address}:${21000 + j}`,
    body: {
      Node: `backend-${k}`, Address: `10.${1 + Math.floor(k / 200)}.${k % 200}.250`,
      Service: { ID: id, Service: `svc-${k}-sidecar-proxy`, Kind: "connect-proxy", Address: address, Port: 21000 + j, Proxy: { DestinationServiceName: `svc-${k}`, LocalServicePort: 8080 } },
      Check: { CheckID: `check-${id}`, Name: "bench", ServiceID: id, Status: status },
    },
  };
}
const proxyId = (i: number) => `app-${i % DESTINATIONS}-${Math.floor(i / DESTINATIONS)}-sidecar-proxy`;
function sidecar(i: number) {
  const others = Array.from({ length: UPSTREAMS_PER_PROXY - 1 }, (_, j) => 1 + ((i * 7 + j * 11) % (UPSTREAM_SERVICES - 1)));
  const ups = [0, ...new Set(others)];
  return {
    ID: proxyId(i), Name: `app-${i % DESTINATIONS}-sidecar-proxy`, Kind: "connect-proxy", Port: 30000 + (i % 30000),
    Proxy: {
      DestinationServiceName: `app-${i % DESTINATIONS}`, LocalServicePort: 8080,
      Upstreams: ups.map((k, n) => ({ DestinationName: `svc-${k}`, LocalBindPort: 9000 + n })),
    },
  };
}

// ---------------------------------------------------------------------------------------------------
// Figures

const pct = (xs: readonly number[], p: number) => {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)]!;
};
const f0 = (n: number) => (Number.isFinite(n) ? n.toFixed(0) : "-");
const f2 = (n: number) => (Number.isFinite(n) ? n.toFixed(2) : "-");
const mb = (b: number) => b / (1 << 20);

interface ChangeRow { variant: string; change: string; affected: number; reached: number; p50: number; p99: number; max: number; cpuMsPerUpdate: number; clientCpuMsPerUpdate: number; messages: number; kbPerUpdate: number }
interface VariantRow { variant: string; ready: number; p50: number; p99: number; all: number; rssPerStreamMb: number; heapPerStreamMb: number; failed: number }
const changes: ChangeRow[] = [];
const variants: VariantRow[] = [];
let allIn: { rss: number; heap: number } | undefined;

async function measureChange(variant: string, change: string, arm: { type: string; name: string; endpoint?: string; scope?: { type: string; name: string } }, act: () => Promise<unknown>): Promise<void> {
  const id = `${variant}-${change}`;
  const armed = await tell({ op: "arm", id, ...arm }, (e): e is Extract<ClientEvent, { ev: "armed" }> => e.ev === "armed" && e.id === id);
  if (armed.affected === 0) {
    problems.push(`${id}: no stream holds a ${arm.type.split(".").pop()} named /${arm.name}/ to change`);
    return;
  }
  const before = await agentStats();
  const done = new Promise<Extract<ClientEvent, { ev: "done" }>>((resolve) => waiting.push({ match: (e) => e.ev === "done" && e.id === id, resolve: resolve as (e: ClientEvent) => void }));
  const t0 = epochMs();
  await act();
  send({ op: "t0", id, t0, timeoutMs: CHANGE_TIMEOUT_MS });
  const result = await done;
  const after = await agentStats();
  const row: ChangeRow = {
    variant, change, affected: armed.affected, reached: result.ms.length,
    p50: pct(result.ms, 50), p99: pct(result.ms, 99), max: pct(result.ms, 100),
    cpuMsPerUpdate: (after.cpuUs - before.cpuAfterGcUs) / 1000 / Math.max(1, result.ms.length),
    clientCpuMsPerUpdate: result.cpuMs / Math.max(1, result.ms.length),
    messages: result.messages,
    kbPerUpdate: result.bytes / 1024 / Math.max(1, result.ms.length),
  };
  changes.push(row);
  log(`[${variant}] ${change}: ${row.reached}/${row.affected} streams in p50 ${f0(row.p50)} ms, p99 ${f0(row.p99)} ms, max ${f0(row.max)} ms; ${f2(row.cpuMsPerUpdate)} ms agent CPU, ${f2(row.clientCpuMsPerUpdate)} ms client CPU per update; ${row.messages} responses, ${f2(row.kbPerUpdate)} KB per update${PROFILE_DIR ? ` (agent profile ${probes})` : ""}`);
  if (result.missing > 0) problems.push(`${id}: ${result.missing} of ${armed.affected} streams did not get the change within ${CHANGE_TIMEOUT_MS / 1000} s`);
}

async function runVariant(variant: "sotw" | "delta", round: number, base: Stats, grpcAddr: string): Promise<void> {
  const beforeStreams = await agentStats();
  const ids = Array.from({ length: PROXIES }, (_, i) => proxyId(i));
  const ready = await tell({ op: "open", variant, target: grpcAddr, ids, timeoutMs: 120_000 }, (e): e is Extract<ClientEvent, { ev: "ready" }> => e.ev === "ready");
  await sleep(1000); // let the last ACKs land before measuring memory
  const connected = await agentStats();
  const row: VariantRow = {
    variant, ready: ready.ms.length, p50: pct(ready.ms, 50), p99: pct(ready.ms, 99), all: pct(ready.ms, 100),
    rssPerStreamMb: mb(connected.rss - beforeStreams.rss) / PROXIES, heapPerStreamMb: mb(connected.heapUsed - beforeStreams.heapUsed) / PROXIES, failed: ready.failed,
  };
  variants.push(row);
  if (round === 0) allIn = { rss: mb(connected.rss - base.rss) / PROXIES, heap: mb(connected.heapUsed - base.heapUsed) / PROXIES };
  log(`[${variant}] ${row.ready}/${PROXIES} streams with a full config: p50 ${f0(row.p50)} ms, p99 ${f0(row.p99)} ms, all ${f0(row.all)} ms; streams only: ${f2(row.rssPerStreamMb)} MB RSS, ${f2(row.heapPerStreamMb)} MB heap per stream`);
  if (ready.failed > 0 || ready.ms.length < PROXIES) problems.push(`${variant}: ${PROXIES - ready.ms.length} streams without a full config, ${ready.failed} failed (${ready.errors.join("; ")})`);

  const b = backend(0, round, "critical");
  await measureChange(variant, "health", { type: EDS, name: "^svc-0\\.", endpoint: b.endpoint }, () => http("PUT", "/v1/catalog/register", b.body));
  await measureChange(variant, "intention", { type: LDS, name: "^public_listener" }, () => http("POST", "/v1/connect/intentions", { SourceName: `bench-${variant}`, DestinationName: "*", Action: "deny" }));
  // The first router makes svc-0's chain non-default: its upstream listener switches to RDS and the route
  // appears; in a later round the route changes. Either way: until the affected stream holds the new route.
  await measureChange(variant, "config entry", { type: RDS, name: "^svc-0$", scope: { type: LDS, name: "^svc-0:" } }, () =>
    http("PUT", "/v1/config", { Kind: "service-router", Name: "svc-0", Routes: [{ Match: { HTTP: { PathPrefix: `/${variant}` } }, Destination: { Service: "svc-0", PrefixRewrite: "/" } }] }));
  await tell({ op: "close" }, (e): e is Extract<ClientEvent, { ev: "closed" }> => e.ev === "closed");
  await sleep(2000); // streams end on the server
}

// ---------------------------------------------------------------------------------------------------
// Main

const began = performance.now();
let grpcAddr = "";
const configDir = mkdtempSync(join(tmpdir(), "cw-bench-xds-"));
process.on("exit", () => rmSync(configDir, { recursive: true, force: true }));
const configFile = join(configDir, "xds.json");
writeFileSync(configFile, JSON.stringify({ xds: { update_max_per_second: RATE } }));
try {
  agent = await startAgentProcess(process.execPath, [
    new URL("./xds_agent.ts", import.meta.url).pathname, "agent", "-dev", "-log-level", "warn", "-node", "bench",
    "-http-port", "0", "-dns-port", "-1", "-grpc-port", "0", "-server-port", "0", "-serf-lan-port", "0", "-serf-wan-port", "0", "-config-file", configFile,
  ], { timeoutMs: 60_000 });
  grpcAddr = /gRPC: ([\d.]+:\d+)/.exec(agent.output())?.[1] ?? "";
  if (grpcAddr === "") throw new Error(`the agent did not report a gRPC address:\n${agent.output()}`);
  await poll(() => http("GET", "/v1/connect/ca/roots"), (r) => typeof (r as { ActiveRootID?: string })?.ActiveRootID === "string" && (r as { ActiveRootID: string }).ActiveRootID !== "", 30_000, "an active CA root");
  log(`agent up (HTTP ${agent.httpUrl}, gRPC ${grpcAddr}); registering ${UPSTREAM_SERVICES * INSTANCES_PER_SERVICE} upstream instances`);
  let t = performance.now();
  const instances = Array.from({ length: UPSTREAM_SERVICES * INSTANCES_PER_SERVICE }, (_, n) => backend(Math.floor(n / INSTANCES_PER_SERVICE), n % INSTANCES_PER_SERVICE, "passing").body);
  await inParallel(instances, 16, (body) => http("PUT", "/v1/catalog/register", body));
  await http("PUT", "/v1/config", { Kind: "service-defaults", Name: "svc-0", Protocol: "http" });
  log(`  ${instances.length} instances in ${((performance.now() - t) / 1000).toFixed(1)} s`);
  const base = await agentStats();
  t = performance.now();
  await inParallel(Array.from({ length: PROXIES }, (_, i) => sidecar(i)), 16, (body) => http("PUT", "/v1/agent/service/register", body));
  log(`  ${PROXIES} sidecars in ${((performance.now() - t) / 1000).toFixed(1)} s; letting proxycfg settle`);
  await sleep(5000);
  startClient();
  for (const [round, v] of VARIANTS.entries()) await runVariant(v, round, base, grpcAddr);
} catch (e) {
  problems.push(`benchmark failed: ${e instanceof Error ? e.message : String(e)}`);
  log(String(e instanceof Error ? e.stack : e));
} finally {
  killAll();
}

// ---------------------------------------------------------------------------------------------------
// Report

const cpuList = cpus();
const CHANGE_LABEL: Record<string, string> = { health: "health change -> EDS", intention: "intention -> public listeners (LDS)", "config entry": "service-router -> svc-0 route (RDS)" };
console.log("");
console.log(`### xDS: ${PROXIES} ADS streams, ${UPSTREAMS_PER_PROXY} upstreams each, ${UPSTREAM_SERVICES * INSTANCES_PER_SERVICE} endpoints`);
console.log("");
console.log(`- Machine: ${cpuList.length} CPUs (${cpuList[0]?.model.trim() ?? "?"}), Linux ${release()}; load ${loadavg()[0]!.toFixed(2)} at end; agent and client process share these CPUs`);
console.log(`- Agent: \`causeway agent -dev\` from source on Bun ${process.versions.bun}; update limiter at ${RATE === 0 ? "unlimited" : `${RATE} updates/s`}${RATE === DEFAULT_RATE ? " (the default)" : ""}; whole run ${((performance.now() - began) / 1000).toFixed(0)} s`);
console.log("");
console.log("| variant | streams with full config | p50 ms | p99 ms | all ms | RSS MB per stream (streams only) | heap MB per stream (streams only) |");
console.log("|---|---:|---:|---:|---:|---:|---:|");
for (const v of variants) console.log(`| ${v.variant} | ${v.ready}/${PROXIES} | ${f0(v.p50)} | ${f0(v.p99)} | ${f0(v.all)} | ${f2(v.rssPerStreamMb)} | ${f2(v.heapPerStreamMb)} |`);
console.log("");
console.log("| variant | change | streams reached | p50 ms | p99 ms | max ms | agent CPU ms per update | client CPU ms per update | KB per update | target p99 < 1 s |");
console.log("|---|---|---:|---:|---:|---:|---:|---:|---:|---|");
for (const c of changes) console.log(`| ${c.variant} | ${CHANGE_LABEL[c.change]} | ${c.reached}/${c.affected} | ${f0(c.p50)} | ${f0(c.p99)} | ${f0(c.max)} | ${f2(c.cpuMsPerUpdate)} | ${f2(c.clientCpuMsPerUpdate)} | ${f2(c.kbPerUpdate)} | ${c.change === "health" ? (c.reached === c.affected && c.p99 < 1000 ? "met" : "**not met**") : "-"} |`);
console.log("");
if (allIn) console.log(`- Memory per connected proxy (registered sidecar + proxycfg + xDS cache + stream, ${VARIANTS[0]} run): ${f2(allIn.rss)} MB RSS, ${f2(allIn.heap)} MB JS heap; target <= 0.5 MB: ${allIn.rss <= 0.5 && allIn.heap <= 0.5 ? "met" : "**not met**"}`);
console.log(`- Peers (published, not measured here): Consul's default xds.update_max_per_second of 250 updates/s per server (${PROXIES} proxies = ${(PROXIES / DEFAULT_RATE).toFixed(1)} s for one change to reach all); Istio's istiod at 1 vCPU and 1.5 GB of memory per 2,000 sidecars (0.75 MB per sidecar).`);
if (problems.length > 0) {
  console.log("");
  console.log(`**PROBLEMS (${problems.length})**`);
  for (const p of problems) console.log(`- ${p}`);
}
clearTimeout(watchdog);
process.exit(problems.length > 0 ? 1 : 0);
