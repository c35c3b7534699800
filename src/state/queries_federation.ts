/**
 * Federation-state queries (Consul 1.8 agent/consul/state/federation_state.go FederationStateGet and
 * FederationStateList). Both report and watch the federation-states table index, so any write to the
 * table wakes a blocked reader. Values are the stored objects: read-only, never mutate them.
 */
import type { FederationState } from "../model/index.ts";
import { inKeyOrder, maxIndex } from "./query_common.ts";
import type { StateStore } from "./store.ts";
import { lower } from "./tables.ts";
import { INDEX, topic } from "./topics.ts";
import type { QueryResult, WatchSet } from "./watch.ts";

const watchTable = (store: StateStore, ws: WatchSet) => ws.addTopic(store.hub, topic.index(INDEX.federationStates));

/** FederationStateGet: one datacenter's state (case-insensitive) or null. Index: the table. */
export function federationStateGet(store: StateStore, ws: WatchSet, datacenter: string): QueryResult<FederationState | null> {
  watchTable(store, ws);
  return { index: maxIndex(store.db, INDEX.federationStates), value: store.db.federationStates.get(lower(datacenter)) ?? null };
}

/** FederationStateList: every state in lowercase-datacenter order (memdb's id index). Index: the table. */
export function federationStateList(store: StateStore, ws: WatchSet): QueryResult<readonly FederationState[]> {
  watchTable(store, ws);
  return { index: maxIndex(store.db, INDEX.federationStates), value: inKeyOrder(store.db.federationStates) };
}
