/**
 * Coordinate writes inside a Tx (Consul's CoordinateBatchUpdate and the coordinate part of deleteNodeTxn,
 * agent/consul/state/coordinate.go and catalog.go).
 */
import { isFiniteCoordinate, type CoordinateEntry } from "../model/index.ts";
import { lower } from "./tables.ts";
import { INDEX } from "./topics.ts";
import type { Tx } from "./tx.ts";

/**
 * Upserts a batch of coordinates. As in Consul, an update with a NaN or infinite component is skipped,
 * and so is one for a node the catalog does not have (it fixes itself with that node's next update);
 * the coordinates index moves to this command's Raft index even when every update was skipped.
 */
export function coordinateBatchUpdate(tx: Tx, updates: readonly CoordinateEntry[]): void {
  for (const u of updates) {
    if (!isFiniteCoordinate(u.Coord)) continue;
    if (!tx.db.nodes.has(lower(u.Node))) continue;
    tx.putCoordinate({ Node: u.Node, Segment: u.Segment, Coord: u.Coord });
  }
  tx.bumpIndex(INDEX.coordinates);
}

/** Deletes every coordinate of a node (deleteNodeTxn); the index moves only when one existed. */
export function deleteNodeCoordinates(tx: Tx, nk: string): void {
  const segments = tx.db.coordinates.get(nk);
  if (!segments) return;
  for (const sk of [...segments.keys()]) tx.deleteCoordinate(nk, sk);
  tx.bumpIndex(INDEX.coordinates);
}
