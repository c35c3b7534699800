/**
 * Vivaldi network coordinates (after hashicorp/serf coordinate/coordinate.go and config.go): the
 * coordinate value, its configuration, distance and force arithmetic, and the validity checks.
 * Pure functions; randomness (the direction for coincident points) comes from the injected Rng.
 *
 * Units follow serf and Consul's API: every component is in seconds (Error is dimensionless).
 * Durations at this module's edges are milliseconds, the rest of Causeway's unit (`distanceMs`).
 */
import type { Rng } from "../platform/index.ts";
import { CodecError, Reader, Writer } from "./wire.ts";

/**
 * A network coordinate in Consul's wire shape (`Coord` in /v1/coordinate): a Euclidean vector, a
 * confidence (`Error`), an adjustment offset learned from recent samples, and a non-Euclidean height
 * that models a node's access link. Frozen values; never mutated after construction.
 */
export interface Coordinate {
  readonly Vec: readonly number[];
  readonly Error: number;
  readonly Adjustment: number;
  readonly Height: number;
}

/**
 * Tuning of the Vivaldi client (serf coordinate.Config). References: Dabek et al., "Vivaldi" (SIGCOMM
 * 2004) for CE/CC; Ledlie et al., "Network Coordinates in the Wild" (NSDI 2007) for 8 dimensions plus
 * height, the latency filter and gravity; Lee et al. (IEEE/ACM ToN 2010) for the adjustment window.
 */
export interface CoordinateConfig {
  /** Euclidean dimensions (8, plus the height). Must be > 0. */
  readonly dimensionality: number;
  /** Error of a fresh coordinate and the upper bound of Error. */
  readonly vivaldiErrorMax: number;
  /** Largest effect one observation has on the confidence. */
  readonly vivaldiCE: number;
  /** Largest effect one observation has on the position. */
  readonly vivaldiCC: number;
  /** Samples kept for the adjustment term; 0 disables it. */
  readonly adjustmentWindowSize: number;
  /** Smallest height (seconds); also the height of a fresh coordinate. */
  readonly heightMin: number;
  /** RTT samples kept per peer; the median of them feeds Vivaldi. */
  readonly latencyFilterSize: number;
  /** Strength of the pull towards the origin that fights drift (larger is weaker). */
  readonly gravityRho: number;
}

/** serf coordinate.DefaultConfig. */
export const COORDINATE_DEFAULTS: CoordinateConfig = Object.freeze({
  dimensionality: 8,
  vivaldiErrorMax: 1.5,
  vivaldiCE: 0.25,
  vivaldiCC: 0.25,
  adjustmentWindowSize: 20,
  heightMin: 10e-6,
  latencyFilterSize: 3,
  gravityRho: 150,
});

/** Below this (seconds) two positions coincide and a total error counts as zero (serf zeroThreshold). */
export const ZERO_THRESHOLD = 1e-6;

/** Operating on coordinates of different dimensionality (serf DimensionalityConflictError, which panics). */
export class DimensionalityConflictError extends Error {
  constructor() {
    super("coordinate dimensionality does not match");
    this.name = "DimensionalityConflictError";
  }
}

/** Builds a frozen coordinate. */
export function coordinate(vec: readonly number[], error: number, adjustment: number, height: number): Coordinate {
  return Object.freeze({ Vec: Object.freeze([...vec]), Error: error, Adjustment: adjustment, Height: height });
}

/** A coordinate at the origin with maximal error and minimal height (serf NewCoordinate). */
export function newCoordinate(config: CoordinateConfig): Coordinate {
  return coordinate(new Array<number>(config.dimensionality).fill(0), config.vivaldiErrorMax, 0, config.heightMin);
}

/** False when any component is NaN or infinite (serf IsValid). */
export function isValidCoordinate(c: Coordinate): boolean {
  return c.Vec.every(Number.isFinite) && Number.isFinite(c.Error) && Number.isFinite(c.Adjustment) && Number.isFinite(c.Height);
}

/** Same dimensionality, so the arithmetic below cannot fail (serf IsCompatibleWith). */
export function isCompatible(a: Coordinate, b: Coordinate): boolean {
  return a.Vec.length === b.Vec.length;
}

