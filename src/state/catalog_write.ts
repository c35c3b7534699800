/**
 * Catalog writes inside a Tx (Consul's ensureRegistrationTxn, ensureNodeTxn, ensureServiceTxn,
 * ensureCheckTxn, deleteNodeTxn, deleteServiceTxn, deleteCheckTxn; agent/consul/state/catalog.go).
 *
 * Index bookkeeping follows Consul: unchanged re-registrations write nothing and bump nothing;
 * CreateIndex survives updates; the per-service entry "service.<name>" moves with any change to the
 * service's instances, their checks or their nodes; removing a service's last instance drops that
 * entry and raises "service_last_extinction".
 */
import { SERF_CHECK_ID } from "../model/index.ts";
import type { DeregisterRequest, HealthCheck, Node, NodeService, RegisterRequest, Unindexed } from "../model/index.ts";
import { ERR_MISSING_NODE, ERR_MISSING_SERVICE } from "./errors.ts";
import { checkFromRequest, deepEqual, nodeFromRequest, serviceFromRequest, withIndexes } from "./normalize.ts";
import { deleteNodeCoordinates } from "./coordinate_write.ts";
import { destroySession } from "./session_write.ts";
import { lower, pair, type StoredService } from "./tables.ts";
import { INDEX } from "./topics.ts";
import { StateError, type Tx } from "./tx.ts";

/** Go's %q for plain strings. */
export const quote = (s: string): string => JSON.stringify(s);

function withoutIndexes<T extends { CreateIndex: number; ModifyIndex: number }>(v: T): Omit<T, "CreateIndex" | "ModifyIndex"> {
  const { CreateIndex: _c, ModifyIndex: _m, ...rest } = v;
  return rest;
}

/** Applies a registration: node (when it changes), then the service, then Check and Checks. */
export function ensureRegistration(tx: Tx, req: RegisterRequest): void {
  const node = nodeFromRequest(req);
  const existing = tx.db.nodes.get(lower(req.Node));
  if (!existing || (!req.SkipNodeUpdate && !deepEqual(withoutIndexes(existing), node))) {
    try {
      ensureNode(tx, node);
    } catch (e) {
      throw new StateError(`failed inserting node: ${(e as Error).message}`);
    }
  }
  if (req.Service) {
    const svc = serviceFromRequest(req.Service);
    const cur = tx.db.services.get(lower(req.Node))?.get(lower(svc.ID));
    if (!cur || !sameService(cur, req.Node, svc)) {
      try {
        ensureService(tx, req.Node, svc);
      } catch (e) {
        throw new StateError(`failed inserting service: ${(e as Error).message}`);
      }
    }
  }
  const checks = req.Check ? [req.Check, ...(req.Checks ?? [])] : (req.Checks ?? []);
  for (const c of checks) {
    const hc = checkFromRequest(c, req.Node);
    if (lower(hc.Node) !== lower(req.Node)) throw new StateError(`check node ${quote(hc.Node)} does not match node ${quote(req.Node)}`);
    try {
      ensureCheck(tx, hc);
    } catch (e) {
      throw new StateError(`failed inserting check: ${(e as Error).message}`);
    }
  }
}

/** Applies a deregistration: a service (with its checks), else a check, else the whole node. */
export function deregister(tx: Tx, req: DeregisterRequest): void {
  const nk = lower(req.Node);
  if (req.ServiceID) deleteService(tx, nk, lower(req.ServiceID));
  else if (req.CheckID) deleteCheck(tx, nk, lower(req.CheckID));
  else deleteNode(tx, nk);
}

function sameService(cur: StoredService, node: string, svc: Unindexed<NodeService>): boolean {
  return cur.node === node && deepEqual(withoutIndexes(cur.svc), svc);
}

/**
 * Another node holding `node`'s name (case-insensitively) with a different ID blocks it while that
 * node's serfHealth check is not critical (Consul's ensureNoNodeWithSimilarNameTxn).
 */
