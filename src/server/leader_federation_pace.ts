/**
 * Pacing for the federation-state leader routines, on the injected Clock and Rng: a token bucket
 * (golang.org/x/time/rate's Limiter as Consul uses it), Consul's RetryWaiter and retryLoopBackoff
 * waits, and sleeps and awaits that end when the routine is stopped.
 */
import { delay, type Clock, type Rng } from "../platform/index.ts";
import { abortable, isAbortError } from "../rpc/index.ts";

/** Thrown (and swallowed by the routines) when a wait or call is cut short by stop(). */
export class RoutineStopped extends Error {
  override readonly name = "RoutineStopped";
  constructor() {
    super("leader routine stopped");
  }
}

/**
 * A token bucket of `burst` tokens refilled at `perSecond`, full at creation (rate.NewLimiter).
 * `reserve()` takes the next token and returns how long to wait until it is due (rate.Limiter.Reserve
 * then Delay): 0 while tokens are left, later ones spaced 1/perSecond apart.
 */
export function tokenBucket(clock: Clock, perSecond: number, burst: number): { reserve(): number } {
  if (!(perSecond > 0) || !(burst >= 1)) throw new RangeError(`token bucket: bad rate ${perSecond} or burst ${burst}`);
  const intervalMs = 1000 / perSecond;
  let tokens = burst;
  let last = clock.monotonic();
  return {
    reserve() {
      const now = clock.monotonic();
      tokens = Math.min(burst, tokens + (now - last) / intervalMs);
      last = now;
      tokens -= 1;
      return tokens >= 0 ? 0 : Math.ceil(-tokens * intervalMs);
    },
  };
}

/**
 * Consul's RetryWaiter as the replicator builds it (lib.NewRetryWaiter(0, 0, maxWait,
 * NewJitterRandomStagger(10)) in agent/consul/replication.go): after `failures` consecutive failures,
 * 2^(failures-1) s capped at `maxMs`, plus a random 0-10% of that; 0 with no failures.
 */
export function retryWaiterMs(failures: number, maxMs: number, rng: Rng): number {
  if (failures <= 0) return 0;
  const base = Math.min(maxMs, 1000 * 2 ** Math.min(failures - 1, 31));
  return base + Math.floor(rng.next() * (base / 10));
}

/**
 * Consul's retryLoopBackoff (agent/consul/leader_connect.go): the wait after the `failures`-th
 * consecutive failed iteration, 2^failures s, doubling up to `maxMs` (256 s).
 */
export function loopBackoffMs(failures: number, maxMs: number): number {
  return Math.min(maxMs, 1000 * 2 ** Math.min(Math.max(1, failures), 31));
}

/** Resolves after `ms` on `clock`; rejects with RoutineStopped (the timer cancelled) when `signal` aborts first. */
export async function sleep(clock: Clock, ms: number, signal: AbortSignal): Promise<void> {
  if (!(await delay(clock, ms, signal))) throw new RoutineStopped();
}

/**
 * `p`, or a RoutineStopped rejection as soon as `signal` aborts (the routine stops waiting for a call
 * it cannot cancel; what `p` settles to later is ignored).
 */
export function untilStopped<T>(p: Promise<T>, signal: AbortSignal): Promise<T> {
  return abortable(p, signal).catch((err: unknown) => {
    throw signal.aborted && isAbortError(err) ? new RoutineStopped() : err;
  });
}

/**
 * A leader routine's async loop: start() runs `loop(signal)` until stop() aborts the signal; a
 * RoutineStopped from the loop ends it quietly, anything else is passed to `onCrash` (a loop that
 * returns or crashes may be started again). start() while running and stop() while stopped are ignored.
 */
export function abortableLoop(loop: (signal: AbortSignal) => Promise<void>, onCrash: (err: unknown) => void): { start(): void; stop(): void; running(): boolean } {
  let controller: AbortController | undefined;
  return {
    start() {
      if (controller) return;
      const c = new AbortController();
      controller = c;
      loop(c.signal)
        .catch((err) => {
          if (!(err instanceof RoutineStopped) && !c.signal.aborted) onCrash(err);
        })
        .finally(() => {
          if (controller === c) controller = undefined;
        });
    },
    stop() {
      controller?.abort();
      controller = undefined;
    },
    running: () => controller !== undefined,
  };
}
