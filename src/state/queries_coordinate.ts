/**
 * Coordinate queries (Consul 1.8 agent/consul/state/coordinate.go). Values are the stored objects:
 * read-only, never mutate them.
 */
import type { CoordinateEntry } from "../model/index.ts";
import { inKeyOrder, maxIndex } from "./query_common.ts";
import type { StateStore } from "./store.ts";
import { lower } from "./tables.ts";
import { INDEX, topic } from "./topics.ts";
import type { QueryResult, WatchSet } from "./watch.ts";

const watchTable = (store: StateStore, ws: WatchSet) => ws.addTopic(store.hub, topic.index(INDEX.coordinates));

/**
 * Coordinates: every stored coordinate, by lowercase node name then lowercase segment (memdb's "id"
 * index order). Index: the coordinates table. Watches the table.
 */
export function coordinateList(store: StateStore, ws: WatchSet): QueryResult<readonly CoordinateEntry[]> {
  watchTable(store, ws);
  return { index: maxIndex(store.db, INDEX.coordinates), value: inKeyOrder(store.db.coordinates).flatMap((m) => inKeyOrder(m)) };
}

/**
 * Coordinate: one node's coordinates (node matched case-insensitively), one per segment, by lowercase
 * segment; empty when it has none. Index: the coordinates table. Watches the table.
 */
export function coordinateNode(store: StateStore, ws: WatchSet, node: string): QueryResult<readonly CoordinateEntry[]> {
  watchTable(store, ws);
  return { index: maxIndex(store.db, INDEX.coordinates), value: inKeyOrder(store.db.coordinates.get(lower(node))) };
}
