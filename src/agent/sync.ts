/**
 * One anti-entropy pass (Consul's agent/local State.SyncFull / SyncChanges): compare the local state
 * with the catalog, then push what is out of sync and remove what was deleted. Scheduling, retries and
 * back-off live in anti_entropy.ts.
 */
import type { HealthCheck, RegisterRequest } from "../model/index.ts";
import { CONSUL_SERVICE, SERF_CHECK_ID } from "../model/index.ts";
import type { Logger } from "../platform/index.ts";
import type { LocalCheck, LocalState } from "./local_state.ts";
import type { CatalogNodeServices, CatalogPort } from "./ports.ts";
import { sameCheck, sameList, sameMap, sameService } from "./same.ts";

const byKey = <T>(m: Map<string, T>): [string, T][] => [...m.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));

const isAclError = (err: unknown) => /Permission denied|ACL not found/i.test(String((err as Error)?.message ?? err));
const isGone = (err: unknown, what: "service" | "check") =>
  String((err as Error)?.message ?? err).includes(what === "service" ? "Unknown service" : "Unknown check");

/** Reads the catalog's view of this node and marks local entries in or out of sync (Consul's updateSyncState). */
export async function updateSyncState(state: LocalState, catalog: CatalogPort): Promise<void> {
  const [remote, remoteChecks] = await Promise.all([catalog.nodeServices(state.nodeName), catalog.nodeChecks(state.nodeName)]);
  reconcile(state, remote, remoteChecks);
}

/** The synchronous half of updateSyncState, given what the catalog answered. */
export function reconcile(state: LocalState, remote: CatalogNodeServices | undefined, remoteChecks: readonly HealthCheck[]): void {
  const node = state.nodeInfo();
  if (!remote || remote.node.ID !== node.nodeId || remote.node.Address !== node.address ||
    !sameMap(remote.node.TaggedAddresses, node.taggedAddresses) || !sameMap(remote.node.Meta, node.meta)) {
    state.nodeInfoInSync = false;
  }

  const remoteServices = new Map((remote?.services ?? []).map((s) => [s.ID, s]));
  for (const [id, e] of state.serviceEntries) if (!remoteServices.has(id)) e.inSync = false;
  for (const [id, rs] of remoteServices) {
    const ls = state.serviceEntries.get(id);
    if (!ls) {
      // The leader manages the consul service of servers.
      if (id === CONSUL_SERVICE) continue;
      state.serviceEntries.set(id, { service: undefined, inSync: false, deleted: true, version: 0, sidecarOf: undefined, token: "" });
      continue;
    }
    if (ls.deleted || !ls.service) continue;
    // With EnableTagOverride the catalog's tags win (updated there by an external tool).
    if (ls.service.EnableTagOverride && !sameList(ls.service.Tags, rs.Tags)) state.overrideTags(id, rs.Tags);
    ls.inSync = sameService(ls.service!, rs);
  }

  const remoteByID = new Map(remoteChecks.map((c) => [c.CheckID, c]));
  for (const [id, e] of state.checkEntries) if (!remoteByID.has(id)) e.inSync = false;
  for (const [id, rc] of remoteByID) {
    const lc = state.checkEntries.get(id);
    if (!lc) {
      // Gossip health is maintained by the servers, not by the agent.
      if (id === SERF_CHECK_ID) continue;
      state.checkEntries.set(id, { check: undefined, inSync: false, deleted: true, version: 0, criticalSince: undefined, deferTimer: undefined, token: "" });
      continue;
    }
    if (lc.deleted || !lc.check) continue;
    // While an output-only change waits for its deferred sync, a differing output alone is no reason to write.
    lc.inSync = lc.deferTimer ? sameCheck({ ...lc.check, Output: "" }, { ...rc, Output: "" }) : sameCheck(lc.check, rc);
  }
}

/** A full pass: compare with the catalog, then push the differences. Rejects on the first failed RPC. */
export async function syncFull(state: LocalState, catalog: CatalogPort, logger: Logger): Promise<void> {
  await updateSyncState(state, catalog);
  await syncChanges(state, catalog, logger);
}

function baseRequest(state: LocalState): RegisterRequest {
  const node = state.nodeInfo();
  return {
    Datacenter: state.datacenter,
    ID: node.nodeId,
    Node: state.nodeName,
    Address: node.address,
    TaggedAddresses: node.taggedAddresses,
    NodeMeta: node.meta,
  };
}

/**
 * Pushes node info when it is out of sync, then entries that are out of sync or deleted. Rejects on the
 * first failed RPC. Consul 1.8 pushes node info last, so a service written first carries it and needs
 * node:write with its own token, which a service token rarely has ("service registration blocked by
 * ACLs"); here node info goes first with the agent token, and services follow with SkipNodeUpdate.
 */
