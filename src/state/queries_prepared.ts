/**
 * Prepared-query and autopilot queries (Consul 1.8 agent/consul/state/prepared_query.go and autopilot.go).
 * Values are the stored objects: read-only, never mutate them. Rendering a template needs src/connect,
 * so `preparedQueryResolve` returns the stored query and says whether it is a template.
 */
import type { AutopilotConfig, PreparedQuery } from "../model/index.ts";
import { ERR_MISSING_QUERY_ID, isUuid } from "./prepared_query_write.ts";
import { inKeyOrder, maxIndex } from "./query_common.ts";
import type { StateStore } from "./store.ts";
import { lower } from "./tables.ts";
import { INDEX, topic } from "./topics.ts";
import type { QueryResult, WatchSet } from "./watch.ts";

/** How an ID or name resolved: the stored query (a template still to be rendered), an error, or nothing. */
export type PreparedQueryResolution =
  | { readonly type: "found"; readonly query: PreparedQuery }
  | { readonly type: "error"; readonly error: string }
  | { readonly type: "not-found" };

const watchTable = (store: StateStore, ws: WatchSet) => ws.addTopic(store.hub, topic.index(INDEX.preparedQueries));

/** PreparedQueryList: every query in ID order. Index: the prepared-queries table. Watches the table. */
export function preparedQueryList(store: StateStore, ws: WatchSet): QueryResult<readonly PreparedQuery[]> {
  watchTable(store, ws);
  return { index: maxIndex(store.db, INDEX.preparedQueries), value: inKeyOrder(store.db.preparedQueries) };
}

/** PreparedQueryGet: one query by ID (case-insensitive) or null. Index: the table. Watches the table. */
export function preparedQueryGet(store: StateStore, ws: WatchSet, id: string): QueryResult<PreparedQuery | null> {
  watchTable(store, ws);
  return { index: maxIndex(store.db, INDEX.preparedQueries), value: store.db.preparedQueries.get(lower(id)) ?? null };
}

/**
 * PreparedQueryResolve: "" is "Missing Query ID"; a UUID that is a query's ID gives it (a template by ID
 * is refused); then the query with that exact name (case-insensitive); then the template whose name is the
 * longest prefix of it (case-insensitive; the "" template matches everything). Watches the table.
 */
export function preparedQueryResolve(store: StateStore, ws: WatchSet, idOrName: string): QueryResult<PreparedQueryResolution> {
  watchTable(store, ws);
  const db = store.db;
  const index = maxIndex(db, INDEX.preparedQueries);
  const found = (id: string | undefined): PreparedQueryResolution | undefined => {
    const query = id === undefined ? undefined : db.preparedQueries.get(id);
    return query ? { type: "found", query } : undefined;
  };
  if (idOrName === "") return { index, value: { type: "error", error: ERR_MISSING_QUERY_ID } };
  if (isUuid(idOrName)) {
    const byId = found(lower(idOrName));
    if (byId?.type === "found" && byId.query.Template.Type !== "") {
      return { index, value: { type: "error", error: "prepared query templates can only be resolved up by name, not by ID" } };
    }
    if (byId) return { index, value: byId };
  }
  const key = lower(idOrName);
  const byName = found(db.preparedQueryNames.get(key));
  if (byName) return { index, value: byName };
  let best: string | undefined;
  for (const prefix of db.preparedQueryTemplates.keys()) {
    if (key.startsWith(prefix) && (best === undefined || prefix.length > best.length)) best = prefix;
  }
  const byPrefix = found(best === undefined ? undefined : db.preparedQueryTemplates.get(best));
  return { index, value: byPrefix ?? { type: "not-found" } };
}

/** AutopilotConfig: the stored configuration or null. Index: the autopilot-config table. Watches it. */
export function autopilotConfigGet(store: StateStore, ws: WatchSet): QueryResult<AutopilotConfig | null> {
  ws.addTopic(store.hub, topic.index(INDEX.autopilotConfig));
  return { index: maxIndex(store.db, INDEX.autopilotConfig), value: store.db.autopilotConfig };
}
