/**
 * Network coordinates in Consul's wire shape (serf coordinate.Coordinate, structs.Coordinate,
 * structs.DatacenterMap; api/coordinate.go), and the checks Consul's Coordinate.Update makes.
 */

/** serf's default dimensionality: every coordinate Causeway stores has this many Vec components. */
export const COORDINATE_DIMENSIONALITY = 8;

/** A Vivaldi coordinate (`Coord`): components in seconds, `Error` dimensionless. */
export interface NetworkCoordinate {
  readonly Vec: readonly number[];
  readonly Error: number;
  readonly Adjustment: number;
  readonly Height: number;
}

/** One node's LAN coordinate in one network segment ("" is the default segment): structs.Coordinate. */
export interface CoordinateEntry {
  readonly Node: string;
  readonly Segment: string;
  readonly Coord: NetworkCoordinate;
}

/** The WAN coordinates of one datacenter's servers in one area (structs.DatacenterMap). */
export interface DatacenterMap {
  readonly Datacenter: string;
  /** "wan" for the WAN pool (Consul's types.AreaWAN). */
  readonly AreaID: string;
  /** Node names without the `.<dc>` suffix, as Consul's Coordinate.ListDatacenters strips it. */
  readonly Coordinates: readonly CoordinateEntry[];
}

/** Consul's AreaID of the WAN pool (types.AreaWAN). */
export const AREA_WAN = "wan";

/** Consul's refusal of a NaN or infinite component (Coordinate.Update). */
export const ERR_INVALID_COORDINATE = "invalid coordinate";
/** Consul's refusal of a coordinate of another dimensionality than the server's (Coordinate.Update). */
export const ERR_INCOMPATIBLE_COORDINATE = "incompatible coordinate";

/** False when any component is NaN or infinite (serf Coordinate.IsValid). */
export function isFiniteCoordinate(c: NetworkCoordinate): boolean {
  return c.Vec.every(Number.isFinite) && Number.isFinite(c.Error) && Number.isFinite(c.Adjustment) && Number.isFinite(c.Height);
}

/**
 * What Consul's Coordinate.Update says of a coordinate: "invalid coordinate" when a component is not a
 * finite number, "incompatible coordinate" when it does not have COORDINATE_DIMENSIONALITY components
 * (the server's own LAN coordinate's), undefined when it may be stored.
 */
export function coordinateProblem(c: NetworkCoordinate): string | undefined {
  if (!isFiniteCoordinate(c)) return ERR_INVALID_COORDINATE;
  if (c.Vec.length !== COORDINATE_DIMENSIONALITY) return ERR_INCOMPATIBLE_COORDINATE;
  return undefined;
}
