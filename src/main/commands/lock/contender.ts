/**
 * What a lock (key_lock.ts) and a semaphore (semaphore.ts) share: the shape `causeway lock` drives
 * them through (command/lock's LockUnlock) and the lifecycle behind it (a renewed session, held
 * state, monitoring), the acquisition loop of blocking reads, the monitor loop that watches a held
 * lock until it is lost, and the cleanup that removes the coordination key unless it is in use.
 * key_lock.ts and semaphore.ts supply only the KV decisions.
 */
import { delay, type Clock } from "../../../platform/index.ts";
import { abortable, isAbortError } from "../../../rpc/index.ts";
import { isRetryableError, type KvRead, type LockApi } from "./api.ts";
import { acquireWaitMs, SESSION_TTL, type DestroyStep } from "./core.ts";
import { createRenewedSession, type RenewedSession } from "./session.ts";

/** A held lock or semaphore slot. */
export interface Held {
  /**
   * Settles once the lock is lost (the key no longer held by our session, or a read failed past
   * the retries), or once monitoring stops because it was released. Never rejects.
   */
  readonly lost: Promise<void>;
}

/** A lock or semaphore contender: acquire once, then release, then destroy. */
export interface Contender {
  /**
   * Creates the session and waits for the lock. Resolves to the held lock, or undefined when `stop`
   * aborted or a one-shot attempt ran out of time (the session is then destroyed). Rejects with
   * Consul's wording on a failure (the session destroyed too).
   */
  acquire(stop: AbortSignal): Promise<Held | undefined>;
  /** Gives the lock up (Lock.Unlock / Semaphore.Release), stops monitoring and destroys the session. */
  release(): Promise<void>;
  /** Removes the lock's coordination key when nobody holds it; rejects with InUseError when someone does. */
  destroy(): Promise<void>;
}

/** api.ErrLockInUse / ErrSemaphoreInUse: cleanup skipped because the lock is held again. */
export class InUseError extends Error {}

/** What both kinds of contender are built from. */
export interface ContenderOptions {
  readonly api: LockApi;
  readonly clock: Clock;
  readonly sessionName: string;
  /** LockTryOnce / SemaphoreTryOnce: give up once `waitMs` has passed (-timeout). */
  readonly tryOnce: boolean;
  /** LockWaitTime / SemaphoreWaitTime: the wait of each blocking read, or the whole budget when tryOnce. */
  readonly waitMs: number;
  /** MonitorRetries: reads failing with a retryable error tolerated in a row while monitoring. */
  readonly monitorRetries: number;
  readonly monitorRetryMs: number;
}

/** The KV side of a contender; createContender runs the session and the held state around it. */
export interface ContenderParts {
  /** "Lock" or "Semaphore", for Consul's "<noun> already held" / "<noun> not held". */
  readonly noun: string;
  /** Session fields besides Name and TTL (the semaphore's Behavior "delete"). */
  readonly sessionBehavior?: string;
  /** Waits for the lock with `session`: true once held, false when stopped or out of time. */
  waitFor(session: string, stop: AbortSignal): Promise<boolean>;
  /** Watches the held lock (monitorHeld); settles when lost or stopped. */
  monitor(session: string, stop: AbortSignal): Promise<void>;
  /** Gives the lock up; the session is ended afterwards whatever happens. */
  release(session: string): Promise<void>;
  /** The cleanup once released. */
  destroy(): Promise<void>;
}

/** A contender (not reusable: acquire once, release once) around `parts`. */
export function createContender(o: ContenderOptions, parts: ContenderParts): Contender {
  let session: RenewedSession | undefined;
  let monitoring: AbortController | undefined;
  return {
    async acquire(stop) {
      if (session) throw new Error(`${parts.noun} already held`);
      const s = await createRenewedSession(o.api, o.clock, { Name: o.sessionName, TTL: SESSION_TTL, ...(parts.sessionBehavior ? { Behavior: parts.sessionBehavior } : {}) });
      let held = false;
      try {
        held = await parts.waitFor(s.id, stop);
      } finally {
        if (!held) await s.end();
      }
      if (!held) return undefined;
      session = s;
      monitoring = new AbortController();
      return { lost: parts.monitor(s.id, monitoring.signal) };
    },
    async release() {
      const s = session;
      if (!s) throw new Error(`${parts.noun} not held`);
      session = undefined;
      monitoring?.abort();
      try {
        await parts.release(s.id);
      } finally {
        await s.end();
      }
    },
    async destroy() {
      if (session) throw new Error(`${parts.noun} already held`);
      await parts.destroy();
    },
  };
}

