/**
 * Session writes inside a Tx (Consul's sessionCreateTxn, validateSessionChecksTxn and
 * deleteSessionTxn; agent/consul/state/session.go v1.8).
 *
 * Destroying a session invalidates it: the prepared queries bound to it are deleted; keys it holds are released (Behavior "release": Session
 * cleared, value kept, ModifyIndex bumped) or deleted (Behavior "delete"), and each gets the session's
 * lock-delay (capped at 60 s), which the store records on commit.
 */
import { MAX_LOCK_DELAY_MS } from "../model/index.ts";
import type { SessionCreate } from "./commands.ts";
import { ERR_MISSING_NODE } from "./errors.ts";
import { kvDelete, kvSetEntry } from "./kv_write.ts";
import { sessionFromRequest } from "./normalize.ts";
import { deleteSessionQueries } from "./prepared_query_write.ts";
import { lower, sessionCheckIds } from "./tables.ts";
import { INDEX } from "./topics.ts";
import { StateError, type Tx } from "./tx.ts";

/**
 * Creates a session. Errors (Consul's): "Missing session ID", "Invalid session behavior: X",
 * "Missing node registration", "Missing check 'X' registration", "Check 'X' is in critical state".
 * Returns the session ID.
 */
export function createSession(tx: Tx, s: SessionCreate): string {
  if (!s.ID) throw new StateError("Missing session ID");
  const behavior: string = s.Behavior ?? "";
  if (behavior !== "" && behavior !== "release" && behavior !== "delete") {
    throw new StateError(`Invalid session behavior: ${behavior}`);
  }
  const sess = sessionFromRequest(s, tx.idx);
  const nk = lower(sess.Node);
  if (!tx.db.nodes.has(nk)) throw new StateError(ERR_MISSING_NODE);
  const checks = tx.db.checks.get(nk);
  for (const id of sessionCheckIds(sess)) {
    const c = checks?.get(lower(id));
    if (!c) throw new StateError(`Missing check '${id}' registration`);
    if (c.Status === "critical") throw new StateError(`Check '${id}' is in critical state`);
  }
  tx.putSession(sess);
  tx.bumpIndex(INDEX.sessions);
  return sess.ID;
}

/**
 * Destroys a session, invalidates its locks per its Behavior and deletes the prepared queries bound to
 * it. No-op if it does not exist.
 */
export function destroySession(tx: Tx, id: string): void {
  const key = lower(id);
  const sess = tx.db.sessions.get(key);
  if (!sess) return;
  tx.deleteSession(key);
  tx.bumpIndex(INDEX.sessions);
  const delayMs = Math.min(sess.LockDelay / 1e6, MAX_LOCK_DELAY_MS);
  const held = [...(tx.db.kvBySession.get(key) ?? [])].sort();
  for (const k of held) {
    if (sess.Behavior === "delete") {
      kvDelete(tx, k);
    } else {
      const e = tx.db.kvs.get(k)!;
      kvSetEntry(tx, { Key: e.Key, Flags: e.Flags, Value: e.Value, Session: "", LockIndex: e.LockIndex }, true);
    }
    if (delayMs > 0) tx.lockDelays.push([k, delayMs]);
  }
  deleteSessionQueries(tx, key);
}
