/**
 * The pure decisions of `causeway lock` in lock mode (-n 1), as Consul 1.8's api/lock.go and
 * command/lock/lock.go make them: the constants, Go's path.Join for key names, what to do with a read
 * of the lock key, how long a one-shot attempt may still wait, and how Go words a child's exit.
 * No I/O here: key_lock.ts and semaphore.ts do the requests.
 */
import { goExitText } from "../support/go_exec.ts";
import type { KvPair } from "./api.ts";

/** api.LockFlagValue: the KV flags marking a key as a lock (0x2ddccbc058a50c18). */
export const LOCK_FLAG_VALUE = 0x2ddccbc058a50c18n;

/** api.DefaultSemaphoreKey: the coordination key inside the prefix; `consul lock` uses it for locks too. */
export const SEMAPHORE_KEY = ".lock";

/** api.DefaultLockSessionTTL / DefaultSemaphoreSessionTTL. */
export const SESSION_TTL = "15s";

/** api.DefaultLockWaitTime / DefaultSemaphoreWaitTime: the `wait` of each blocking read while acquiring. */
export const DEFAULT_WAIT_MS = 15_000;

/** api.DefaultLockRetryTime: the pause after an acquire refused under a lock-delay. */
export const LOCK_RETRY_MS = 5_000;

/** command/lock's lockKillGracePeriod: SIGTERM, then SIGKILL after this long. */
export const KILL_GRACE_MS = 5_000;

/** command/lock's defaultMonitorRetry and defaultMonitorRetryTime. */
export const DEFAULT_MONITOR_RETRY = 3;
export const MONITOR_RETRY_MS = 1_000;

/** Go's path.Clean: collapses slashes and `.`, resolves `..`, no trailing slash; "" is ".". */
export function cleanPath(p: string): string {
  if (p === "") return ".";
  const rooted = p.startsWith("/");
  const out: string[] = [];
  for (const part of p.split("/")) {
    if (part === "" || part === ".") continue;
    if (part !== "..") out.push(part);
    else if (out.length > 0 && out[out.length - 1] !== "..") out.pop();
    else if (!rooted) out.push("..");
  }
  const joined = out.join("/");
  return rooted ? `/${joined}` : joined || ".";
}

/** Go's path.Join: the non-empty elements joined with "/" and cleaned; "" when all are empty. */
export function joinPath(...elems: readonly string[]): string {
  const parts = elems.filter((e) => e !== "");
  return parts.length === 0 ? "" : cleanPath(parts.join("/"));
}

/**
 * What Lock.Lock does after reading the lock key: `conflict` when the key exists with other flags
 * (ErrLockConflict), `held` when our session already holds it, `wait` (a blocking read at the
 * returned index) while another session holds it, else `acquire`.
 */
export function lockReadStep(pair: KvPair | undefined, session: string): "conflict" | "held" | "wait" | "acquire" {
  if (pair !== undefined && pair.Flags !== LOCK_FLAG_VALUE) return "conflict";
  if (pair !== undefined && pair.Session === session) return "held";
  if (pair !== undefined && pair.Session !== "") return "wait";
  return "acquire";
}

/**
 * After a refused acquire, Lock.Lock reads the key again: someone holds it (wait on the index), or
 * nobody does and a lock-delay is in effect (pause LOCK_RETRY_MS, then try again).
 */
export function refusedAcquireStep(pair: KvPair | undefined): "wait" | "retry-later" {
  return pair !== undefined && pair.Session !== "" ? "wait" : "retry-later";
}

/** Lock.monitorLock keeps watching while the key exists and our session holds it. */
export function lockStillHeld(pair: KvPair | undefined, session: string): boolean {
  return pair !== undefined && pair.Session === session;
}

/** What a cleanup (Lock.Destroy / Semaphore.Destroy) does: nothing, refuse, leave it in use, or delete with CAS. */
export type DestroyStep = { readonly kind: "absent" | "conflict" | "in-use" } | { readonly kind: "delete"; readonly index: bigint };

/** Lock.Destroy: nothing to do, a flag conflict, still held by someone, or delete with CAS at the index. */
export function lockDestroyStep(pair: KvPair | undefined): DestroyStep {
  if (pair === undefined) return { kind: "absent" };
  if (pair.Flags !== LOCK_FLAG_VALUE) return { kind: "conflict" };
  if (pair.Session !== "") return { kind: "in-use" };
  return { kind: "delete", index: pair.ModifyIndex };
}

/**
 * The `wait` of the next blocking read of an acquisition loop (LockWaitTime / SemaphoreWaitTime), or
 * undefined when a one-shot attempt (-timeout) has used up its time. The first read always gets the
 * whole wait. Consul gives up only once elapsed > wait; here elapsed = wait counts too, since a zero
 * wait would mean the server's default (minutes) instead of none.
 */
export function acquireWaitMs(o: { readonly tryOnce: boolean; readonly waitMs: number; readonly attempts: number; readonly elapsedMs: number }): number | undefined {
  if (!o.tryOnce || o.attempts === 0) return o.waitMs;
  if (o.elapsedMs >= o.waitMs) return undefined;
  return o.waitMs - o.elapsedMs;
}

/** The Go client's durToMsec: whole milliseconds with an "ms" suffix, at least 1ms for a positive duration. */
export function durToMsec(ms: number): string {
  const whole = Math.trunc(ms);
  return `${ms > 0 && whole === 0 ? 1 : whole}ms`;
}

/** The default session name: `Consul lock for '<child args>' at '<prefix>'` (command/lock). */
export function defaultSessionName(childArgs: readonly string[], prefix: string): string {
  return `Consul lock for '${childArgs.join(" ")}' at '${prefix}'`;
}

/**
 * Go's exec.ExitError text for a child's end (`exit status 3`, `signal: terminated`), or undefined
 * for a clean exit (code 0).
 */
export function exitErrorText(exit: { readonly code: number | null; readonly signal: string | null }): string | undefined {
  if (exit.code === 0) return undefined;
  return goExitText(exit.code, exit.code !== null ? null : (exit.signal ?? "unknown"));
}
