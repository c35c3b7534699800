/**
 * Sorting read results by network distance from a node (Consul 1.8 agent/consul/rtt.go
 * sortNodesByDistanceFrom, lib.CoordinateSet.Intersect and lib.ComputeDistance). Pure functions over
 * coordinate lookups; `storeCoordinates` reads them from the state store without watching them (Consul
 * sorts with a nil watch set: a coordinate change alone does not wake a blocking read).
 */
import { distanceMs } from "../membership/index.ts";
import type { CoordinateEntry, NetworkCoordinate } from "../model/index.ts";
import type { StateStore } from "../state/index.ts";

/** A node's coordinates, one per segment ([] when it has none). */
export type CoordinatesOf = (node: string) => readonly CoordinateEntry[];

/**
 * Consul's CoordinateSet.Intersect: the coordinates of the segment two nodes share. The default segment,
 * unless a side has exactly one coordinate, whose segment then counts (the other side's single one last).
 */
export function intersect(a: readonly CoordinateEntry[], b: readonly CoordinateEntry[]): [NetworkCoordinate | undefined, NetworkCoordinate | undefined] {
  let segment = "";
  if (a.length === 1) segment = a[0]!.Segment;
  if (b.length === 1) segment = b[0]!.Segment;
  const of = (xs: readonly CoordinateEntry[]) => xs.find((c) => c.Segment === segment)?.Coord;
  return [of(a), of(b)];
}

/** Consul's ComputeDistance in ms: Infinity when either coordinate is missing (or they cannot be compared). */
export function computeDistanceMs(a: NetworkCoordinate | undefined, b: NetworkCoordinate | undefined): number {
  if (!a || !b || a.Vec.length !== b.Vec.length) return Infinity;
  return distanceMs(a, b);
}

/**
 * Distances in ms from `source` to other nodes, or undefined when `source` has no coordinate (then
 * nothing is sorted). A node without a coordinate in the shared segment is at Infinity.
 */
export function distancesFrom(coordinatesOf: CoordinatesOf, source: string): ((node: string) => number) | undefined {
  const from = coordinatesOf(source);
  if (from.length === 0) return undefined;
  return (node) => computeDistanceMs(...intersect(from, coordinatesOf(node)));
}

/**
 * Consul's sortNodesByDistanceFrom: `items` stably sorted by the distance of their node from `source`,
 * nodes without a coordinate last in their given order; unchanged (a copy) when `source` is "" or has no
 * coordinate.
 */
export function sortByDistanceFrom<T>(items: readonly T[], nodeOf: (item: T) => string, source: string, coordinatesOf: CoordinatesOf): T[] {
  const distance = source === "" ? undefined : distancesFrom(coordinatesOf, source);
  if (!distance) return [...items];
  const memo = new Map<string, number>();
  const d = (node: string) => {
    let v = memo.get(node);
    if (v === undefined) memo.set(node, (v = distance(node)));
    return v;
  };
  return items
    .map((item, i) => ({ item, i, d: d(nodeOf(item)) }))
    .sort((x, y) => (x.d === y.d ? x.i - y.i : x.d < y.d ? -1 : 1))
    .map((x) => x.item);
}

/** The coordinates the state store holds for a node (case-insensitive), unwatched. */
export function storeCoordinates(store: StateStore): CoordinatesOf {
  return (node) => [...(store.db.coordinates.get(node.toLowerCase())?.values() ?? [])];
}
