/**
 * Micro-benchmark of the agent's xDS publish path without processes or streams: what src/main/xds.ts
 * `publish` does per proxy update, `xdsCache.set(id, toResourceMap(sidecarResources(snapshot)))`, for
 * sidecars shaped like test/bench/xds.ts (100 upstream services of 20 instances, `svc-0` speaking http,
 * 1,000 sidecars for 100 destination services, 10 upstreams each: `svc-0` and 9 others). Snapshots share
 * what proxycfg shares between proxies (the agent cache's values: chains, target health arrays, roots,
 * one leaf per destination service).
 *
 *   bun run test/bench/xds_render.ts [--proxies 1000] [--rounds 3]
 *
 * Timed phases: the first full render of every proxy, then per round a health change (one svc-0
 * instance turns critical, or back) and an intention change (one new intention per destination), each
 * re-publishing every proxy with a new snapshot, as proxycfg does. Prints CPU ms per proxy update and a
 * digest of every node's type versions, which must not change when the pipeline gets faster.
 * test/bench/xds_fanout.ts reuses the scenario (`publishAll`, `changeHealth`, `addIntention`) to time
 * the stream side.
 */
import { sha256 } from "@noble/hashes/sha2.js";
import { bytesToHex, utf8ToBytes } from "@noble/hashes/utils.js";
import type { CheckServiceNode, Intention, Upstream } from "../../src/model/index.ts";
import type { SidecarSnapshot } from "../../src/proxycfg/index.ts";
import { createXdsCache, sidecarResources, toResourceMap, type XdsCache } from "../../src/xds/index.ts";
import { baseSnapshot, chain, instance, intention, LEAF } from "../../src/xds/resources/sidecar_kit.test.ts";

const argv = process.argv.slice(2);
const option = (name: string): string | undefined => {
  const i = argv.indexOf(name);
  return i >= 0 ? argv[i + 1] : undefined;
};
export const PROXIES = Number(option("--proxies") ?? 1000);
const ROUNDS = Number(option("--rounds") ?? 3);
const SERVICES = 100;
const INSTANCES = 20;
const DESTINATIONS = 100;
const UPSTREAMS = 10;

const chains = Array.from({ length: SERVICES }, (_, s) => chain(`svc-${s}`, s === 0 ? { protocol: "http" } : {}));
const healthOf = (s: number, criticalFirst = false): CheckServiceNode[] =>
  Array.from({ length: INSTANCES }, (_, i) =>
    instance({ node: `node-${s}-${i}`, address: `10.${s}.${i >> 8}.${i & 255}`, service: `svc-${s}`, port: 20000 + i, status: criticalFirst && i === 0 ? "critical" : "passing" }),
  );
const health = Array.from({ length: SERVICES }, (_, s) => healthOf(s));
const leaves = Array.from({ length: DESTINATIONS }, (_, d) => ({ ...LEAF, Service: `app-${d}` }));
let intentions: Array<readonly Intention[]> = Array.from({ length: DESTINATIONS }, () => []);
const base = baseSnapshot();
// proxycfg wraps the cache's roots value per proxy (cache_watch.ts indexedRoots): the list is shared.
const roots = Array.from({ length: PROXIES }, () => ({ ...base.Roots }));

function upstreamsOf(p: number): number[] {
  const out = [0];
  for (let k = 1; out.length < UPSTREAMS; k++) out.push(1 + ((p * 7 + k * 13) % (SERVICES - 1)));
  return [...new Set(out)];
}
const upstreamObjects = Array.from({ length: PROXIES }, (_, p) =>
  upstreamsOf(p).map((s, k): Upstream => ({ DestinationType: "service", DestinationName: `svc-${s}`, LocalBindPort: 10000 + k })),
);

function snapshot(p: number): SidecarSnapshot {
  const d = p % DESTINATIONS;
  const ups = upstreamsOf(p);
  const ids = ups.map((s) => `svc-${s}`);
  return {
    ...base,
    ProxyID: `app-${d}-sidecar-proxy-${p}`,
    Service: `app-${d}-sidecar-proxy`,
    Port: 21000 + p,
    Roots: roots[p]!,
    Proxy: { ...base.Proxy, DestinationServiceName: `app-${d}`, DestinationServiceID: `app-${d}-${p}`, Upstreams: upstreamObjects[p]! },
    ConnectProxy: {
      ...base.ConnectProxy,
      Leaf: leaves[d]!,
      Intentions: intentions[d]!,
      DiscoveryChain: Object.fromEntries(ups.map((s, k) => [ids[k]!, chains[s]!])),
      WatchedUpstreamEndpoints: Object.fromEntries(ups.map((s, k) => [ids[k]!, { [`svc-${s}.default.dc1`]: health[s]! }])),
      WatchedGatewayEndpoints: Object.fromEntries(ids.map((id) => [id, {}])),
      PreparedQueryEndpoints: {},
    },
  };
}

/** Sets every proxy's resources in `cache` (as src/main/xds.ts publish does); CPU and wall time taken. */
export function publishAll(cache: XdsCache): { cpuMs: number; wallMs: number } {
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  for (let p = 0; p < PROXIES; p++) {
    const snap = snapshot(p);
    cache.set(snap.ProxyID, toResourceMap(sidecarResources(snap)));
  }
  const cpu = process.cpuUsage(cpu0);
  return { cpuMs: (cpu.user + cpu.system) / 1000, wallMs: performance.now() - t0 };
}

/** Round `round`'s health change: one svc-0 instance turns critical (even rounds) or back. */
export function changeHealth(round: number): void {
  health[0] = healthOf(0, round % 2 === 0);
}

/** Round `round`'s intention change: a new intention for every destination. */
export function addIntention(round: number): void {
  intentions = intentions.map((xs) => [...xs, intention(`bench-${round}`, "deny", 9)]);
}

function digest(cache: XdsCache): string {
  const h = sha256.create();
  for (const id of cache.nodes()) {
    for (const [t, ts] of cache.get(id)!.types) h.update(utf8ToBytes(`${id} ${t} ${ts.version}\n`));
  }
  return bytesToHex(h.digest()).slice(0, 16);
}

const report = (phase: string, r: { cpuMs: number; wallMs: number }, cache: XdsCache) =>
  console.log(
    `${phase.padEnd(14)} ${(r.cpuMs / PROXIES).toFixed(3)} ms CPU per proxy update (${r.cpuMs.toFixed(0)} ms CPU, ${r.wallMs.toFixed(0)} ms wall for ${PROXIES}); digest ${digest(cache)}`,
  );

if (import.meta.main) {
  const cache = createXdsCache();
  report("first full", publishAll(cache), cache);
  for (let round = 0; round < ROUNDS; round++) {
    changeHealth(round);
    report(`health #${round + 1}`, publishAll(cache), cache);
    addIntention(round);
    report(`intention #${round + 1}`, publishAll(cache), cache);
  }
  report("unchanged", publishAll(cache), cache);
}
