/**
 * KV and session queries (Consul's KVS.* and Session.* endpoints, agent/consul/kvs_endpoint.go and
 * state/kvs.go, session.go v1.8). KV reads watch the exact key or the prefix they read, so writes to
 * other keys do not wake them. Entries are read-only; their `Value` bytes are shared with the store.
 */
import type { DirEntry, Session, TxnError, TxnOp, TxnResult } from "../model/index.ts";
import { inKeyOrder, maxIndex } from "./query_common.ts";
import type { StateStore } from "./store.ts";
import { lower } from "./tables.ts";
import { INDEX, topic } from "./topics.ts";
import { isTxnReadOp, runTxnOps } from "./txn.ts";
import { Tx } from "./tx.ts";
import type { QueryResult, WatchSet } from "./watch.ts";

const kvTableIndex = (store: StateStore) => maxIndex(store.db, INDEX.kvs, INDEX.tombstones);

/**
 * `/v1/kv/:key`: the entry or null. Index: the entry's ModifyIndex when it exists, else the max of the
 * kvs and tombstones entries (what Consul's KVS.Get answers; the state function alone returns the latter).
 */
export function kvGet(store: StateStore, ws: WatchSet, key: string): QueryResult<DirEntry | null> {
  ws.addKey(store.hub, key);
  const e = store.db.kvs.get(key);
  return e ? { index: e.ModifyIndex, value: e } : { index: kvTableIndex(store), value: null };
}

/**
 * Index of a prefix read (Consul's kvsListTxn): the highest ModifyIndex under the prefix or of a
 * tombstone under it, so deletes move it forward too; for "" or when that is 0, the table index.
 */
function prefixIndex(store: StateStore, prefix: string, highest: number): number {
  let idx = highest;
  if (prefix === "") return kvTableIndex(store);
  for (const k of store.db.tombstoneKeys.withPrefix(prefix)) idx = Math.max(idx, store.db.tombstones.get(k)!);
  return idx || kvTableIndex(store);
}

/** `/v1/kv/:prefix?recurse`: entries under the prefix in key order. Index: see prefixIndex. */
export function kvList(store: StateStore, ws: WatchSet, prefix: string): QueryResult<readonly DirEntry[]> {
  ws.addPrefix(store.hub, prefix);
  const db = store.db;
  const value: DirEntry[] = [];
  let highest = 0;
  for (const k of db.kvKeys.withPrefix(prefix)) {
    const e = db.kvs.get(k)!;
    value.push(e);
    if (e.ModifyIndex > highest) highest = e.ModifyIndex;
  }
  return { index: prefixIndex(store, prefix, highest), value };
}

/**
 * `/v1/kv/:prefix?keys&separator=`: keys under the prefix; with a separator, a key whose rest (after
 * the prefix) contains it is cut just after its first occurrence, and repeats are dropped (Consul's
 * kvsKeysTxn). Index: as kvList.
 */
export function kvKeys(store: StateStore, ws: WatchSet, prefix: string, separator = ""): QueryResult<readonly string[]> {
  ws.addPrefix(store.hub, prefix);
  const db = store.db;
  const value: string[] = [];
  let highest = 0;
  let last: string | undefined;
  for (const k of db.kvKeys.withPrefix(prefix)) {
    const e = db.kvs.get(k)!;
    if (e.ModifyIndex > highest) highest = e.ModifyIndex;
    if (!separator) {
      value.push(k);
      continue;
    }
    const at = k.indexOf(separator, prefix.length);
    const cut = at < 0 ? k : k.slice(0, at + separator.length);
    if (cut !== last) value.push(cut);
    last = cut;
  }
  return { index: prefixIndex(store, prefix, highest), value };
}

/**
 * A read-only transaction run locally without Raft (Consul's Txn.Read): every op must be a read verb
 * (KV get, get-tree, check-*; Node, Service and Check get); a write verb is reported as an error.
 * Errors make Results null, as apply.
 */
export function kvReadTxn(store: StateStore, ops: readonly TxnOp[]): { index: number; Results: TxnResult[] | null; Errors: TxnError[] | null } {
  const writes: TxnError[] = [];
  ops.forEach((op, OpIndex) => {
    const verb = (op?.KV ?? op?.Node ?? op?.Service ?? op?.Check)?.Verb ?? "";
    if (!isTxnReadOp(op)) writes.push({ OpIndex, What: `${JSON.stringify(verb)} is not a read operation` });
  });
  const index = Math.max(1, store.lastIndex());
  if (writes.length) return { index, Results: null, Errors: writes };
  const { Results, Errors } = runTxnOps(new Tx(store.db, 0), ops);
  return Errors.length ? { index, Results: null, Errors } : { index, Results, Errors: null };
}

/** `/v1/session/info/:id`: the session or null. Index: the sessions table. */
export function sessionGet(store: StateStore, ws: WatchSet, id: string): QueryResult<Session | null> {
  ws.addTopic(store.hub, topic.session(lower(id)));
  return { index: maxIndex(store.db, INDEX.sessions), value: store.db.sessions.get(lower(id)) ?? null };
}

/** `/v1/session/list`: all sessions by ID. Index: the sessions table. */
export function sessionList(store: StateStore, ws: WatchSet): QueryResult<readonly Session[]> {
  ws.addTopic(store.hub, topic.index(INDEX.sessions));
  return { index: maxIndex(store.db, INDEX.sessions), value: inKeyOrder(store.db.sessions) };
}

/** `/v1/session/node/:node`: the node's sessions by ID. Index: the sessions table. */
export function sessionsForNode(store: StateStore, ws: WatchSet, node: string): QueryResult<readonly Session[]> {
  const nk = lower(node);
  ws.addTopic(store.hub, topic.nodeSessions(nk));
  const ids = [...(store.db.sessionsByNode.get(nk) ?? [])].sort();
  return { index: maxIndex(store.db, INDEX.sessions), value: ids.map((id) => store.db.sessions.get(id)!) };
}
