/**
 * Runs the reads of the replicated state (src/model/reads.ts) against the state store on the server
 * that serves them. Every read records what it depended on in `ws`, so a blocking read wakes on exactly that.
 */
import {
  catalogNodes, catalogNodeServices, catalogServiceNodes, catalogServices, healthChecksInState, healthNodeChecks,
  healthServiceChecks, healthServiceNodes, kvGet, kvKeys, kvList, kvReadTxn, sessionGet, sessionList, sessionsForNode,
  caRoots, configEntryGet, configEntryList, intentionGet, intentionList,
  type QueryResult, type StateStore, type WatchSet,
} from "../state/index.ts";
import { trustDomain } from "../connect/index.ts";
import type { CAConfiguration, ReadQuery } from "../model/index.ts";

/** The CA configuration as the API shows it: the root's private key never leaves the servers. */
function redactCaConfig(c: CAConfiguration): CAConfiguration {
  const { PrivateKey: _secret, ...config } = c.Config;
  return { ...c, Config: config };
}

/** What a read may need beyond the store: the serving server's Raft term (for snapshots). */
export interface ReadContext {
  term(): number;
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
      return catalogNodes(store, ws, { nodeMeta: q.nodeMeta });
    case "catalog-services":
      return catalogServices(store, ws, { nodeMeta: q.nodeMeta });
    case "catalog-service-nodes":
      return catalogServiceNodes(store, ws, q.service, { tags: q.tags, nodeMeta: q.nodeMeta, connect: q.connect });
    case "catalog-node-services":
      return catalogNodeServices(store, ws, q.node);
    case "health-node-checks":
      return healthNodeChecks(store, ws, q.node);
    case "health-service-checks":
      return healthServiceChecks(store, ws, q.service, { nodeMeta: q.nodeMeta });
    case "health-state":
      return healthChecksInState(store, ws, q.state, { nodeMeta: q.nodeMeta });
    case "health-service-nodes":
      return healthServiceNodes(store, ws, q.service, { tags: q.tags, nodeMeta: q.nodeMeta, passingOnly: q.passingOnly, connect: q.connect });
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
    case "ca-config": {
      const { index, value } = caRoots(store, ws);
      return { index, value: value.config ? redactCaConfig(value.config) : null };
    }
    case "snapshot": {
      const index = store.lastIndex();
      return { index, value: { state: store.snapshot(), index, term: ctx.term() } };
    }
    default:
      throw new RangeError(`unknown read ${JSON.stringify((q as { type: unknown }).type)}`);
  }
}
