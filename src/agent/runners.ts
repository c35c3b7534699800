/**
 * Check runners (Consul's agent/checks CheckTTL, CheckHTTP, CheckTCP) and the interval loop the
 * other interval checks (script, Docker, gRPC: runners_exec.ts, runners_grpc.ts) share. Each
 * reports through `notify(checkId, status, output)`; time comes from the injected Clock, randomness
 * (the initial stagger) from the Rng, network access from the injected probes.
 */
import type { HealthStatus } from "../model/index.ts";
import type { Cancel, Clock, Rng } from "../platform/index.ts";
import { keepTail, truncateOutput } from "./output.ts";
import type { HttpProbe, TcpProbe } from "./ports.ts";

export type CheckNotify = (checkId: string, status: HealthStatus, output: string) => void;

export interface CheckRunner {
  /** Stops the runner; a probe in flight is abandoned and its result ignored. Idempotent. */
  stop(): void;
}

export interface TtlRunner extends CheckRunner {
  /** Records a status from the outside and restarts the TTL; returns the stored (possibly truncated) output. */
  setStatus(status: HealthStatus, output: string): string;
  /** The check's TTL. */
  readonly ttlMs: number;
}

/** Consul's HTTP and TCP check default timeout. */
export const DEFAULT_CHECK_TIMEOUT_MS = 10_000;
/** Consul's User-Agent for HTTP checks. */
export const HTTP_CHECK_USER_AGENT = "Consul Health Check";

/**
 * A TTL check: critical with "TTL expired" (plus the last output, if any) when setStatus is not called
 * within `ttlMs`; the timer restarts on each setStatus. Output above `outputMaxSize` bytes is truncated.
 */
export function startTtlCheck(o: { checkId: string; ttlMs: number; clock: Clock; notify: CheckNotify; outputMaxSize: number }): TtlRunner {
  let stopped = false;
  let lastOutput = "";
  let timer: Cancel | undefined;
  const arm = () => {
    timer?.();
    timer = o.clock.setTimer(o.ttlMs, () => {
      timer = undefined;
      if (stopped) return;
      o.notify(o.checkId, "critical", lastOutput ? `TTL expired (last output before timeout follows): ${lastOutput}` : "TTL expired");
    });
  };
  arm();
  return {
    ttlMs: o.ttlMs,
    setStatus(status, output) {
      const out = truncateOutput(output, o.outputMaxSize);
      if (stopped) return out;
      o.notify(o.checkId, status, out);
      lastOutput = out;
      arm();
      return out;
    },
    stop() {
      stopped = true;
      timer?.();
    },
  };
}

/** What every interval check gets. */
export interface IntervalOptions {
  readonly checkId: string;
  readonly intervalMs: number;
  /** 0 means the check kind's default (10 s; 30 s for scripts). */
  readonly timeoutMs: number;
  readonly clock: Clock;
  readonly rng: Rng;
  readonly notify: CheckNotify;
  readonly successBeforePassing: number;
  readonly failuresBeforeCritical: number;
}

/** Consul's StatusHandler: passes a result on only after enough consecutive successes or failures. */
function thresholds(notify: CheckNotify, successBefore: number, failuresBefore: number): CheckNotify {
  let successes = 0, failures = 0;
  return (id, status, output) => {
    if (status === "passing" || status === "warning") {
      successes++;
      failures = 0;
      if (successes >= successBefore) notify(id, status, output);
    } else {
      failures++;
      successes = 0;
      if (failures >= failuresBefore) notify(id, status, output);
    }
  };
}

/** Waits for a promise at most the check's timeout: its value, its rejection, or "timeout". */
export type BoundedWait = <T>(p: Promise<T>) => Promise<{ value: T } | { error: unknown } | "timeout">;

/**
 * Runs `once` after a random stagger in [0, interval), then `interval` after each run completes (runs
 * never overlap). `once` gets a deadline-bounded wait helper and a notify that is silent after stop();
 * results pass Consul's SuccessBeforePassing / FailuresBeforeCritical thresholds.
 */
