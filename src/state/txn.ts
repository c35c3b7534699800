/**
 * Transactions of KV, Node, Service and Check operations (Consul's txnKVS and txnDispatch,
 * agent/consul/state/txn.go; the catalog ops are in txn_catalog.ts).
 *
 * Every operation runs, in order, each seeing the writes before it; a failing operation is recorded
 * with its position and the rest still run, so all errors are reported at once. The caller rolls the
 * whole transaction back if there is any error. Error texts are Consul's.
 */
import type { DirEntry, TxnError, TxnKVOp, TxnOp, TxnResult } from "../model/index.ts";
import { TXN_READ_VERBS } from "../model/index.ts";
import { txnCheck, txnNode, txnService } from "./txn_catalog.ts";
import { kvCas, kvDelete, kvDeleteCas, kvDeleteTree, kvLock, kvSet, kvUnlock } from "./kv_write.ts";
import { StateError, type Tx } from "./tx.ts";

const q = (s: string) => JSON.stringify(s);

/** Results of every op that returned entries, and every op's error. */
export interface TxnOutcome {
  readonly Results: TxnResult[];
  readonly Errors: TxnError[];
}

/** Runs `ops` inside `tx`, collecting results and errors (Consul's txnDispatch). */
export function runTxnOps(tx: Tx, ops: readonly TxnOp[]): TxnOutcome {
  const Results: TxnResult[] = [];
  const Errors: TxnError[] = [];
  ops.forEach((op, OpIndex) => {
    try {
      Results.push(...txnOp(tx, op));
    } catch (e) {
      Errors.push({ OpIndex, What: e instanceof Error ? e.message : String(e) });
    }
  });
  return { Results, Errors };
}

/** Whether an operation only reads (a KV read verb or a catalog `get`); a txn of these alone skips Raft. */
export function isTxnReadOp(op: TxnOp | null | undefined): boolean {
  if (op?.KV) return TXN_READ_VERBS.has(op.KV.Verb);
  return (op?.Node ?? op?.Service ?? op?.Check)?.Verb === "get";
}

/** One operation, dispatched on its kind (the first of KV, Node, Service, Check that is set). */
function txnOp(tx: Tx, op: TxnOp | null | undefined): TxnResult[] {
  if (op?.KV) return txnKV(tx, op.KV).map((e): TxnResult => ({ KV: e }));
  if (op?.Node) return txnNode(tx, op.Node);
  if (op?.Service) return txnService(tx, op.Service);
  if (op?.Check) return txnCheck(tx, op.Check);
  throw new StateError("no operation specified");
}

const blank = (e: DirEntry): DirEntry => ({ ...e, Value: null });

function txnKV(tx: Tx, op: TxnKVOp): DirEntry[] {
  const w = { Key: op.Key, Flags: op.Flags, Value: op.Value, Session: op.Session, ModifyIndex: op.Index };
  const db = tx.db;
  switch (op.Verb) {
    case "set":
      return [blank(kvSet(tx, w))];
    case "delete":
      kvDelete(tx, op.Key);
      return [];
    case "delete-cas":
      if (!kvDeleteCas(tx, op.Key, op.Index ?? 0)) throw new StateError(`failed to delete key ${q(op.Key)}, index is stale`);
      return [];
    case "delete-tree":
      kvDeleteTree(tx, op.Key);
      return [];
    case "cas": {
      const e = kvCas(tx, w);
      if (!e) throw new StateError(`failed to set key ${q(op.Key)}, index is stale`);
      return [blank(e)];
    }
    case "lock": {
      const e = kvLock(tx, w);
      if (!e) throw new StateError(`failed to lock key ${q(op.Key)}, lock is already held`);
      return [blank(e)];
    }
    case "unlock": {
      const e = kvUnlock(tx, w);
      if (!e) throw new StateError(`failed to unlock key ${q(op.Key)}, lock isn't held, or is held by another session`);
      return [blank(e)];
    }
    case "get": {
      const e = db.kvs.get(op.Key);
      if (!e) throw new StateError(`key ${q(op.Key)} doesn't exist`);
      return [e];
    }
    case "get-tree": {
      const out: DirEntry[] = [];
      for (const k of db.kvKeys.withPrefix(op.Key)) out.push(db.kvs.get(k)!);
      return out;
    }
    case "check-session": {
      const e = db.kvs.get(op.Key);
      if (!e) throw new StateError(`failed to check session, key ${q(op.Key)} doesn't exist`);
      const want = op.Session ?? "";
      if ((e.Session ?? "") !== want) {
        throw new StateError(`failed session check for key ${q(op.Key)}, current session ${q(e.Session ?? "")} != ${q(want)}`);
      }
      return [blank(e)];
    }
    case "check-index": {
      const e = db.kvs.get(op.Key);
      if (!e) throw new StateError(`failed to check index, key ${q(op.Key)} doesn't exist`);
      const want = op.Index ?? 0;
      if (e.ModifyIndex !== want) {
        throw new StateError(`failed index check for key ${q(op.Key)}, current modify index ${e.ModifyIndex} != ${want}`);
      }
      return [blank(e)];
    }
    case "check-not-exists":
      if (db.kvs.has(op.Key)) throw new StateError(`key ${q(op.Key)} exists`);
      return [];
    default:
      throw new StateError(`unknown KV verb ${q(String((op as { Verb: unknown }).Verb))}`);
  }
}