function nameConflict(tx: Tx, node: Unindexed<Node>, allowClashWithoutId: boolean): string | undefined {
  const other = tx.db.nodes.get(lower(node.Node));
  if (!other || lower(other.ID) === lower(node.ID)) return undefined;
  const serf = tx.db.checks.get(lower(other.Node))?.get(lower(SERF_CHECK_ID));
  const healthy = serf !== undefined && serf.Status !== "critical";
  if (!(other.ID === "" && allowClashWithoutId) && healthy) {
    return `Node name ${node.Node} is reserved by node ${other.ID} with name ${other.Node}`;
  }
  return undefined;
}

/** Upserts a node, handling renames by ID (Consul's ensureNodeTxn). */
export function ensureNode(tx: Tx, node: Unindexed<Node>): void {
  const db = tx.db;
  let prev: Node | undefined;
  if (node.ID) {
    const byIdKey = db.nodeIds.get(lower(node.ID));
    const byId = byIdKey === undefined ? undefined : db.nodes.get(byIdKey);
    if (byId) {
      prev = byId;
      if (lower(byId.Node) !== lower(node.Node)) {
        const dup = nameConflict(tx, node, false);
        if (dup) throw new StateError(`Error while renaming Node ID: ${quote(node.ID)}: ${dup}`);
        deleteNode(tx, lower(byId.Node));
      }
    } else {
      const dup = nameConflict(tx, node, true);
      if (dup) throw new StateError(`Error while renaming Node ID: ${quote(node.ID)}: ${dup}`);
    }
  }
  prev ??= db.nodes.get(lower(node.Node));
  if (prev && deepEqual(withoutIndexes(prev), node)) return;
  tx.putNode(withIndexes(node, prev?.CreateIndex ?? tx.idx, tx.idx));
  tx.bumpIndex(INDEX.nodes);
  bumpServicesOfNode(tx, lower(node.Node));
}

/** Node fields appear in health results, so a node change moves every one of its services' entries. */
function bumpServicesOfNode(tx: Tx, nk: string): void {
  for (const s of tx.db.services.get(nk)?.values() ?? []) bumpService(tx, s.svc);
}

/** Moves the entries of a service's name and kind (Consul's catalogUpdateServiceIndexes and ...KindIndexes). */
function bumpService(tx: Tx, svc: NodeService | Unindexed<NodeService>): void {
  tx.bumpIndex(INDEX.service(lower(svc.Service)));
  tx.bumpIndex(INDEX.serviceKind(svc.Kind ?? ""));
}

/** After an instance went away: bump its name's entry, or drop it and raise the extinction index. */
function serviceInstanceRemoved(tx: Tx, svc: NodeService): void {
  const key = lower(svc.Service);
  tx.bumpIndex(INDEX.serviceKind(svc.Kind ?? ""));
  if (tx.db.servicesByName.has(key)) {
    tx.bumpIndex(INDEX.service(key));
  } else {
    tx.dropIndex(INDEX.service(key));
    tx.bumpIndex(INDEX.serviceExtinction);
  }
}

/** Upserts a service instance on an existing node (Consul's ensureServiceTxn). */
export function ensureService(tx: Tx, node: string, svc: Unindexed<NodeService>): void {
  const db = tx.db;
  const nk = lower(node);
  const cur = db.services.get(nk)?.get(lower(svc.ID));
  if (!db.nodes.has(nk)) throw new StateError(ERR_MISSING_NODE);
  if (cur && sameService(cur, node, svc)) return;
  tx.putService({ node, svc: withIndexes(svc, cur?.svc.CreateIndex ?? tx.idx, tx.idx) });
  tx.bumpIndex(INDEX.services);
  bumpService(tx, svc);
  if (cur && (lower(cur.svc.Service) !== lower(svc.Service) || cur.svc.Kind !== svc.Kind)) serviceInstanceRemoved(tx, cur.svc);
}

