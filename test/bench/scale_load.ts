/**
 * Bulk loading for the scale benchmark: `loaders` concurrent workers send numbered batches (each one
 * request: a Consul `PUT /v1/txn` or an etcd `/v3/kv/txn`), retrying a failed batch a few times (every
 * batch here is an idempotent set). Reports the throughput, the batch latencies and the rate of each
 * tenth of the run, so a server that slows down as its state grows shows it.
 */
import { Buffer } from "node:buffer";
import { percentile } from "./kv_workload.ts";

export interface BatchSpec {
  readonly batches: number;
  readonly loaders: number;
  /** Whole-run deadline: batches not sent by then are reported as not done. */
  readonly timeoutMs: number;
  /** Sends batch `i`; resolves on success, throws on any failure. */
  send(i: number, signal: AbortSignal): Promise<void>;
  /** Checked before each batch: true ends the run (not an error). */
  readonly until?: () => boolean;
}

export interface BatchResult {
  readonly batches: number;
  /** Batches that succeeded (possibly after retries). */
  readonly ok: number;
  /** Failed attempts (retried or not). */
  readonly errors: number;
  readonly firstError?: string;
  readonly elapsedMs: number;
  /** Latency of successful attempts, ms. */
  readonly p50: number;
  readonly p99: number;
  readonly max: number;
  /** Batches per second in each tenth of the run (by batches completed). */
  readonly tenths: readonly number[];
  /** Why the run stopped early, if it did. */
  readonly stopped?: string;
}

const RETRIES = 3;
/** Give up after this many failed attempts in all. */
const MAX_ERRORS = 50;

export async function runBatches(spec: BatchSpec): Promise<BatchResult> {
  const controller = new AbortController();
  let stopped: string | undefined;
  const deadline = setTimeout(() => {
    stopped ??= `timeout (${Math.round(spec.timeoutMs / 1000)} s)`;
    controller.abort(new Error("timeout"));
  }, spec.timeoutMs);
  const latencies: number[] = [];
  const doneAt: number[] = [];
  let next = 0;
  let ok = 0;
  let errors = 0;
  let firstError: string | undefined;
  const began = performance.now();
  const worker = async () => {
    while (stopped === undefined && next < spec.batches && !spec.until?.()) {
      const i = next++;
      for (let attempt = 0; ; attempt++) {
        const t = performance.now();
        try {
          await spec.send(i, controller.signal);
          latencies[ok] = performance.now() - t;
          doneAt[ok] = performance.now() - began;
          ok++;
          break;
        } catch (e) {
          if (stopped !== undefined) return;
          errors++;
          firstError ??= `batch ${i}: ${e instanceof Error ? e.message : String(e)}`.slice(0, 300);
          if (errors >= MAX_ERRORS) stopped = `${errors} failed attempts (first: ${firstError})`;
          if (attempt + 1 >= RETRIES || stopped !== undefined) break;
        }
      }
    }
  };
  try {
    await Promise.all(Array.from({ length: spec.loaders }, worker));
  } finally {
    clearTimeout(deadline);
  }
  const elapsedMs = performance.now() - began;
  const tenths: number[] = [];
  for (let k = 0; k < 10 && ok >= 10; k++) {
    const from = Math.floor((k * ok) / 10);
    const to = Math.floor(((k + 1) * ok) / 10) - 1;
    const startMs = from === 0 ? 0 : doneAt[from - 1]!;
    tenths.push(((to - from + 1) * 1000) / Math.max(1e-3, doneAt[to]! - startMs));
  }
  const sorted = Float64Array.from(latencies).sort();
  return {
    batches: spec.batches, ok, errors, ...(firstError ? { firstError } : {}), elapsedMs,
    p50: percentile(sorted, 0.5), p99: percentile(sorted, 0.99), max: sorted.length ? sorted[sorted.length - 1]! : Number.NaN,
    tenths, ...(stopped ? { stopped } : {}),
  };
}

// ---------------------------------------------------------------------------------------------------
// The KV data set: keys `scale/0000000`..., printable 64-byte values naming their key.

const FILL = "abcdefghijklmnopqrstuvwxyz0123456789".repeat(4);