/** Marks a read cut short by an abort. */
export const ABORTED: unique symbol = Symbol("aborted");

/**
 * `promise`, or ABORTED as soon as `signal` aborts (the request itself runs on; its outcome is then
 * ignored). The Go client cannot cancel a blocking read, so Consul notices a stop only when the read
 * returns; this answers at once.
 */
export async function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T | typeof ABORTED> {
  try {
    return await abortable(promise, signal);
  } catch (err) {
    if (signal.aborted && isAbortError(err)) return ABORTED;
    throw err;
  }
}

/** What an acquisition loop does after a read: the lock is held, give up quietly, or read again at `index`. */
export type LoopStep = { readonly kind: "held" | "stop" } | { readonly kind: "read"; readonly index: bigint };

/**
 * The loop of Lock.Lock and Semaphore.Acquire: before each read, give up when `stop` aborted or the
 * one-shot budget is spent; read (blocking at the index, with the wait in force; a failure is
 * `<readError>: <cause>`); then `after` decides. Resolves true once held, false when it gave up.
 */
export async function acquisitionLoop<T>(
  o: Pick<ContenderOptions, "clock" | "tryOnce" | "waitMs">,
  stop: AbortSignal,
  read: (index: bigint, waitMs: number) => Promise<KvRead<T>>,
  readError: string,
  after: (got: KvRead<T>, at: { readonly index: bigint; readonly waitMs: number }) => Promise<LoopStep>,
): Promise<boolean> {
  const start = o.clock.monotonic();
  let attempts = 0;
  let index = 0n;
  for (;;) {
    if (stop.aborted) return false;
    const waitMs = acquireWaitMs({ tryOnce: o.tryOnce, waitMs: o.waitMs, attempts, elapsedMs: o.clock.monotonic() - start });
    if (waitMs === undefined) return false;
    attempts++;
    const got = await failingAs(readError, untilAborted(read(index, waitMs), stop));
    if (got === ABORTED) return false;
    const next = await after(got, { index, waitMs });
    if (next.kind !== "read") return next.kind === "held";
    index = next.index;
  }
}

/**
 * Lock.monitorLock / Semaphore.monitorLock: reads with `read(index)` (the first at index 0, then
 * blocking on the last X-Consul-Index) while `stillHeld` holds. A retryable failure is retried up to
 * `monitorRetries` times in a row, `monitorRetryMs` apart, from index 0; any other failure, or the
 * retries used up, counts as lost. Resolves when lost or when `stop` aborts.
 */
export async function monitorHeld<T>(
  read: (index: bigint) => Promise<KvRead<T>>,
  stillHeld: (value: T) => boolean,
  o: Pick<ContenderOptions, "clock" | "monitorRetries" | "monitorRetryMs">,
  stop: AbortSignal,
): Promise<void> {
  let index = 0n;
  let retries = o.monitorRetries;
  for (;;) {
    let got: KvRead<T> | typeof ABORTED;
    try {
      got = await untilAborted(read(index), stop);
    } catch (err) {
      if (stop.aborted || retries <= 0 || !isRetryableError(err)) return;
      if (!(await delay(o.clock, o.monitorRetryMs, stop))) return;
      retries--;
      index = 0n;
      continue;
    }
    if (got === ABORTED || !stillHeld(got.value)) return;
    index = got.index;
    retries = o.monitorRetries;
  }
}

/**
 * The end of Lock.Destroy / Semaphore.Destroy: nothing to do, a conflict (`words.conflict`), or
 * delete the key with CAS; in use (InUseError `words.inUse`) when held or when the CAS fails.
 */
export async function removeUnlessInUse(step: DestroyStep, remove: (index: bigint) => Promise<boolean>, words: { readonly conflict: string; readonly removeFailed: string; readonly inUse: string }): Promise<void> {
  if (step.kind === "absent") return;
  if (step.kind === "conflict") throw new Error(words.conflict);
  const removed = step.kind === "delete" && (await failingAs(words.removeFailed, remove(step.index)));
  if (!removed) throw new InUseError(words.inUse);
}

/** `promise`, a failure reworded as the Go api package wraps one: `<what>: <cause>`. */
export async function failingAs<T>(what: string, promise: Promise<T>): Promise<T> {
  try {
    return await promise;
  } catch (err) {
    throw new Error(`${what}: ${(err as Error).message}`);
  }
}
