/**
 * Filter benchmark: how long a heavy `?filter=` over a large catalog blocks the event loop, before
 * (synchronous filterList, the peer) and after (filterListAsync, yielding between slices of work).
 *
 *   npx bun run test/bench/filter.ts [--nodes 50000] [--name-len 200] [--meta-keys 16] [--meta-len 256]
 *                                    [--yield immediate|timeout] [--max-seconds 120]
 *
 * A real state store (src/state) is filled with --nodes nodes with long names and meta, and read back with
 * catalogNodes, exactly what /v1/catalog/nodes filters. While each evaluation runs, two probes stand in
 * for "a concurrent KV write": a 10 ms interval timer that applies a KV set to the same store (its worst
 * lateness is reported), and an HTTP client in a worker thread PUTting every 10 ms to a node:http server
 * on the main thread that applies a KV set (its worst round trip is reported; it would also show I/O
 * starved by the yield).
 *
 * Filters:
 * - heavy: as many clauses as the node cap allows (1,000 `Meta.kN == "..."` that never match, so every one
 *   is evaluated) plus a `Node matches` pattern that keeps ~20 NFA states alive over the whole long name.
 *   Sized so the synchronous run takes seconds: the "before" a leader would lose its leadership to.
 * - pathological: three patterns at the regexp-size cap with thousands of live states over the name and
 *   two meta values: ~40 ms per node, ~30 minutes for the catalog synchronously, so the synchronous run
 *   covers the first nodes only and is extrapolated.
 *
 * Rows: sync filterList (budget off); filterListAsync with the budget off (same work as sync: the price of
 * yielding); filterListAsync with the default budget (what the HTTP layer will run). The done-when of the
 * hardening issue: no concurrent KV write delayed by more than 100 ms. Bounded by --max-seconds; never
 * asserts. The machine is shared: compare ratios, not absolute numbers.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { Worker } from "node:worker_threads";
import {
  compileFilter,
  DEFAULT_MAX_FILTER_UNITS,
  DEFAULT_MAX_ITEM_UNITS,
  DEFAULT_SLICE_UNITS,
  filterList,
  filterListAsync,
  NODE_SCHEMA,
  WorkMeter,
  type Filter,
} from "../../src/connect/index.ts";
import type { Node } from "../../src/model/index.ts";
import { systemClock } from "../../src/platform/index.ts";
import { catalogNodes, createStateStore, WatchSet, type StateStore } from "../../src/state/index.ts";

const argv = process.argv.slice(2);
const option = (name: string, fallback: string): string => {
  const i = argv.indexOf(name);
  return i >= 0 && argv[i + 1] !== undefined ? argv[i + 1]! : fallback;
};
const NODES = Number(option("--nodes", "50000"));
const NAME_LEN = Number(option("--name-len", "200"));
const META_KEYS = Number(option("--meta-keys", "16"));
const META_LEN = Number(option("--meta-len", "256"));
const MAX_SECONDS = Number(option("--max-seconds", "120"));
const YIELD = option("--yield", "immediate");
if (![NODES, NAME_LEN, META_KEYS, META_LEN, MAX_SECONDS].every((n) => Number.isInteger(n) && n > 0) || META_KEYS < 3) {
  throw new Error("--nodes, --name-len, --meta-keys (>= 3), --meta-len and --max-seconds take positive integers");
}
if (YIELD !== "immediate" && YIELD !== "timeout") throw new Error("--yield takes immediate or timeout");
const deadline = performance.now() + MAX_SECONDS * 1000;
const yieldFn = YIELD === "immediate" ? () => new Promise<void>((r) => setImmediate(r)) : () => new Promise<void>((r) => setTimeout(r, 0));

// ---------------------------------------------------------------------------------------------------
// The catalog

/** A deterministic flat string of [a-z0-9.-] of length `len` that starts with `prefix` (joined, not +=: no ropes). */
function filler(prefix: string, len: number, seed: number): string {
  const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789.-";
  const chars = [prefix];
  let x = (seed * 2654435761) >>> 0;
  for (let n = prefix.length; n < len; n++) {
    x = (x * 1103515245 + 12345) >>> 0;
    chars.push(alphabet[x % alphabet.length]!);
  }
  return chars.join("").slice(0, len);
}

