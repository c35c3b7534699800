/**
 * Node, Service and Check operations of a transaction (Consul's txnNode, txnService and txnCheck in
 * agent/consul/state/txn.go, and the CAS helpers ensureNodeCASTxn, deleteNodeCASTxn, ... in
 * catalog.go, v1.8). Writes go through catalog_write.ts, as catalog registrations do; error texts are
 * Consul's. Each function returns the op's results (the stored object after set/cas, the object for
 * get, none for deletes) or throws StateError.
 *
 * One deviation: Consul 1.8 drops the error of a Service `set` and `cas` (it is overwritten by the
 * lookup that follows, fixed in later versions), so a service set on a missing node silently does
 * nothing there; here it fails the transaction with "Missing node registration".
 */
import type { HealthCheck, Node, NodeService, TxnCheckOp, TxnNodeOp, TxnResult, TxnServiceOp } from "../model/index.ts";
import { uuidError, type Uint64 } from "../lib/index.ts";
import { deleteCheck, deleteNode, deleteService, ensureCheck, ensureNode, ensureService, quote as q } from "./catalog_write.ts";
import { checkFromRequest, nodeFromRequest, serviceFromRequest } from "./normalize.ts";
import { lower } from "./tables.ts";
import { StateError, type Tx } from "./tx.ts";

/** Whether a compare index equals a stored one (a uint64 past 2^53 never does). */
const sameIndex = (want: Uint64 | undefined, have: number): boolean => String(want ?? 0) === String(have);
const isZero = (want: Uint64 | undefined): boolean => String(want ?? 0) === "0";

/**
 * Consul's CAS rule for set: index 0 writes only if absent; otherwise the object must exist with that
 * ModifyIndex.
 */
function casAllows(want: Uint64 | undefined, existing: { ModifyIndex: number } | undefined): boolean {
  if (isZero(want)) return existing === undefined;
  return existing !== undefined && sameIndex(want, existing.ModifyIndex);
}

/** Consul's getNodeIDTxn / getNodeTxn: by ID when one is given (it must be a UUID), else by name. */
function findNode(tx: Tx, n: { readonly ID: string; readonly Node: string }): Node | undefined {
  if (!n.ID) return tx.db.nodes.get(lower(n.Node));
  const bad = uuidError(n.ID);
  if (bad) throw new StateError(`node lookup by ID failed, wrong UUID: ${bad} for '${n.ID}'`);
  const key = tx.db.nodeIds.get(lower(n.ID));
  return key === undefined ? undefined : tx.db.nodes.get(key);
}

const nodeResult = (n: Node | undefined): TxnResult[] => (n ? [{ Node: n }] : []);

/** A Node operation (Consul's txnNode). */
export function txnNode(tx: Tx, op: TxnNodeOp): TxnResult[] {
  const given = op.Node;
  const node = () => nodeFromRequest({ ...given, NodeMeta: given.Meta });
  switch (op.Verb) {
    case "get": {
      const n = findNode(tx, given);
      if (!n) throw new StateError(`node ${q(given.Node)} doesn't exist`);
      return [{ Node: n }];
    }
    case "set":
      ensureNode(tx, node());
      return nodeResult(findNode(tx, given));
    case "cas":
      if (!casAllows(op.Index, tx.db.nodes.get(lower(given.Node)))) throw new StateError(`failed to set node ${q(given.Node)}, index is stale`);
      ensureNode(tx, node());
      return nodeResult(findNode(tx, given));
    case "delete":
      deleteNode(tx, lower(given.Node));
      return [];
    case "delete-cas": {
      const n = tx.db.nodes.get(lower(given.Node));
      if (!n || !sameIndex(op.Index, n.ModifyIndex)) throw new StateError(`failed to delete node ${q(given.Node)}, index is stale`);
      deleteNode(tx, lower(given.Node));
      return [];
    }
    default:
      throw new StateError(`unknown Node verb ${q(String((op as { Verb: unknown }).Verb))}`);
  }
}

function findService(tx: Tx, node: string, id: string): NodeService | undefined {
  return tx.db.services.get(lower(node))?.get(lower(id))?.svc;
}

const serviceResult = (s: NodeService | undefined): TxnResult[] => (s ? [{ Service: s }] : []);

/** A Service operation (Consul's txnService). */
export function txnService(tx: Tx, op: TxnServiceOp): TxnResult[] {
  const { Node: node, Service: svc } = op;
  const id = svc.ID;
  switch (op.Verb) {
    case "get": {
      const s = findService(tx, node, id);
      if (!s) throw new StateError(`service ${q(id)} on node ${q(node)} doesn't exist`);
      return [{ Service: s }];
    }
    case "set":
      ensureService(tx, node, serviceFromRequest(svc));
      return serviceResult(findService(tx, node, id));
    case "cas":
      if (!casAllows(op.Index, findService(tx, node, id))) throw new StateError(`failed to set service ${q(id)} on node ${q(node)}, index is stale`);
      ensureService(tx, node, serviceFromRequest(svc));
      return serviceResult(findService(tx, node, id));
    case "delete":
      deleteService(tx, lower(node), lower(id));
      return [];
    case "delete-cas": {
      const s = findService(tx, node, id);
      if (!s || !sameIndex(op.Index, s.ModifyIndex)) throw new StateError(`failed to delete service ${q(id)} on node ${q(node)}, index is stale`);
      deleteService(tx, lower(node), lower(id));
      return [];
    }
    default:
      throw new StateError(`unknown Service verb ${q(String((op as { Verb: unknown }).Verb))}`);
  }
}

function findCheck(tx: Tx, node: string, id: string): HealthCheck | undefined {
  return tx.db.checks.get(lower(node))?.get(lower(id));
}

const checkResult = (c: HealthCheck | undefined): TxnResult[] => (c ? [{ Check: c }] : []);

/** A Check operation (Consul's txnCheck). */
export function txnCheck(tx: Tx, op: TxnCheckOp): TxnResult[] {
  const { Node: node, CheckID: id } = op.Check;
  switch (op.Verb) {
    case "get": {
      const c = findCheck(tx, node, id);
      if (!c) throw new StateError(`check ${q(id)} on node ${q(node)} doesn't exist`);
      return [{ Check: c }];
    }
    case "set":
      ensureCheck(tx, checkFromRequest(op.Check, node));
      return checkResult(findCheck(tx, node, id));
    case "cas":
      if (!casAllows(op.Index, findCheck(tx, node, id))) throw new StateError(`failed to set check ${q(id)} on node ${q(node)}, index is stale`);
      ensureCheck(tx, checkFromRequest(op.Check, node));
      return checkResult(findCheck(tx, node, id));
    case "delete":
      deleteCheck(tx, lower(node), lower(id));
      return [];
    case "delete-cas": {
      const c = findCheck(tx, node, id);
      if (!c || !sameIndex(op.Index, c.ModifyIndex)) throw new StateError(`failed to delete check ${q(id)} on node ${q(node)}, index is stale`);
      deleteCheck(tx, lower(node), lower(id));
      return [];
    }
    default:
      throw new StateError(`unknown Check verb ${q(String((op as { Verb: unknown }).Verb))}`);
  }
}