function sameCheck(a: HealthCheck, b: Unindexed<HealthCheck>): boolean {
  return deepEqual(withoutIndexes(a), b);
}

/**
 * Upserts a check (Consul's ensureCheckTxn): the node must exist, and the service when ServiceID is
 * set (its name and tags are copied in). A critical check destroys the sessions tied to it.
 */
export function ensureCheck(tx: Tx, given: Unindexed<HealthCheck>): void {
  const db = tx.db;
  const nk = lower(given.Node);
  const id = lower(given.CheckID);
  const cur = db.checks.get(nk)?.get(id);
  if (!db.nodes.has(nk)) throw new StateError(ERR_MISSING_NODE);
  let hc = given;
  let modified = true;
  if (hc.ServiceID) {
    const svc = db.services.get(nk)?.get(lower(hc.ServiceID));
    if (!svc) throw new StateError(ERR_MISSING_SERVICE);
    hc = { ...hc, ServiceName: svc.svc.Service, ServiceTags: svc.svc.Tags };
    if (cur && sameCheck(cur, hc)) modified = false;
    else bumpService(tx, svc.svc);
  } else if (cur && sameCheck(cur, hc)) {
    modified = false;
  } else {
    bumpServicesOfNode(tx, nk);
  }
  if (hc.Status === "critical") invalidateCheckSessions(tx, nk, id);
  if (!modified) return;
  tx.putCheck(withIndexes(hc, cur?.CreateIndex ?? tx.idx, tx.idx));
  tx.bumpIndex(INDEX.checks);
}

function invalidateCheckSessions(tx: Tx, nk: string, checkKey: string): void {
  const ids = tx.db.sessionChecks.get(pair(nk, checkKey));
  if (ids) for (const sid of [...ids].sort()) destroySession(tx, sid);
}

/** Removes a node with its services, checks and sessions (Consul's deleteNodeTxn). No-op if missing. */
export function deleteNode(tx: Tx, nk: string): void {
  const db = tx.db;
  if (!db.nodes.has(nk)) return;
  for (const s of [...(db.services.get(nk)?.values() ?? [])]) {
    bumpService(tx, s.svc);
    deleteService(tx, nk, lower(s.svc.ID));
  }
  for (const c of [...(db.checks.get(nk)?.values() ?? [])]) deleteCheck(tx, nk, lower(c.CheckID));
  deleteNodeCoordinates(tx, nk);
  tx.deleteNode(nk);
  tx.bumpIndex(INDEX.nodes);
  for (const sid of [...(db.sessionsByNode.get(nk) ?? [])].sort()) destroySession(tx, sid);
}

/** Removes a service instance and its checks (Consul's deleteServiceTxn). No-op if missing. */
export function deleteService(tx: Tx, nk: string, id: string): void {
  const db = tx.db;
  const s = db.services.get(nk)?.get(id);
  if (!s) return;
  for (const c of [...(db.checks.get(nk)?.values() ?? [])]) {
    if (c.ServiceID && lower(c.ServiceID) === id) deleteCheck(tx, nk, lower(c.CheckID));
  }
  tx.bumpIndex(INDEX.checks);
  tx.deleteService(nk, id);
  tx.bumpIndex(INDEX.services);
  serviceInstanceRemoved(tx, s.svc);
}

/** Removes a check and destroys the sessions tied to it (Consul's deleteCheckTxn). No-op if missing. */
export function deleteCheck(tx: Tx, nk: string, id: string): void {
  const c = tx.db.checks.get(nk)?.get(id);
  if (!c) return;
  const svc = c.ServiceID ? tx.db.services.get(nk)?.get(lower(c.ServiceID)) : undefined;
  if (svc) bumpService(tx, svc.svc);
  else if (!c.ServiceID) bumpServicesOfNode(tx, nk);
  tx.deleteCheck(nk, id);
  tx.bumpIndex(INDEX.checks);
  invalidateCheckSessions(tx, nk, id);
}