function buildStore(): StateStore {
  const store = createStateStore({ clock: systemClock() });
  for (let i = 0; i < NODES; i++) {
    const meta: Record<string, string> = {};
    for (let k = 0; k < META_KEYS; k++) meta[`k${k}`] = filler(`v${k}-`, META_LEN, i * 31 + k);
    store.apply(i + 1, {
      type: "register",
      req: {
        ID: `00000000-0000-4000-8000-${String(i).padStart(12, "0")}`,
        Node: filler(`node-${i}-`, NAME_LEN, i),
        Address: `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`,
        TaggedAddresses: { lan: `10.0.0.${i & 255}`, wan: `198.18.0.${i & 255}` },
        NodeMeta: meta,
      },
    });
  }
  return store;
}

// ---------------------------------------------------------------------------------------------------
// Probes: the concurrent "KV writes"

interface ProbeStats {
  timerTicks: number;
  worstTimerLateMs: number;
  httpPuts: number;
  worstHttpMs: number;
}

/**
 * The HTTP client runs in a worker thread, so it keeps its own clock and loop: a PUT it sends while the
 * main thread is blocked shows the whole wait, as an external client's would.
 */
const CLIENT = `
const { parentPort, workerData } = require("node:worker_threads");
let stop = false, puts = 0, worst = 0;
parentPort.on("message", () => { stop = true; });
(async () => {
  while (!stop) {
    const t0 = performance.now();
    await fetch(workerData.url, { method: "PUT", body: "v" }).then((r) => r.text());
    worst = Math.max(worst, performance.now() - t0);
    puts++;
    await new Promise((r) => setTimeout(r, 10));
  }
  parentPort.postMessage({ puts, worst });
})();
`;

async function withProbes<T>(store: StateStore, nextIndex: () => number, body: () => Promise<T>): Promise<{ result: T; stats: ProbeStats }> {
  const stats: ProbeStats = { timerTicks: 0, worstTimerLateMs: 0, httpPuts: 0, worstHttpMs: 0 };
  const value = new TextEncoder().encode("x".repeat(256));
  const write = (key: string) => store.apply(nextIndex(), { type: "kv", op: "set", entry: { Key: key, Value: value } });
  const server: Server = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      write("bench/http");
      res.end("true");
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/kv/bench/http`;
  let last = performance.now();
  const timer = setInterval(() => {
    const now = performance.now();
    stats.worstTimerLateMs = Math.max(stats.worstTimerLateMs, now - last - 10);
    last = now;
    write("bench/timer");
    stats.timerTicks++;
  }, 10);
  const client = new Worker(CLIENT, { eval: true, workerData: { url } });
  const report = new Promise<{ puts: number; worst: number }>((r) => client.once("message", r));
  await new Promise((r) => setTimeout(r, 200)); // let both probes start (and the worker warm up)
  try {
    const result = await body();
    await new Promise((r) => setTimeout(r, 30)); // and let a late tick be observed
    return { result, stats };
  } finally {
    clearInterval(timer);
    client.postMessage("stop");
    const { puts, worst } = await report;
    stats.httpPuts = puts;
    stats.worstHttpMs = worst;
    await client.terminate();
    await new Promise<void>((r) => server.close(() => r()));
  }
}

// ---------------------------------------------------------------------------------------------------
// Filters

const HEAVY = [
  "Node matches `(?:[a-z0-9.-]?){4}[a-z0-9.-]{4}#`",
  ...Array.from({ length: 1000 }, (_, i) => `Meta.k${i % META_KEYS} == n${i}`),
].join(" or ");
/** ~3,000 states each (the three fit the 10,000-state cap together), most alive on every character. */
const BIG_PATTERN = "(?:[a-z0-9.-]?){999}[a-z0-9.-]{999}#";
const PATHOLOGICAL = `Node matches \`${BIG_PATTERN}\` or Meta.k1 matches \`${BIG_PATTERN}\` or (Meta.k2 is not empty and Meta.k2 matches \`${BIG_PATTERN}\`)`;