function check(a: Coordinate, b: Coordinate): void {
  if (!isCompatible(a, b)) throw new DimensionalityConflictError();
}

function magnitude(v: readonly number[]): number {
  let sum = 0;
  for (const x of v) sum += x * x;
  return Math.sqrt(sum);
}

/** Euclidean distance plus both heights, in seconds, without the adjustments (serf rawDistanceTo). */
export function rawDistance(a: Coordinate, b: Coordinate): number {
  check(a, b);
  return magnitude(a.Vec.map((x, i) => x - b.Vec[i]!)) + a.Height + b.Height;
}

/**
 * Estimated round-trip time between two coordinates in ms (serf DistanceTo): the raw distance plus both
 * adjustments, unless that sum is not positive, in which case the adjustments are ignored.
 * Throws DimensionalityConflictError for coordinates of different dimensionality.
 */
export function distanceMs(a: Coordinate, b: Coordinate): number {
  const raw = rawDistance(a, b);
  const adjusted = raw + a.Adjustment + b.Adjustment;
  return (adjusted > 0 ? adjusted : raw) * 1000;
}

/**
 * A unit vector pointing from `to` at `from` and the distance between them (serf unitVectorAt). When the
 * points coincide, a random direction from `rng` with magnitude 0; if even that is degenerate, the
 * first axis.
 */
export function unitVectorAt(rng: Rng, from: readonly number[], to: readonly number[]): { unit: number[]; mag: number } {
  const d = from.map((x, i) => x - to[i]!);
  const mag = magnitude(d);
  if (mag > ZERO_THRESHOLD) return { unit: d.map((x) => x / mag), mag };
  const r = d.map(() => rng.next() - 0.5);
  const rmag = magnitude(r);
  if (rmag > ZERO_THRESHOLD) return { unit: r.map((x) => x / rmag), mag: 0 };
  return { unit: d.map((_, i) => (i === 0 ? 1 : 0)), mag: 0 };
}

/**
 * Moves `c` by `force` seconds away from `other` (towards it when negative), and grows or shrinks the
 * height in proportion (serf ApplyForce); the height never drops below `heightMin`. The height only
 * moves when the points are apart. Throws DimensionalityConflictError.
 */
export function applyForce(config: CoordinateConfig, rng: Rng, force: number, c: Coordinate, other: Coordinate): Coordinate {
  check(c, other);
  const { unit, mag } = unitVectorAt(rng, c.Vec, other.Vec);
  let height = c.Height;
  if (mag > ZERO_THRESHOLD) height = Math.max((c.Height + other.Height) * force / mag + c.Height, config.heightMin);
  return coordinate(c.Vec.map((x, i) => x + unit[i]! * force), c.Error, c.Adjustment, height);
}

/** serf PingVersion: the first byte of a coordinate ack payload. */
export const PING_VERSION = 1;

/**
 * The ack payload carrying a coordinate (serf pingDelegate.AckPayload, in Causeway's own encoding rather
 * than msgpack): u8 PING_VERSION, u8 dimensionality, then Vec, Error, Adjustment and Height as
 * big-endian float64. 8 dimensions take 90 bytes.
 */
export function encodeCoordinatePayload(c: Coordinate): Uint8Array {
  if (c.Vec.length > 255) throw new RangeError(`coordinate has ${c.Vec.length} dimensions, at most 255`);
  const w = new Writer().u8(PING_VERSION).u8(c.Vec.length);
  for (const x of c.Vec) w.f64(x);
  return w.f64(c.Error).f64(c.Adjustment).f64(c.Height).finish();
}

/**
 * Decodes `encodeCoordinatePayload`'s output. Throws CodecError for another version, truncation or
 * trailing bytes; NaN or infinite components decode (the client rejects them as invalid).
 */
export function decodeCoordinatePayload(b: Uint8Array): Coordinate {
  const r = new Reader(b, "coordinate payload");
  const version = r.u8();
  if (version !== PING_VERSION) throw new CodecError(`coordinate payload: unsupported ping version ${version}`);
  const vec: number[] = [];
  for (let n = r.u8(); n > 0; n--) vec.push(r.f64());
  const c = coordinate(vec, r.f64(), r.f64(), r.f64());
  r.end();
  return c;
}
