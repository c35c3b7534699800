/**
 * Blocked watchers for the scale benchmark: many concurrent `GET /v1/kv/<key>?index=<current>&wait=5m`
 * on raw TCP sockets (one per watcher, HTTP/1.1 with Connection: close; fetch would queue them behind
 * its own connection limit), then one write per watched key, timing when each watcher gets its answer.
 */
import { connect, type Socket } from "node:net";
import { cpuMs, rssBytes } from "./machine.ts";
import type { Probe, ProbeResult } from "./scale_probe.ts";

interface Watcher {
  readonly key: string;
  readonly socket: Socket;
  /** performance.now() when the answer's header block arrived. */
  returnedAt?: number;
  status?: number;
  index?: number;
  error?: string;
}

/** Watchers of `keys[i % keys.length]`, watcher i; connects `batch` at a time (the accept backlog is finite). */
export async function openWatchers(port: number, keys: readonly string[], indexOf: ReadonlyMap<string, number>, count: number, batch = 250): Promise<Watcher[]> {
  const watchers: Watcher[] = [];
  for (let from = 0; from < count; from += batch) {
    const connected: Promise<void>[] = [];
    for (let i = from; i < Math.min(count, from + batch); i++) {
      const key = keys[i % keys.length]!;
      const socket = connect({ host: "127.0.0.1", port, noDelay: true });
      const w: Watcher = { key, socket };
      watchers.push(w);
      let head = "";
      socket.on("data", (d: Buffer) => {
        if (w.returnedAt !== undefined) return;
        head += d.toString("latin1");
        if (!head.includes("\r\n\r\n")) return;
        w.returnedAt = performance.now();
        w.status = Number(/^HTTP\/1\.\d (\d{3})/.exec(head)?.[1] ?? 0);
        w.index = Number(/\r\nx-consul-index: *(\d+)/i.exec(head)?.[1] ?? Number.NaN);
      });
      socket.on("error", (e) => (w.error ??= e.message));
      socket.on("close", () => {
        if (w.returnedAt === undefined) w.error ??= "connection closed before an answer";
      });
      connected.push(new Promise((resolve) => {
        socket.once("connect", () => {
          socket.write(`GET /v1/kv/${key}?index=${indexOf.get(key)}&wait=5m HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nConnection: close\r\n\r\n`);
          resolve();
        });
        socket.once("error", () => resolve());
      }));
    }
    await Promise.all(connected);
  }
  return watchers;
}

/** Closes every watcher's socket. */
export function closeWatchers(watchers: readonly Watcher[]): void {
  for (const w of watchers) w.socket.destroy();
}

/**
 * Waits until process `pid` has gone quiet (under 10% of one CPU over two 250 ms windows running),
 * at least `minMs` and at most `maxMs`: the server has then read every request sent to it.
 */
export async function waitQuiet(pid: number, minMs: number, maxMs: number): Promise<number> {
  const began = performance.now();
  let quiet = 0;
  let last = cpuMs(pid) ?? 0;
  for (;;) {
    await new Promise((r) => setTimeout(r, 250));
    const now = cpuMs(pid) ?? 0;
    quiet = now - last < 25 ? quiet + 1 : 0;
    last = now;
    const waited = performance.now() - began;
    if ((quiet >= 2 && waited >= minMs) || waited >= maxMs) return waited;
  }
}

/** One wake-up run's figures; latencies are ms from each key's write (its answer, or its sending) to each watcher's answer. */
export interface WakeResult {
  readonly watchers: number;
  readonly keys: number;
  /** Watchers that answered before any write (not blocked: a bug, or a lost index). */
  readonly early: number;
  readonly returned: number;
  /** Returned with a status other than 200 or an index not above the one they waited on. */
  readonly bad: number;
  readonly errors: number;
  readonly firstError?: string;
  readonly fromAnswer: { readonly p50: number; readonly p99: number; readonly max: number; readonly min: number };
  readonly fromSend: { readonly p50: number; readonly p99: number; readonly max: number };
  /** Until the last watcher answered, from the first write sent, ms. */
  readonly spanMs: number;
  readonly rssBefore: number | null;
  readonly rssBlocked: number | null;
  /** How long the server took to go quiet after the watchers were sent. */
  readonly settleMs: number;
  /** CPU time the server used from the first write until the watchers had answered (or the wait ended). */
  readonly cpuWakeMs: number;
  /** The slowest write (sent to answered), ms: a write's answer waits for the wake-ups it causes. */
  readonly writeMaxMs: number;
  /** The event-loop probe over the same window, when one was given. */
  readonly probe?: ProbeResult;
}