export async function syncChanges(state: LocalState, catalog: CatalogPort, logger: Logger): Promise<void> {
  if (!state.nodeInfoInSync) await syncNodeInfo(state, catalog, logger);
  for (const [id, e] of byKey(state.serviceEntries)) {
    if (state.serviceEntries.get(id) !== e) continue;
    if (e.deleted) await deleteService(state, catalog, logger, id);
    else if (!e.inSync) await syncService(state, catalog, logger, id);
  }
  for (const [id, e] of byKey(state.checkEntries)) {
    if (state.checkEntries.get(id) !== e) continue;
    if (e.deleted) await deleteCheck(state, catalog, logger, id);
    else if (!e.inSync) {
      e.deferTimer?.();
      e.deferTimer = undefined;
      await syncCheck(state, catalog, logger, id);
    }
  }
}

async function syncNodeInfo(state: LocalState, catalog: CatalogPort, logger: Logger): Promise<void> {
  try {
    await catalog.register(baseRequest(state));
    logger.info("synced node info");
  } catch (err) {
    if (!isAclError(err)) throw err;
    logger.warn("node info update blocked by ACLs");
  }
  state.nodeInfoInSync = true;
}

async function deleteService(state: LocalState, catalog: CatalogPort, logger: Logger, id: string): Promise<void> {
  const entry = state.serviceEntries.get(id)!;
  try {
    await catalog.deregister({ Datacenter: state.datacenter, Node: state.nodeName, ServiceID: id }, entry.token);
  } catch (err) {
    if (isAclError(err)) {
      entry.inSync = true;
      logger.warn("service deregistration blocked by ACLs", { service: id });
      return;
    }
    if (!isGone(err, "service")) throw err;
  }
  if (state.serviceEntries.get(id) === entry && entry.deleted) state.serviceEntries.delete(id);
  // The catalog dropped the service's checks with it.
  for (const [cid, c] of state.checkEntries) {
    if (c.deleted && c.check?.ServiceID === id) state.checkEntries.delete(cid);
  }
  logger.info("deregistered service", { service: id });
}

async function deleteCheck(state: LocalState, catalog: CatalogPort, logger: Logger, id: string): Promise<void> {
  const entry = state.checkEntries.get(id)!;
  try {
    await catalog.deregister({ Datacenter: state.datacenter, Node: state.nodeName, CheckID: id }, entry.token);
  } catch (err) {
    if (isAclError(err)) {
      entry.inSync = true;
      logger.warn("check deregistration blocked by ACLs", { check: id });
      return;
    }
    if (!isGone(err, "check")) throw err;
  }
  if (state.checkEntries.get(id) === entry && entry.deleted) state.checkEntries.delete(id);
  logger.info("deregistered check", { check: id });
}

async function syncService(state: LocalState, catalog: CatalogPort, logger: Logger, id: string): Promise<void> {
  const entry = state.serviceEntries.get(id)!;
  const version = entry.version;
  // Out-of-sync checks of the service ride along, so service and checks land in one write.
  const riders: { id: string; version: number; check: LocalCheck }[] = [];
  for (const [cid, c] of byKey(state.checkEntries)) {
    if (c.deleted || c.inSync || !c.check || c.check.ServiceID !== id) continue;
    riders.push({ id: cid, version: c.version, check: c.check });
  }
  const req: RegisterRequest = {
    ...baseRequest(state),
    ...(state.nodeInfoInSync ? { SkipNodeUpdate: true } : {}),
    Service: entry.service!,
    ...(riders.length === 1 ? { Check: riders[0]!.check } : riders.length > 1 ? { Checks: riders.map((r) => r.check) } : {}),
  };
  try {
    await catalog.register(req, entry.token);
  } catch (err) {
    if (!isAclError(err)) throw err;
    logger.warn("service registration blocked by ACLs", { service: id });
  }
  if (entry.version === version) entry.inSync = true;
  state.nodeInfoInSync = true;
  for (const r of riders) {
    const c = state.checkEntries.get(r.id);
    if (c && c.version === r.version) c.inSync = true;
  }
  logger.info("synced service", { service: id });
}

async function syncCheck(state: LocalState, catalog: CatalogPort, logger: Logger, id: string): Promise<void> {
  const entry = state.checkEntries.get(id)!;
  const version = entry.version;
  const check = entry.check!;
  const service = check.ServiceID ? state.service(check.ServiceID) : undefined;
  const req: RegisterRequest = {
    ...baseRequest(state),
    ...(state.nodeInfoInSync ? { SkipNodeUpdate: true } : {}),
    ...(service ? { Service: service } : {}),
    Check: check,
  };
  try {
    await catalog.register(req, entry.token);
  } catch (err) {
    if (!isAclError(err)) throw err;
    logger.warn("check registration blocked by ACLs", { check: id });
  }
  if (entry.version === version) entry.inSync = true;
  state.nodeInfoInSync = true;
  logger.info("synced check", { check: id });
}
