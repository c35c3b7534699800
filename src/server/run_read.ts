/**
 * Runs the reads of the replicated state (src/model/reads.ts) against the state store on the server
 * that serves them. Every read records what it depended on in `ws`, so a blocking read wakes on exactly that.
 */
import {
  catalogNodes, catalogNodeServices, catalogServiceNodes, catalogServiceNodesByAddress, catalogServices, healthChecksInState, healthNodeChecks,
  healthServiceChecks, healthServiceNodes, healthServicesOfKind, uiNodes, uiServiceSummaries, kvGet, kvKeys, kvList, kvReadTxn, sessionGet, sessionList, sessionsForNode,
  caRoots, configEntryGet, configEntryList, intentionGet, intentionList, preparedQueryGet, preparedQueryList, autopilotConfigGet,
  coordinateList, coordinateNode, federationStateGet, federationStateList, runAclAuthRead, type QueryResult, type StateStore, type WatchSet,
} from "../state/index.ts";
import { trustDomain } from "../connect/index.ts";
import { meshGatewaysByDatacenter, type CAConfiguration, type ReadQuery } from "../model/index.ts";
import { distancesFrom, sortByDistanceFrom, storeCoordinates } from "./near.ts";
import { runAclRead } from "./run_read_acl.ts";
import { executePreparedQueryRead, executeRemoteRead, resolvePreparedQuery, type PreparedQueryContext } from "./prepared_query.ts";

/** The CA configuration as the API shows it: the root's private key never leaves the servers. */
function redactCaConfig(c: CAConfiguration): CAConfiguration {
  const { PrivateKey: _secret, ...config } = c.Config;
  return { ...c, Config: config };
}

/**
 * What a read may need beyond the store: the serving server's Raft term (for snapshots), its datacenter
 * (prepared-query executions stamp their results with it) and randomness for their shuffle (without it
 * results keep the store's order). Distances for `near` come from the store's coordinates unless
 * `rttFrom` is given.
 */
export interface ReadContext extends PreparedQueryContext {
  term(): number;
  /** Wall-clock milliseconds (token expiry). */
  now(): number;
}

function preparedQueryContext(store: StateStore, ctx: ReadContext): PreparedQueryContext {
  return { datacenter: ctx.datacenter, random: ctx.random, rttFrom: ctx.rttFrom ?? ((node) => distancesFrom(storeCoordinates(store), node)) };
}

/** A read's result sorted by distance from `near` (Consul's sortNodesByDistanceFrom); as it is without `near`. */
function nearSorted<T>(store: StateStore, near: string | undefined, r: QueryResult<readonly T[]>, nodeOf: (x: T) => string): QueryResult<readonly T[]> {
  if (!near) return r;
  return { index: r.index, value: sortByDistanceFrom(r.value, nodeOf, near, storeCoordinates(store)) };
}

