/**
 * A node's estimated round-trip times to the other nodes, from the LAN network coordinates
 * (/v1/coordinate/nodes), computed as Consul and serf do (serf Coordinate.DistanceTo: membership's
 * distanceMs). Only coordinates of the node's own network segment compare; a coordinate of another
 * dimensionality is left out (serf refuses to compare them). Pure.
 */
import { distanceMs, isCompatible } from "../membership/index.ts";
import type { CoordinateEntry } from "../model/index.ts";

export interface RttRow {
  readonly node: string;
  /** Estimated round-trip time in milliseconds. */
  readonly ms: number;
}

export type RoundTripTimes =
  /** The node has no coordinate yet (it has not been pinged, or coordinates are new). */
  | { readonly kind: "no-coordinate" }
  /** Other nodes by distance, nearest first (ties by name), with their minimum, median and maximum. */
  | { readonly kind: "estimates"; readonly segment: string; readonly rows: readonly RttRow[]; readonly stats?: { readonly min: number; readonly median: number; readonly max: number } };

/** `node`'s distances to every other node with a coordinate in its segment (its first listed one). */
export function roundTripTimes(entries: readonly CoordinateEntry[], node: string): RoundTripTimes {
  const self = entries.find((e) => e.Node === node);
  if (!self) return { kind: "no-coordinate" };
  const rows = entries
    .filter((e) => e.Node !== node && e.Segment === self.Segment && isCompatible(e.Coord, self.Coord))
    .map((e) => ({ node: e.Node, ms: distanceMs(self.Coord, e.Coord) }))
    .sort((a, b) => a.ms - b.ms || (a.node < b.node ? -1 : a.node > b.node ? 1 : 0));
  if (rows.length === 0) return { kind: "estimates", segment: self.Segment, rows };
  const mid = Math.floor(rows.length / 2);
  const median = rows.length % 2 === 1 ? rows[mid]!.ms : (rows[mid - 1]!.ms + rows[mid]!.ms) / 2;
  return { kind: "estimates", segment: self.Segment, rows, stats: { min: rows[0]!.ms, median, max: rows[rows.length - 1]!.ms } };
}

/** "0.42 ms", "12.30 ms". */
export function formatMs(ms: number): string {
  return `${ms.toFixed(2)} ms`;
}