/** Units per item and units per millisecond of `filter` over `items` (sync, budget off, after a warm-up of both evaluators). */
async function calibrate(filter: Filter, items: readonly Node[]): Promise<{ unitsPerItem: number; unitsPerMs: number }> {
  filterList(items.slice(0, 20), filter, { maxUnits: Infinity, maxItemUnits: Infinity });
  await filterListAsync(items, filter, { maxUnits: Infinity, maxItemUnits: Infinity, yield: yieldFn });
  const meter = new WorkMeter({ maxUnits: Infinity, maxItemUnits: Infinity });
  const t0 = performance.now();
  for (const item of items) {
    meter.startItem();
    filter.evaluate(item, meter);
  }
  const ms = performance.now() - t0;
  return { unitsPerItem: meter.used / items.length, unitsPerMs: meter.used / ms };
}

interface Row {
  readonly filter: string;
  readonly mode: string;
  readonly items: number;
  readonly ms: number;
  readonly outcome: string;
  readonly yields: number;
  readonly longestSlice: number;
  readonly stats: ProbeStats;
  readonly extrapolatedMs?: number;
}

async function measure(
  store: StateStore,
  nextIndex: () => number,
  name: string,
  mode: "sync" | "async, budget off" | "async, default budget",
  filter: Filter,
  items: readonly Node[],
  extrapolateTo?: number,
): Promise<Row> {
  let yields = 0, sliceStart = 0, longestSlice = 0;
  const counted = async () => {
    yields++;
    longestSlice = Math.max(longestSlice, performance.now() - sliceStart);
    await yieldFn();
    sliceStart = performance.now();
  };
  const off = { maxUnits: Infinity, maxItemUnits: Infinity };
  const { result, stats } = await withProbes(store, nextIndex, async () => {
    const t0 = performance.now();
    sliceStart = t0;
    let outcome: string;
    try {
      const out = mode === "sync"
        ? filterList(items, filter, off)
        : await filterListAsync(items, filter, mode === "async, budget off" ? { ...off, yield: counted } : { yield: counted });
      outcome = `${out.length} matched`;
    } catch (e) {
      outcome = e instanceof Error ? e.message.split(";")[0]! : String(e);
    }
    return { ms: performance.now() - t0, outcome };
  });
  const extrapolatedMs = extrapolateTo === undefined ? undefined : (result.ms * extrapolateTo) / items.length;
  return { filter: name, mode, items: items.length, yields, longestSlice, stats, extrapolatedMs, ...result };
}

// ---------------------------------------------------------------------------------------------------
// Run

const fmt = (ms: number) => (ms >= 10_000 ? `${(ms / 1000).toFixed(0)} s` : ms >= 1000 ? `${(ms / 1000).toFixed(2)} s` : `${ms.toFixed(1)} ms`);

console.log(`filter bench: ${NODES} nodes, names ${NAME_LEN} chars, ${META_KEYS} meta values of ${META_LEN} chars; yield via ${YIELD === "immediate" ? "setImmediate" : "setTimeout(0)"}`);
console.log(`runtime: ${process.versions.bun ? `Bun ${process.versions.bun}` : `Node-compatible ${process.version}`}; budget defaults: slice ${DEFAULT_SLICE_UNITS}, item ${DEFAULT_MAX_ITEM_UNITS}, total ${DEFAULT_MAX_FILTER_UNITS} units`);
let t = performance.now();
const store = buildStore();
let raftIndex = NODES;
const nextIndex = () => ++raftIndex;
const nodes = catalogNodes(store, new WatchSet()).value;
console.log(`store: ${nodes.length} nodes registered and read back in ${fmt(performance.now() - t)}`);

t = performance.now();
const heavy = compileFilter(HEAVY, NODE_SCHEMA);
const pathological = compileFilter(PATHOLOGICAL, NODE_SCHEMA);
console.log(`compiled: heavy (${HEAVY.length} bytes) and pathological (${PATHOLOGICAL.length} bytes) in ${fmt(performance.now() - t)}`);