export function intervalLoop(
  o: IntervalOptions,
  once: (notify: CheckNotify, wait: BoundedWait) => Promise<void>,
): CheckRunner {
  let stopped = false;
  let timer: Cancel | undefined;
  const timeoutMs = o.timeoutMs > 0 ? o.timeoutMs : DEFAULT_CHECK_TIMEOUT_MS;
  const gated = thresholds((id, s, out) => !stopped && o.notify(id, s, out), o.successBeforePassing, o.failuresBeforeCritical);
  const wait = <T>(p: Promise<T>) =>
    new Promise<{ value: T } | { error: unknown } | "timeout">((resolve) => {
      const cancel = o.clock.setTimer(timeoutMs, () => resolve("timeout"));
      p.then((value) => (cancel(), resolve({ value })), (error: unknown) => (cancel(), resolve({ error })));
    });
  const tick = async () => {
    timer = undefined;
    if (stopped) return;
    await once(gated, wait);
    if (!stopped) timer = o.clock.setTimer(o.intervalMs, () => void tick());
  };
  timer = o.clock.setTimer(o.rng.next() * o.intervalMs, () => void tick());
  return {
    stop() {
      stopped = true;
      timer?.();
    },
  };
}

/** The message of a rejection, as a check's output shows it. */
export function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

const hasHeader = (h: Record<string, readonly string[]>, name: string) => Object.keys(h).some((k) => k.toLowerCase() === name.toLowerCase());

/**
 * An HTTP check: 2xx passing, 429 warning, anything else or no response critical. Output is
 * "HTTP GET <url>: 200 OK Output: <last 4 KiB of the body>", or Go's error text ("Get \"<url>\": ...").
 */
export function startHttpCheck(o: IntervalOptions & {
  probe: HttpProbe; url: string; method: string; header: Readonly<Record<string, readonly string[]>> | undefined;
  body: string; tlsSkipVerify: boolean; outputMaxSize: number;
}): CheckRunner {
  const method = o.method || "GET";
  const headers: Record<string, readonly string[]> = { ...o.header };
  if (!hasHeader(headers, "User-Agent")) headers["User-Agent"] = [HTTP_CHECK_USER_AGENT];
  if (!hasHeader(headers, "Accept")) headers["Accept"] = ["text/plain, text/*, */*"];
  const op = `${method.slice(0, 1).toUpperCase()}${method.slice(1).toLowerCase()} ${JSON.stringify(o.url)}`;
  const timeoutMs = o.timeoutMs > 0 ? o.timeoutMs : DEFAULT_CHECK_TIMEOUT_MS;
  return intervalLoop(o, async (notify, wait) => {
    const r = await wait(o.probe({
      url: o.url, method, headers, body: o.body, timeoutMs, tlsSkipVerify: o.tlsSkipVerify, maxBodyBytes: o.outputMaxSize,
    }));
    if (r === "timeout") {
      notify(o.checkId, "critical", `${op}: context deadline exceeded (Client.Timeout exceeded while awaiting headers)`);
      return;
    }
    if ("error" in r) {
      notify(o.checkId, "critical", `${op}: ${errorText(r.error)}`);
      return;
    }
    const res = r.value;
    const output = `HTTP ${method} ${o.url}: ${`${res.status} ${res.statusText}`.trimEnd()} Output: ${keepTail(res.body, o.outputMaxSize)}`;
    const status: HealthStatus = res.status >= 200 && res.status <= 299 ? "passing" : res.status === 429 ? "warning" : "critical";
    notify(o.checkId, status, output);
  });
}

/** A TCP check: passing "TCP connect <addr>: Success" when a connection opens, else critical with the dial error. */
export function startTcpCheck(o: IntervalOptions & { probe: TcpProbe; addr: string }): CheckRunner {
  const timeoutMs = o.timeoutMs > 0 ? o.timeoutMs : DEFAULT_CHECK_TIMEOUT_MS;
  return intervalLoop(o, async (notify, wait) => {
    const r = await wait(o.probe(o.addr, timeoutMs));
    if (r === "timeout") notify(o.checkId, "critical", `dial tcp ${o.addr}: i/o timeout`);
    else if ("error" in r) notify(o.checkId, "critical", errorText(r.error));
    else notify(o.checkId, "passing", `TCP connect ${o.addr}: Success`);
  });
}
