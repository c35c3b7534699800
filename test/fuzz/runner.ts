/**
 * Runs fuzz probes against a live agent and checks, after every batch, that it is still serving,
 * that its memory is back near its baseline, and that a sentinel key is intact. Every answer of 500,
 * every hang and every lost connection is a finding, reported with the seed and probe number that
 * reproduce it.
 */
import { readFileSync } from "node:fs";
import { seededRng } from "../../src/platform/index.ts";
import { nextProbe, type Probe } from "./probes.ts";
import type { MutationLimits } from "./mutate.ts";

export interface Finding {
  readonly seed: number;
  /** Probe number within the seed's run (replays with the same seed and count). */
  readonly probe: number;
  readonly method: string;
  readonly path: string;
  readonly what: string;
  readonly problem: string;
}

export interface FuzzTarget {
  readonly url: string;
  readonly pid: number;
}

export interface FuzzRun {
  readonly probes: number;
  readonly findings: readonly Finding[];
  readonly baselineRssKb: number;
  readonly peakRssKb: number;
  /** How many answers had each status ("error" for no answer). */
  readonly statuses: Readonly<Record<string, number>>;
}

const SENTINEL_KEY = "fuzz-sentinel";
const SENTINEL_VALUE = "still-here";
const REQUEST_TIMEOUT_MS = 15_000;

/** Resident set size of `pid` in KiB, from /proc. */
export function rssKb(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return m ? Number(m[1]) : 0;
}

async function send(url: string, p: Probe): Promise<{ status: number; text: string } | { error: string }> {
  try {
    const r = await fetch(url + p.path, {
      method: p.method,
      body: p.body && p.method !== "GET" ? p.body : undefined,
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    });
    const text = await r.text();
    return { status: r.status, text: text.slice(0, 300) };
  } catch (err) {
    return { error: (err as Error).name === "TimeoutError" ? `no answer within ${REQUEST_TIMEOUT_MS} ms` : String(err) };
  }
}

async function healthy(url: string): Promise<string | undefined> {
  const leader = await send(url, { method: "GET", path: "/v1/status/leader", what: "" });
  if ("error" in leader || leader.status !== 200) return `not serving: /v1/status/leader gave ${"error" in leader ? leader.error : leader.status}`;
  const s = await send(url, { method: "GET", path: `/v1/kv/${SENTINEL_KEY}?raw`, what: "" });
  if ("error" in s || s.status !== 200 || s.text !== SENTINEL_VALUE) return `sentinel key lost or changed: ${"error" in s ? s.error : `${s.status} ${s.text}`}`;
  return undefined;
}

/**
 * Runs `count` probes drawn from `seed` against `target`, in batches of `batch`. `snapshotArchive`: a
 * valid archive of the target to damage (fetched here when absent). Stops early when the target stops
 * serving. `rssLimit(baseline)`: the most RSS allowed after a batch (default 2x baseline + 64 MiB).
 */
export async function runFuzz(o: {
  target: FuzzTarget;
  seed: number;
  count: number;
  batch?: number;
  limits?: MutationLimits;
  rssLimitKb?: (baselineKb: number) => number;
  onProgress?: (done: number, findings: number) => void;
}): Promise<FuzzRun> {
  const { url, pid } = o.target;
  const findings: Finding[] = [];
  // A dev agent elects itself within a second or so of starting.
  for (let tries = 0; ; tries++) {
    const l = await send(url, { method: "GET", path: "/v1/status/leader", what: "" });
    if (!("error" in l) && l.status === 200 && l.text !== '""') break;
    if (tries > 100) throw new Error("the agent has no leader after 10 s");
    await new Promise((r) => setTimeout(r, 100));
  }
  const put = await send(url, { method: "PUT", path: `/v1/kv/${SENTINEL_KEY}`, body: new TextEncoder().encode(SENTINEL_VALUE), what: "" });
  if ("error" in put || put.status !== 200) throw new Error(`cannot write the sentinel key: ${JSON.stringify(put)}`);
  // The archive the fuzzer damages is restored now and then (a flip in the gzip header's MTIME leaves it
  // valid): take it once the CA exists, so that a restore does not take the CA away (the leader would
  // create a new one, but answers in between would be 500s that no input caused).
  for (let tries = 0; tries < 100; tries++) {
    const roots = await send(url, { method: "GET", path: "/v1/connect/ca/roots", what: "" });
    if ("error" in roots || roots.status !== 200 || !roots.text.includes('"Roots":[{')) await new Promise((r) => setTimeout(r, 100));
    else break;
  }
  const snap = await fetch(`${url}/v1/snapshot`).then(async (r) => new Uint8Array(await r.arrayBuffer()));
  const baselineRssKb = rssKb(pid);
  let peakRssKb = baselineRssKb;
  const limit = (o.rssLimitKb ?? ((b) => 2 * b + 64 * 1024))(baselineRssKb);
  const rng = seededRng(o.seed);
  const batch = o.batch ?? 50;
  let done = 0;
  const statuses: Record<string, number> = {};
  while (done < o.count) {
    for (const end = Math.min(o.count, done + batch); done < end; done++) {
      const p = nextProbe(rng, snap, o.limits);
      const r = await send(url, p);
      const key = "error" in r ? "error" : String(r.status);
      statuses[key] = (statuses[key] ?? 0) + 1;
      const problem = "error" in r ? r.error : r.status === 500 ? `answered ${r.status}: ${r.text.trim()}` : undefined;
      if (problem) findings.push({ seed: o.seed, probe: done, method: p.method, path: p.path.slice(0, 200), what: p.what, problem });
    }
    const sick = await healthy(url);
    if (sick) {
      findings.push({ seed: o.seed, probe: done, method: "-", path: "-", what: "after the batch", problem: sick });
      break;
    }
    // Memory is judged after the batch settles: garbage from large bodies may take a moment to go.
    let rss = rssKb(pid);
    for (let tries = 0; rss > limit && tries < 20; tries++) {
      await new Promise((r) => setTimeout(r, 250));
      rss = rssKb(pid);
    }
    peakRssKb = Math.max(peakRssKb, rss);
    if (rss > limit) findings.push({ seed: o.seed, probe: done, method: "-", path: "-", what: "after the batch", problem: `RSS ${rss} KiB stays above ${limit} KiB (baseline ${baselineRssKb} KiB)` });
    o.onProgress?.(done, findings.length);
  }
  return { probes: done, findings, baselineRssKb, peakRssKb, statuses };
}

/** One line per finding, with what replays it. */
export function formatFinding(f: Finding): string {
  return `seed ${f.seed} probe ${f.probe}: ${f.method} ${f.path} (${f.what}): ${f.problem}`;
}
