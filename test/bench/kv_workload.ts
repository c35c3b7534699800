/**
 * Closed-loop load phases for the KV benchmark: `clients` workers share a counter of operations, each
 * runs one request at a time. A warm-up (not measured) precedes the measured operations; the whole phase
 * has a deadline after which in-flight requests are aborted; a flood of errors ends it early. Errors are
 * grouped by kind (digits folded) with one verbatim example each, so a broken API shows as broken.
 */
import { watchConnections, type ConnReport } from "./kv_conns.ts";

export interface PhaseSpec {
  readonly clients: number;
  /** Measured operations (indexes 0..ops-1). */
  readonly ops: number;
  /** Unmeasured operations run first (indexes 0..warmup-1 with warm=true). */
  readonly warmup: number;
  /** Deadline of warm-up plus measured operations. */
  readonly timeoutMs: number;
  /** Ports the phase talks to (keep-alive check). */
  readonly ports: readonly number[];
  /** One request; resolves on success, throws on any failure (status, body, or wrong value). */
  op(client: number, i: number, warm: boolean, signal: AbortSignal): Promise<void>;
}

export interface ErrorKind { readonly kind: string; readonly count: number; readonly example: string }

export interface PhaseResult {
  readonly clients: number;
  readonly ops: number;
  /** Measured operations that succeeded. */
  readonly ok: number;
  /** Failed operations, warm-up included. */
  readonly errors: number;
  readonly errorKinds: readonly ErrorKind[];
  readonly elapsedMs: number;
  /** ok / elapsed. */
  readonly opsPerSec: number;
  /** Latency percentiles of successful measured operations, ms (NaN when none). */
  readonly p50: number;
  readonly p99: number;
  /** Why the phase ended before all operations ran, if it did. */
  readonly stopped?: string;
  /**
   * The deadline cut the phase: fewer operations ran, but the throughput and latencies of those that did
   * are still a measurement (of a system slower than the phase allows for).
   */
  readonly timedOut: boolean;
  readonly conns: ConnReport | null;
}

/** Error-flood rule: this many errors and more than half of all operations failed. */
const FLOOD_ERRORS = 100;

export function percentile(sorted: Float64Array, q: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!;
}

export async function runPhase(spec: PhaseSpec): Promise<PhaseResult> {
  const controller = new AbortController();
  let stopped: string | undefined;
  let timedOut = false;
  const stop = (why: string) => {
    if (stopped === undefined) stopped = why;
  };
  const deadline = setTimeout(() => {
    if (stopped === undefined) timedOut = true;
    stop(`phase timeout (${spec.timeoutMs / 1000} s)`);
    controller.abort(new Error("phase timeout"));
  }, spec.timeoutMs);
  const kinds = new Map<string, { count: number; example: string }>();
  let errors = 0;
  let done = 0;
  const fail = (e: unknown) => {
    if (controller.signal.aborted) return; // cut off by the deadline, reported as `stopped`
    errors++;
    const msg = e instanceof Error ? e.message : String(e);
    const kind = msg.replace(/\d+/g, "N").slice(0, 90);
    const k = kinds.get(kind);
    if (k) k.count++;
    else kinds.set(kind, { count: 1, example: msg.slice(0, 200) });
    if (errors >= FLOOD_ERRORS && errors * 2 > done) stop(`aborted: ${errors} of the first ${done} operations failed`);
  };

  const drive = async (count: number, warm: boolean, latencies: Float64Array | null): Promise<number> => {
    let next = 0;
    let ok = 0;
    const worker = async (client: number) => {
      while (stopped === undefined && next < count) {
        const i = next++;
        const t = performance.now();
        try {
          await spec.op(client, i, warm, controller.signal);
          if (latencies) latencies[ok] = performance.now() - t;
          ok++;
          done++;
        } catch (e) {
          done++;
          fail(e);
        }
      }
    };
    await Promise.all(Array.from({ length: spec.clients }, (_, c) => worker(c)));
    return ok;
  };

  let ok = 0;
  let elapsedMs = 0;
  let latencies = new Float64Array(spec.ops);
  let conns: ConnReport | null = null;
  try {
    await drive(spec.warmup, true, null);
    // Connections are set up during the warm-up; a keep-alive client opens and closes none after it.
    const watch = watchConnections(spec.ports);
    const began = performance.now();
    ok = await drive(spec.ops, false, latencies);
    elapsedMs = performance.now() - began;
    conns = watch.stop();
  } finally {
    clearTimeout(deadline);
  }
  latencies = latencies.subarray(0, ok).sort();
  return {
    clients: spec.clients,
    ops: spec.ops,
    ok,
    errors,
    errorKinds: [...kinds].map(([kind, v]) => ({ kind, ...v })).sort((a, b) => b.count - a.count),
    elapsedMs,
    opsPerSec: elapsedMs > 0 ? (ok * 1000) / elapsedMs : 0,
    p50: percentile(latencies, 0.5),
    p99: percentile(latencies, 0.99),
    ...(stopped !== undefined ? { stopped } : {}),
    timedOut,
    conns,
  };
}