const pct = (sorted: number[], q: number) => (sorted.length ? sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]! : Number.NaN);

/**
 * Opens `count` watchers spread over `keys` (which must exist), waits until they block, writes each key
 * once (all writes at once), and waits up to `timeoutMs` for every watcher to answer.
 */
export async function wakeUp(url: string, pid: number, keys: readonly string[], count: number, timeoutMs: number, probe?: () => Promise<Probe>): Promise<WakeResult> {
  const port = Number(new URL(url).port);
  const indexOf = new Map<string, number>();
  for (const key of keys) {
    const r = await fetch(`${url}/v1/kv/${key}`);
    await r.text();
    if (r.status !== 200) throw new Error(`GET /v1/kv/${key}: HTTP ${r.status}`);
    indexOf.set(key, Number(r.headers.get("x-consul-index")));
  }
  const rssBefore = rssBytes(pid);
  const watchers = await openWatchers(port, keys, indexOf, count);
  let running: Probe | undefined;
  try {
    const settleMs = await waitQuiet(pid, 1000 + count / 10, 60_000 + count * 5);
    const rssBlocked = rssBytes(pid);
    const early = watchers.filter((w) => w.returnedAt !== undefined).length;
    const sentAt = new Map<string, number>();
    const answeredAt = new Map<string, number>();
    running = await probe?.();
    const cpu0 = cpuMs(pid) ?? Number.NaN;
    const first = performance.now();
    await Promise.all(keys.map(async (key) => {
      sentAt.set(key, performance.now());
      const r = await fetch(`${url}/v1/kv/${key}`, { method: "PUT", body: `woken-${first}` });
      const text = await r.text();
      answeredAt.set(key, performance.now());
      if (r.status !== 200 || text.trim() !== "true") throw new Error(`PUT /v1/kv/${key}: HTTP ${r.status} ${text.slice(0, 80)}`);
    }));
    const end = performance.now() + timeoutMs;
    while (performance.now() < end && watchers.some((w) => w.returnedAt === undefined && w.error === undefined)) await new Promise((r) => setTimeout(r, 20));
    const cpuWakeMs = (cpuMs(pid) ?? Number.NaN) - cpu0;
    const probed = await running?.stop();
    running = undefined;
    const done = watchers.filter((w) => w.returnedAt !== undefined && w.returnedAt >= first);
    const fromAnswer = done.map((w) => w.returnedAt! - answeredAt.get(w.key)!).sort((a, b) => a - b);
    const fromSend = done.map((w) => w.returnedAt! - sentAt.get(w.key)!).sort((a, b) => a - b);
    const errored = watchers.filter((w) => w.error !== undefined && w.returnedAt === undefined);
    return {
      watchers: count, keys: keys.length, early, returned: done.length,
      bad: done.filter((w) => w.status !== 200 || !(w.index! > indexOf.get(w.key)!)).length,
      errors: errored.length, ...(errored[0] ? { firstError: errored[0].error } : {}),
      fromAnswer: { p50: pct(fromAnswer, 0.5), p99: pct(fromAnswer, 0.99), max: fromAnswer[fromAnswer.length - 1] ?? Number.NaN, min: fromAnswer[0] ?? Number.NaN },
      fromSend: { p50: pct(fromSend, 0.5), p99: pct(fromSend, 0.99), max: fromSend[fromSend.length - 1] ?? Number.NaN },
      spanMs: done.length ? done.reduce((m, w) => Math.max(m, w.returnedAt!), 0) - first : Number.NaN,
      rssBefore, rssBlocked, settleMs, cpuWakeMs,
      writeMaxMs: Math.max(...keys.map((k) => answeredAt.get(k)! - sentAt.get(k)!)),
      ...(probed ? { probe: probed } : {}),
    };
  } finally {
    closeWatchers(watchers);
    await running?.stop().catch(() => undefined);
  }
}
