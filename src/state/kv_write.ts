/**
 * KV writes inside a Tx (Consul's kvsSetTxn, kvsSetCASTxn, kvsLockTxn, kvsUnlockTxn, kvsDeleteTxn,
 * kvsDeleteCASTxn, kvsDeleteTreeTxn; agent/consul/state/kvs.go v1.8).
 *
 * A set that changes nothing (same Flags, Value, Session and LockIndex) writes nothing and keeps the
 * entry's ModifyIndex (Consul since 1.6, #5885/#7832). Deletes leave a tombstone so list indexes never
 * go backwards; a tree delete leaves one tombstone at its prefix (none for the whole store).
 */
import type { Uint64 } from "../lib/index.ts";
import type { DirEntry, KVWrite } from "../model/index.ts";
import { bytesEqual } from "./normalize.ts";
import { lower } from "./tables.ts";
import { INDEX } from "./topics.ts";
import { StateError, type Tx } from "./tx.ts";

/** The fields of an entry to write; indexes are computed. */
export interface KVInput {
  readonly Key: string;
  readonly Flags: Uint64;
  readonly Value: Uint8Array | null;
  readonly Session: string;
  readonly LockIndex: number;
}

/** Builds a DirEntry in Consul's JSON field order (Session omitted when empty, as `omitempty`). */
export function makeEntry(e: KVInput, createIndex: number, modifyIndex: number): DirEntry {
  return e.Session
    ? { LockIndex: e.LockIndex, Key: e.Key, Flags: e.Flags, Value: e.Value, Session: e.Session, CreateIndex: createIndex, ModifyIndex: modifyIndex }
    : { LockIndex: e.LockIndex, Key: e.Key, Flags: e.Flags, Value: e.Value, CreateIndex: createIndex, ModifyIndex: modifyIndex };
}

/** Consul's DirEntry.Equal: same key, flags, value bytes, session and lock index. */
function sameEntry(a: DirEntry, b: KVInput): boolean {
  return a.Key === b.Key && a.Flags === b.Flags && (a.Session ?? "") === b.Session && a.LockIndex === b.LockIndex && bytesEqual(a.Value, b.Value);
}

function input(w: KVWrite, session: string, lockIndex: number): KVInput {
  return { Key: w.Key, Flags: w.Flags ?? 0, Value: w.Value ?? null, Session: session, LockIndex: lockIndex };
}

/**
 * Stores an entry, keeping CreateIndex; unless `updateSession`, the existing holder (or none) is kept.
 * Returns the entry as stored (the existing one when nothing changed).
 */
export function kvSetEntry(tx: Tx, e: KVInput, updateSession: boolean): DirEntry {
  const cur = tx.db.kvs.get(e.Key);
  const want = updateSession ? e : { ...e, Session: cur?.Session ?? "" };
  if (cur && sameEntry(cur, want)) return cur;
  const entry = makeEntry(want, cur?.CreateIndex ?? tx.idx, tx.idx);
  tx.putKV(entry);
  tx.bumpIndex(INDEX.kvs);
  return entry;
}

/** A plain set (the request's LockIndex is 0, as Consul's KV endpoint sends it). */
export function kvSet(tx: Tx, w: KVWrite): DirEntry {
  return kvSetEntry(tx, input(w, "", 0), false);
}

/** Check-and-set on ModifyIndex; index 0 means "only if absent". Returns the stored entry or undefined. */
export function kvCas(tx: Tx, w: KVWrite): DirEntry | undefined {
  const cur = tx.db.kvs.get(w.Key);
  const cas = w.ModifyIndex ?? 0;
  if (cas === 0 && cur) return undefined;
  if (cas !== 0 && (!cur || cur.ModifyIndex !== cas)) return undefined;
  return kvSet(tx, w);
}

/**
 * Acquires the lock on a key for `w.Session` and writes the value. Errors: "missing session",
 * `invalid session "<id>"`. Returns undefined when another session holds the lock. Lock-delay is not
 * checked here (it is per-server wall time; the proposer checks it, see `lockDelayRejection`).
 */
export function kvLock(tx: Tx, w: KVWrite): DirEntry | undefined {
  const session = w.Session ?? "";
  if (!session) throw new StateError("missing session");
  if (!tx.db.sessions.has(lower(session))) throw new StateError(`invalid session ${JSON.stringify(session)}`);
  const cur = tx.db.kvs.get(w.Key);
  let lockIndex = 1;
  if (cur) {
    if (cur.Session === session) lockIndex = cur.LockIndex;
    else if (cur.Session) return undefined;
    else lockIndex = cur.LockIndex + 1;
  }
  return kvSetEntry(tx, input(w, session, lockIndex), true);
}

/** Releases the lock held by `w.Session` and writes the value; undefined if the key is missing or not held by it. */
export function kvUnlock(tx: Tx, w: KVWrite): DirEntry | undefined {
  const session = w.Session ?? "";
  if (!session) throw new StateError("missing session");
  const cur = tx.db.kvs.get(w.Key);
  if (!cur || cur.Session !== session) return undefined;
  return kvSetEntry(tx, input(w, "", cur.LockIndex), true);
}

/** Deletes a key, leaving a tombstone. No-op (and no index change) if the key is absent. */
export function kvDelete(tx: Tx, key: string): void {
  if (!tx.db.kvs.has(key)) return;
  tombstone(tx, key);
  tx.deleteKV(key);
  tx.bumpIndex(INDEX.kvs);
}

/** Deletes a key if its ModifyIndex is `cas`. True also when the key is absent (Consul's quirk). */
export function kvDeleteCas(tx: Tx, key: string, cas: Uint64): boolean {
  const cur = tx.db.kvs.get(key);
  if (!cur) return true;
  if (cur.ModifyIndex !== cas) return false;
  kvDelete(tx, key);
  return true;
}

/** Deletes every key under `prefix`, with one tombstone at the prefix (none when the prefix is ""). */
export function kvDeleteTree(tx: Tx, prefix: string): void {
  const keys = [...tx.db.kvKeys.withPrefix(prefix)];
  if (keys.length === 0) return;
  for (const k of keys) tx.deleteKV(k);
  if (prefix !== "") tombstone(tx, prefix);
  tx.bumpIndex(INDEX.kvs);
}

function tombstone(tx: Tx, key: string): void {
  tx.putTombstone(key, tx.idx);
  tx.bumpIndex(INDEX.tombstones);
}

/** Drops tombstones with an index <= `reapIndex` (Consul's ReapTxn; no index-table change). */
export function reapTombstones(tx: Tx, reapIndex: number): void {
  const doomed: string[] = [];
  for (const [k, i] of tx.db.tombstones) if (i <= reapIndex) doomed.push(k);
  for (const k of doomed) tx.deleteTombstone(k);
}
