/**
 * CPU profiles of time windows for the xDS benchmark's processes (test/bench/xds_agent.ts,
 * test/bench/xds_client.ts), through `node:inspector` (Bun implements its Profiler domain). Written
 * as Chrome `.cpuprofile` files, which `bun test/bench/xds_profile.ts <file>` summarizes (self and
 * total time of the heaviest functions).
 */
import { writeFileSync } from "node:fs";
import { Session } from "node:inspector";
import { join } from "node:path";

export interface WindowProfiler {
  /** Ends the running window (written as `<dir>/<prefix>-<label>.cpuprofile`) and starts the next. */
  cut(label: string): Promise<void>;
}

/** Starts profiling when `dir` is set (else undefined: no profiler, no cost). */
export async function startWindowProfiler(dir: string | undefined, prefix: string): Promise<WindowProfiler | undefined> {
  if (!dir) return undefined;
  const session = new Session();
  session.connect();
  const post = <T>(method: string, params: object = {}) =>
    new Promise<T>((resolve, reject) => session.post(method, params, (e: Error | null, r?: object) => (e ? reject(e) : resolve(r as T))));
  await post("Profiler.enable");
  await post("Profiler.setSamplingInterval", { interval: 200 });
  await post("Profiler.start");
  return {
    async cut(label) {
      const { profile } = await post<{ profile: unknown }>("Profiler.stop");
      writeFileSync(join(dir, `${prefix}-${label}.cpuprofile`), JSON.stringify(profile));
      await post("Profiler.start");
    },
  };
}

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount: number;
  children?: number[];
}

/** Self and total sample counts per function (by name and location), heaviest first. */
export function summarize(profile: { nodes: ProfileNode[] }, top = 40): string {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const key = (n: ProfileNode) => `${n.callFrame.functionName || "(anonymous)"} ${n.callFrame.url.replace(/^.*\/(src|test|node_modules)\//, "$1/")}:${n.callFrame.lineNumber + 1}`;
  const self = new Map<string, number>();
  const total = new Map<string, number>();
  let all = 0;
  for (const n of profile.nodes) {
    if (n.hitCount === 0) continue;
    all += n.hitCount;
    self.set(key(n), (self.get(key(n)) ?? 0) + n.hitCount);
    const seen = new Set<string>();
    for (let id: number | undefined = n.id; id !== undefined; id = parent.get(id)) {
      const k = key(byId.get(id)!);
      if (seen.has(k)) continue;
      seen.add(k);
      total.set(k, (total.get(k) ?? 0) + n.hitCount);
    }
  }
  const pct = (x: number) => `${((100 * x) / all).toFixed(1).padStart(5)}%`;
  const rows = (m: Map<string, number>) => [...m].sort((a, b) => b[1] - a[1]).slice(0, top).map(([k, v]) => `${pct(v)}  ${k}`);
  return [`${all} samples`, "-- self", ...rows(self), "-- total", ...rows(total)].join("\n");
}

if (import.meta.main) {
  const { readFileSync } = await import("node:fs");
  for (const f of process.argv.slice(2)) console.log(`== ${f}\n${summarize(JSON.parse(readFileSync(f, "utf8")))}`);
}
