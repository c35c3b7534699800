/**
 * Event-loop probe for the scale benchmark: a process of its own (so the benchmark's own work cannot
 * delay it) that sends `GET /v1/status/leader` every 10 ms, one at a time, and times each answer. A
 * server whose event loop is blocked (a snapshot being serialised, say) answers late: the longest
 * probe is the longest stall a client would have seen.
 *
 * As a script: `bun test/bench/scale_probe.ts <base url> <interval ms>`; it probes until its stdin
 * ends or sees any input, then prints one JSON ProbeResult line. startProbe() runs it.
 */
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { percentile } from "./kv_workload.ts";

/** What a probe run saw. Times (`at`) are wall-clock ms since the epoch, so they compare across processes. */
export interface ProbeResult {
  readonly count: number;
  readonly errors: number;
  readonly firstError?: string;
  readonly p50: number;
  readonly p99: number;
  readonly max: number;
  /** When the slowest probe was sent. */
  readonly maxAt: number;
  /** Probes that took at least SLOW_MS: [sent at, ms], in order (at most MAX_SLOW, the slowest kept). */
  readonly slow: readonly (readonly [number, number])[];
}

const SLOW_MS = 100;
/** The line the probe prints once its first probe has answered. */
const READY = "ready\n";
const MAX_SLOW = 200;
const now = () => performance.timeOrigin + performance.now();

async function probeLoop(url: string, intervalMs: number, stopped: () => boolean, onFirst: () => void): Promise<ProbeResult> {
  const latencies: number[] = [];
  let slow: [number, number][] = [];
  let errors = 0;
  let firstError: string | undefined;
  let max = 0;
  let maxAt = 0;
  while (!stopped()) {
    const at = now();
    const t = performance.now();
    try {
      const r = await fetch(`${url}/v1/status/leader`, { signal: AbortSignal.timeout(120_000) });
      await r.text();
      if (r.status !== 200) throw new Error(`HTTP ${r.status}`);
    } catch (e) {
      errors++;
      firstError ??= e instanceof Error ? e.message : String(e);
    }
    const ms = performance.now() - t;
    if (latencies.length === 0) onFirst();
    latencies.push(ms);
    if (ms > max) [max, maxAt] = [ms, at];
    if (ms >= SLOW_MS) slow.push([at, ms]);
    if (slow.length > 2 * MAX_SLOW) slow = [...slow].sort((a, b) => b[1] - a[1]).slice(0, MAX_SLOW).sort((a, b) => a[0] - b[0]);
    const wait = intervalMs - (performance.now() - t);
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
  }
  const sorted = Float64Array.from(latencies).sort();
  if (slow.length > MAX_SLOW) slow = [...slow].sort((a, b) => b[1] - a[1]).slice(0, MAX_SLOW).sort((a, b) => a[0] - b[0]);
  return { count: latencies.length, errors, ...(firstError ? { firstError } : {}), p50: percentile(sorted, 0.5), p99: percentile(sorted, 0.99), max, maxAt, slow };
}

/** A running probe process; stop() ends it and returns what it saw. */
export interface Probe {
  stop(): Promise<ProbeResult>;
}

/**
 * Starts the probe as a child process against `url` and resolves once its first probe has answered;
 * `track` registers the process for the benchmark's cleanup.
 */
export async function startProbe(url: string, intervalMs: number, track: (c: ReturnType<typeof spawn>) => void): Promise<Probe> {
  const child = spawn(process.execPath, [fileURLToPath(import.meta.url), url, String(intervalMs)], { stdio: ["pipe", "pipe", "inherit"] });
  track(child);
  let out = "";
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  await new Promise<void>((resolve) => {
    child.stdout!.on("data", (d: Buffer) => {
      out += d.toString();
      if (out.startsWith(READY)) resolve();
    });
    void exited.then(() => resolve());
  });
  return {
    async stop() {
      child.stdin!.end("stop\n");
      await exited;
      const line = out.slice(READY.length).trim().split("\n").pop() ?? "";
      try {
        return JSON.parse(line) as ProbeResult;
      } catch {
        throw new Error(`probe printed no result (exit ${child.exitCode ?? child.signalCode}): ${out.slice(-300)}`);
      }
    },
  };
}

if (import.meta.main) {
  const [url, interval] = process.argv.slice(2);
  let stop = false;
  process.stdin.on("data", () => (stop = true));
  process.stdin.on("end", () => (stop = true));
  const result = await probeLoop(url!, Number(interval ?? 10), () => stop, () => process.stdout.write(READY));
  process.stdout.write(`${JSON.stringify(result)}\n`);
  process.exit(0);
}