/** The key names and values of an `n`-key data set (`prefix/` + zero-padded index, at least 7 digits). */
export function keySet(n: number, prefix = "scale", valueBytes = 64) {
  const width = Math.max(7, String(Math.max(0, n - 1)).length);
  const key = (i: number) => `${prefix}/${String(i).padStart(width, "0")}`;
  const value = (i: number, round = 0) => `${key(i)}|${round}|${FILL}`.slice(0, valueBytes);
  return { n, key, value };
}
export type KeySet = ReturnType<typeof keySet>;

const b64 = (s: string) => Buffer.from(s).toString("base64");

async function expectOk(r: Response, what: string): Promise<string> {
  const text = await r.text();
  if (r.status !== 200) throw new Error(`HTTP ${r.status} on ${what}${text ? `: ${text.trim().slice(0, 160)}` : ""}`);
  return text;
}

/** Consul: `PUT /v1/txn` setting keys [from, to) of `keys` (at most 64, Consul's limit), value round `round`. */
export async function consulTxnSet(url: string, keys: KeySet, from: number, to: number, round: number, signal: AbortSignal): Promise<void> {
  const ops = [];
  for (let i = from; i < to; i++) ops.push({ KV: { Verb: "set", Key: keys.key(i), Value: b64(keys.value(i, round)) } });
  await expectOk(await fetch(`${url}/v1/txn`, { method: "PUT", body: JSON.stringify(ops), signal }), "PUT /v1/txn");
}

/** etcd: `/v3/kv/txn` putting keys [from, to) (at most 128, etcd's default --max-txn-ops). */
export async function etcdTxnPut(url: string, keys: KeySet, from: number, to: number, signal: AbortSignal): Promise<void> {
  const success = [];
  for (let i = from; i < to; i++) success.push({ request_put: { key: b64(keys.key(i)), value: b64(keys.value(i)) } });
  const text = await expectOk(await fetch(`${url}/v3/kv/txn`, { method: "POST", body: JSON.stringify({ success }), signal }), "/v3/kv/txn");
  const body = JSON.parse(text) as { succeeded?: boolean; header?: { revision?: string } };
  if (!body.header?.revision) throw new Error(`/v3/kv/txn: unexpected answer ${text.slice(0, 160)}`);
}

/** Reads one key back (Consul `?consistent`, etcd linearizable range) and checks its value; throws when wrong. */
export async function checkKey(system: "causeway" | "etcd", url: string, keys: KeySet, i: number, round = 0): Promise<void> {
  const signal = AbortSignal.timeout(10_000);
  const want = b64(keys.value(i, round));
  if (system === "causeway") {
    const text = await expectOk(await fetch(`${url}/v1/kv/${keys.key(i)}?consistent`, { signal }), `GET /v1/kv/${keys.key(i)}`);
    const got = (JSON.parse(text) as Array<{ Value?: string }>)[0]?.Value;
    if (got !== want) throw new Error(`GET /v1/kv/${keys.key(i)}: value ${JSON.stringify(got).slice(0, 60)}, want ${want.slice(0, 60)}`);
    return;
  }
  const text = await expectOk(await fetch(`${url}/v3/kv/range`, { method: "POST", body: JSON.stringify({ key: b64(keys.key(i)) }), signal }), "/v3/kv/range");
  const got = (JSON.parse(text) as { kvs?: Array<{ value?: string }> }).kvs?.[0]?.value;
  if (got !== want) throw new Error(`etcd range ${keys.key(i)}: value ${JSON.stringify(got).slice(0, 60)}, want ${want.slice(0, 60)}`);
}

/**
 * Reads back `sample` keys spread over the set, key i expected in value round `round(i)`: how many
 * were right, of how many, and the first failure.
 */
export async function readBackSample(system: "causeway" | "etcd", url: string, keys: KeySet, sample: number, round: (i: number) => number = () => 0) {
  const n = Math.min(sample, keys.n);
  let ok = 0;
  let first: string | undefined;
  for (let j = 0; j < n; j++) {
    const i = Math.floor((j * (keys.n - 1)) / Math.max(1, n - 1));
    try {
      await checkKey(system, url, keys, i, round(i));
      ok++;
    } catch (e) {
      first ??= e instanceof Error ? e.message : String(e);
    }
  }
  return { ok, n, first };
}

/** "ok/batches transactions done (why)" when a run did not finish every batch, else undefined. */
export function incomplete(r: BatchResult): string | undefined {
  if (r.ok >= r.batches) return undefined;
  return `${r.ok}/${r.batches} transactions done${r.stopped ? ` (${r.stopped})` : ""}${r.firstError ? `; first error: ${r.firstError}` : ""}`;
}