export function runRead(store: StateStore, ws: WatchSet, q: ReadQuery, ctx: ReadContext): QueryResult<unknown> {
  switch (q.type) {
    case "kv-get":
      return kvGet(store, ws, q.key);
    case "kv-list":
      return kvList(store, ws, q.prefix);
    case "kv-keys":
      return kvKeys(store, ws, q.prefix, q.separator);
    case "catalog-nodes":
      return nearSorted(store, q.near, catalogNodes(store, ws, { nodeMeta: q.nodeMeta }), (n) => n.Node);
    case "catalog-services":
      return catalogServices(store, ws, { nodeMeta: q.nodeMeta });
    case "catalog-service-nodes":
      return nearSorted(store, q.near, catalogServiceNodes(store, ws, q.service, { tags: q.tags, nodeMeta: q.nodeMeta, connect: q.connect }), (n) => n.Node);
    case "catalog-node-services":
      return catalogNodeServices(store, ws, q.node);
    case "catalog-service-nodes-by-address":
      return catalogServiceNodesByAddress(store, ws, q.address);
    case "health-node-checks":
      return healthNodeChecks(store, ws, q.node);
    case "health-service-checks":
      return nearSorted(store, q.near, healthServiceChecks(store, ws, q.service, { nodeMeta: q.nodeMeta }), (c) => c.Node);
    case "health-state":
      return nearSorted(store, q.near, healthChecksInState(store, ws, q.state, { nodeMeta: q.nodeMeta }), (c) => c.Node);
    case "health-service-nodes":
      return nearSorted(
        store, q.near, healthServiceNodes(store, ws, q.service, { tags: q.tags, nodeMeta: q.nodeMeta, passingOnly: q.passingOnly, connect: q.connect }), (n) => n.Node.Node,
      );
    case "health-service-kind-nodes":
      return healthServicesOfKind(store, ws, q.kind);
    case "ui-services":
      return uiServiceSummaries(store, ws);
    case "ui-nodes":
      return uiNodes(store, ws);
    case "session-info": {
      const r = sessionGet(store, ws, q.id);
      return { index: r.index, value: r.value ? [r.value] : [] };
    }
    case "session-list":
      return sessionList(store, ws);
    case "session-node":
      return sessionsForNode(store, ws, q.node);
    case "txn-read": {
      const { index, Results, Errors } = kvReadTxn(store, q.ops);
      return { index, value: { Results, Errors } };
    }
    case "config-entry-get":
      return configEntryGet(store, ws, q.kind, q.name);
    case "config-entry-list":
      return configEntryList(store, ws, q.kind);
    case "intention-list":
      return intentionList(store, ws);
    case "intention-get":
      return intentionGet(store, ws, q.id);
    case "ca-roots": {
      const { index, value } = caRoots(store, ws);
      const active = value.roots.find((r) => r.Active);
      return {
        index,
        value: { roots: value.roots, trustDomain: value.config ? trustDomain(value.config.ClusterID) : "", activeRootId: active?.ID ?? "" },
      };
    }
    case "acl-token-get":
    case "acl-token-self":
    case "acl-token-list":
    case "acl-policy-get":
    case "acl-policy-list":
    case "acl-role-get":
    case "acl-role-list":
    case "acl-write-context":
    case "acl-bootstrap-state":
    case "acl-token-resolve":
      return runAclRead(store, ws, q, ctx.now());
    case "auth-method-get":
    case "auth-method-list":
    case "binding-rule-get":
    case "binding-rule-list":
    case "auth-method-login":
      return runAclAuthRead(store, ws, q);
    case "ca-config": {
      const { index, value } = caRoots(store, ws);
      return { index, value: value.config ? redactCaConfig(value.config) : null };
    }
    case "prepared-query-list":
      return preparedQueryList(store, ws);
    case "prepared-query-get":
      return preparedQueryGet(store, ws, q.id);
    case "prepared-query-explain":
      return resolvePreparedQuery(store, ws, q.idOrName, q.agent);
    case "prepared-query-execute":
      return executePreparedQueryRead(store, ws, q, preparedQueryContext(store, ctx));
    case "prepared-query-execute-remote":
      return executeRemoteRead(store, ws, q, preparedQueryContext(store, ctx));
    case "coordinate-nodes":
      return coordinateList(store, ws);
    case "coordinate-node":
      return coordinateNode(store, ws, q.node);
    case "autopilot-config":
      return autopilotConfigGet(store, ws);
    case "federation-state-get":
      return federationStateGet(store, ws, q.datacenter);
    case "federation-state-list":
      return federationStateList(store, ws);
    case "federation-state-mesh-gateways": {
      const { index, value } = federationStateList(store, ws);
      return { index, value: meshGatewaysByDatacenter(value) };
    }
    case "snapshot":
      // Encoded in slices by the backend's query (replicated_state.ts), never as one blocking step.
      throw new RangeError("the snapshot read is served by the state backend, not by runRead");
    case "acl-replication-status":
      throw new RangeError("the ACL replication status is served by the state backend, not by runRead");
    default:
      throw new RangeError(`unknown read ${JSON.stringify((q as { type: unknown }).type)}`);
  }
}
