/**
 * The pure part of Consul 1.8's api/semaphore.go, which `causeway lock -n N` (N > 1) follows: each
 * contender holds `<prefix>/<session>` with its session, and `<prefix>/.lock` holds the JSON
 * `{"Limit":N,"Holders":{"<session>":true,...}}`, changed only with check-and-set. Holders whose
 * session no longer holds any key under the prefix are dead and pruned before counting.
 */
import { decodeGoStruct, GoError, map, parseGoJson, struct } from "../../../lib/index.ts";
import type { KvPair } from "./api.ts";
import { joinPath, SEMAPHORE_KEY, type DestroyStep } from "./core.ts";

/** api.SemaphoreFlagValue: the KV flags marking a key as part of a semaphore (0xe0f69a2baa414de0). */
export const SEMAPHORE_FLAG_VALUE = 0xe0f69a2baa414de0n;

/** The decoded `.lock` value (api's semaphoreLock): the agreed limit and the holder set. */
export interface SemaphoreLock {
  readonly limit: number;
  /** Session ID -> the JSON value (true when Consul wrote it); a holder is any key present. */
  readonly holders: ReadonlyMap<string, boolean>;
}

const SEMAPHORE_LOCK = struct("api.semaphoreLock", { Limit: "int", Holders: map("bool") });

/**
 * Semaphore.decodeLock: no value is an empty lock with our own limit; anything else is JSON decoded as
 * encoding/json would (field names in any case, a missing Limit is 0). Throws `lock decoding failed: ...`.
 */
export function decodeSemaphoreLock(value: Uint8Array | null, localLimit: number): SemaphoreLock {
  if (value === null) return { limit: localLimit, holders: new Map() };
  try {
    const raw = decodeGoStruct<{ Limit?: number; Holders?: Record<string, boolean> | null }>(parseGoJson(new TextDecoder().decode(value)), SEMAPHORE_LOCK.struct);
    return { limit: raw.Limit ?? 0, holders: new Map(Object.entries(raw.Holders ?? {})) };
  } catch (err) {
    throw new Error(`lock decoding failed: ${err instanceof GoError ? err.message : (err as Error).message}`);
  }
}

/** Semaphore.encodeLock's body: json.Marshal of semaphoreLock, holder keys in Go's sorted map order. */
export function encodeSemaphoreLock(lock: SemaphoreLock): string {
  const keys = [...lock.holders.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  return `{"Limit":${lock.limit},"Holders":{${keys.map((k) => `${JSON.stringify(k)}:${lock.holders.get(k)}`).join(",")}}}`;
}

/** The `.lock` key of a semaphore prefix. */
export function semaphoreLockKey(prefix: string): string {
  return joinPath(prefix, SEMAPHORE_KEY);
}

/** A contender's own key: `<prefix>/<session>`. */
export function contenderKey(prefix: string, session: string): string {
  return joinPath(prefix, session);
}

/** Semaphore.findLock: the `.lock` pair among a prefix listing, or a blank one (flags set, index 0). */
export function findSemaphoreLock(pairs: readonly KvPair[], prefix: string): KvPair {
  const key = semaphoreLockKey(prefix);
  return pairs.find((p) => p.Key === key) ?? { Key: key, Flags: SEMAPHORE_FLAG_VALUE, Value: null, Session: "", ModifyIndex: 0n };
}

/** Semaphore.pruneDeadHolders: keeps the holders whose session holds some key of the listing. */
export function pruneDeadHolders(lock: SemaphoreLock, pairs: readonly KvPair[]): SemaphoreLock {
  const alive = new Set(pairs.filter((p) => p.Session !== "").map((p) => p.Session));
  return { limit: lock.limit, holders: new Map([...lock.holders].filter(([id]) => alive.has(id))) };
}

export type SemaphoreAcquireStep =
  | { readonly kind: "conflict" }
  | { readonly kind: "limit-conflict"; readonly lockLimit: number }
  | { readonly kind: "full" }
  | { readonly kind: "cas"; readonly value: string; readonly index: bigint };

/**
 * Semaphore.Acquire after listing the prefix: a flag conflict (ErrSemaphoreConflict), a limit that
 * disagrees with ours, every slot taken by a live holder (wait), or the CAS write that adds our
 * session at the `.lock` key's index. Throws `lock decoding failed: ...` on a bad `.lock` value.
 */
export function semaphoreAcquireStep(pairs: readonly KvPair[], prefix: string, session: string, limit: number): SemaphoreAcquireStep {
  const lockPair = findSemaphoreLock(pairs, prefix);
  if (lockPair.Flags !== SEMAPHORE_FLAG_VALUE) return { kind: "conflict" };
  const decoded = decodeSemaphoreLock(lockPair.Value, limit);
  if (decoded.limit !== limit) return { kind: "limit-conflict", lockLimit: decoded.limit };
  const lock = pruneDeadHolders(decoded, pairs);
  if (lock.holders.size >= lock.limit) return { kind: "full" };
  const holders = new Map(lock.holders).set(session, true);
  return { kind: "cas", value: encodeSemaphoreLock({ limit: lock.limit, holders }), index: lockPair.ModifyIndex };
}

/**
 * Semaphore.Release on the `.lock` pair (undefined when absent): `none` when we are not a holder, else
 * the CAS write without us. Dead holders are not pruned here, as in Consul. Throws on a bad value.
 */
export function semaphoreReleaseStep(pair: KvPair | undefined, session: string, limit: number): { readonly kind: "none" } | { readonly kind: "cas"; readonly value: string; readonly index: bigint } {
  const lock = decodeSemaphoreLock(pair?.Value ?? null, limit);
  if (!lock.holders.has(session)) return { kind: "none" };
  const holders = new Map(lock.holders);
  holders.delete(session);
  return { kind: "cas", value: encodeSemaphoreLock({ limit: lock.limit, holders }), index: pair?.ModifyIndex ?? 0n };
}

/** Semaphore.monitorLock keeps watching while we are a live holder; a bad `.lock` value means lost. */
export function semaphoreStillHeld(pairs: readonly KvPair[], prefix: string, session: string, limit: number): boolean {
  try {
    return pruneDeadHolders(decodeSemaphoreLock(findSemaphoreLock(pairs, prefix).Value, limit), pairs).holders.has(session);
  } catch {
    return false;
  }
}

/**
 * Semaphore.Destroy: nothing to do without a `.lock` key, a flag conflict, live holders left (in use),
 * or delete the key with CAS at its index. Throws `lock decoding failed: ...` on a bad value.
 */
export function semaphoreDestroyStep(pairs: readonly KvPair[], prefix: string, limit: number): DestroyStep {
  const lockPair = findSemaphoreLock(pairs, prefix);
  if (lockPair.ModifyIndex === 0n) return { kind: "absent" };
  if (lockPair.Flags !== SEMAPHORE_FLAG_VALUE) return { kind: "conflict" };
  const lock = pruneDeadHolders(decodeSemaphoreLock(lockPair.Value, limit), pairs);
  return lock.holders.size > 0 ? { kind: "in-use" } : { kind: "delete", index: lockPair.ModifyIndex };
}