const cal = await calibrate(heavy, nodes.slice(0, 2000));
console.log(`heavy: ${cal.unitsPerItem.toFixed(0)} units per node, ${(cal.unitsPerMs / 1000).toFixed(1)} M units/s (one unit ~ ${(1e6 / cal.unitsPerMs).toFixed(1)} ns)`);
const calP = await calibrate(pathological, nodes.slice(0, 5));
console.log(`pathological: ${calP.unitsPerItem.toFixed(0)} units per node, ${(calP.unitsPerMs / 1000).toFixed(1)} M units/s`);

/**
 * The floor: no filter, a busy loop that allocates nothing, in 1 ms slices with the same yield, for as
 * long as the heavy async run took. What it shows is the machine (other tenants, the probes' own work).
 */
async function control(ms: number): Promise<Row> {
  let yields = 0, longestSlice = 0;
  const { result, stats } = await withProbes(store, nextIndex, async () => {
    const t0 = performance.now();
    while (performance.now() - t0 < ms) {
      const s = performance.now();
      while (performance.now() - s < 1) { /* spin */ }
      longestSlice = Math.max(longestSlice, performance.now() - s);
      yields++;
      await yieldFn();
    }
    return { ms: performance.now() - t0, outcome: "-" };
  });
  return { filter: "(control: 1 ms busy slices)", mode: "no filter", items: 0, yields, longestSlice, stats, ...result };
}

const rows: Row[] = [];
const plan: (() => Promise<Row>)[] = [
  () => control(3000),
  () => measure(store, nextIndex, "heavy", "sync", heavy, nodes),
  () => measure(store, nextIndex, "heavy", "async, budget off", heavy, nodes),
  () => measure(store, nextIndex, "heavy", "async, default budget", heavy, nodes),
  () => measure(store, nextIndex, "pathological", "sync", pathological, nodes.slice(0, 50), nodes.length),
  () => measure(store, nextIndex, "pathological", "async, default budget", pathological, nodes),
];
for (const step of plan) {
  if (performance.now() > deadline) {
    console.log(`--max-seconds ${MAX_SECONDS} reached: remaining rows skipped`);
    break;
  }
  const row = await step();
  rows.push(row);
  console.log(`  ${row.filter} / ${row.mode}: ${fmt(row.ms)}, ${row.outcome}`);
}

console.log("\n| filter | evaluator | nodes | time | outcome | yields (longest slice) | worst timer lateness | worst KV PUT (HTTP) | KV writes during |");
console.log("|---|---|---|---|---|---|---|---|---|");
for (const r of rows) {
  const time = r.extrapolatedMs === undefined ? fmt(r.ms) : `${fmt(r.ms)} (x${NODES / r.items} = ~${fmt(r.extrapolatedMs)})`;
  const late = r.extrapolatedMs === undefined ? fmt(r.stats.worstTimerLateMs) : `${fmt(r.stats.worstTimerLateMs)} (~${fmt(r.extrapolatedMs)} over all nodes)`;
  console.log(
    `| ${r.filter} | ${r.mode} | ${r.items} | ${time} | ${r.outcome} | ${r.yields}${r.yields ? ` (${fmt(r.longestSlice)})` : ""} | ${late} | ${fmt(r.stats.worstHttpMs)} | ${r.stats.timerTicks} timer + ${r.stats.httpPuts} HTTP |`,
  );
}

const find = (f: string, m: string) => rows.find((r) => r.filter === f && r.mode === m);
const before = find("heavy", "sync"), after = find("heavy", "async, budget off");
if (before && after) {
  console.log(`\nheavy, same work: time async/sync ${(after.ms / before.ms).toFixed(2)}x; worst stall async/sync ${(after.stats.worstTimerLateMs / before.stats.worstTimerLateMs).toFixed(4)}x`);
}
const worstAfter = Math.max(...rows.filter((r) => r.mode !== "sync").map((r) => Math.max(r.stats.worstTimerLateMs, r.stats.worstHttpMs)));
console.log(`done-when (no concurrent KV write delayed > 100 ms with the yielding evaluator): ${worstAfter <= 100 ? "met" : "NOT met"} (worst ${fmt(worstAfter)})`);
