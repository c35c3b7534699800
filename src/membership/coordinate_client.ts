/**
 * The Vivaldi client (after hashicorp/serf coordinate/client.go): keeps the local node's coordinate and
 * moves it as round-trip times to other nodes, with their coordinates, are observed. Each observation
 * goes through a per-peer moving median (the latency filter), then the Vivaldi step, the adjustment
 * window and a little gravity towards the origin. A result with NaN or infinite components resets the
 * coordinate to the origin and counts in `stats().resets`.
 *
 * Pure and synchronous; randomness comes from the injected Rng. Durations are ms at the API.
 */
import type { Rng } from "../platform/index.ts";
import {
  ZERO_THRESHOLD, applyForce, coordinate, distanceMs, isCompatible, isValidCoordinate, newCoordinate, rawDistance,
  type Coordinate, type CoordinateConfig,
} from "./coordinate.ts";

/** A rejected observation or coordinate; the message is serf's. The client's state is unchanged. */
export class CoordinateError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "CoordinateError";
  }
}

/** serf's bound on an RTT sample: 10 s. */
export const MAX_RTT_MS = 10_000;

export interface CoordinateClientStats {
  /** Times the coordinate was reset because an update made it invalid. */
  readonly resets: number;
}

export class CoordinateClient {
  private coord: Coordinate;
  private readonly origin: Coordinate;
  private readonly adjustmentSamples: number[];
  private adjustmentIndex = 0;
  /** Latest RTT samples (seconds) per peer, oldest first. */
  private readonly latencySamples = new Map<string, number[]>();
  private resets = 0;

  /** Throws RangeError when the dimensionality is not a positive integer (serf: "dimensionality must be >0"). */
  constructor(readonly config: CoordinateConfig, private readonly rng: Rng) {
    if (!Number.isInteger(config.dimensionality) || config.dimensionality <= 0) throw new RangeError("coordinate config: dimensionality must be >0");
    if (!Number.isInteger(config.adjustmentWindowSize) || config.adjustmentWindowSize < 0) throw new RangeError("coordinate config: adjustmentWindowSize must be >= 0");
    if (!Number.isInteger(config.latencyFilterSize) || config.latencyFilterSize < 1) throw new RangeError("coordinate config: latencyFilterSize must be >= 1");
    this.coord = newCoordinate(config);
    this.origin = newCoordinate(config);
    this.adjustmentSamples = new Array<number>(config.adjustmentWindowSize).fill(0);
  }

  /** The current local coordinate (a frozen value). */
  get coordinate(): Coordinate {
    return this.coord;
  }

  /** Forces the local coordinate (serf SetCoordinate). Throws CoordinateError when incompatible or invalid. */
  setCoordinate(c: Coordinate): void {
    this.check(c);
    this.coord = coordinate(c.Vec, c.Error, c.Adjustment, c.Height);
  }

  /** Drops the latency samples kept for `node` (serf ForgetNode; called when a member is reaped). */
  forgetNode(node: string): void {
    this.latencySamples.delete(node);
  }

  stats(): CoordinateClientStats {
    return { resets: this.resets };
  }

  /** Estimated RTT in ms from the local coordinate to `other`. Throws DimensionalityConflictError. */
  distanceTo(other: Coordinate): number {
    return distanceMs(this.coord, other);
  }

  /**
   * Takes one observation: `rttMs` to `node`, whose coordinate is `other` (serf Client.Update). Returns the
   * new local coordinate. Throws CoordinateError (nothing changes) when `other` is incompatible or invalid
   * or the RTT is outside [0, 10 s]. A zero RTT is accepted (coarse clocks; consul#3789).
   */
  update(node: string, other: Coordinate, rttMs: number): Coordinate {
    this.check(other);
    if (!(rttMs >= 0 && rttMs <= MAX_RTT_MS)) {
      throw new CoordinateError(`round trip time not in valid range, duration ${rttMs}ms is not a positive value less than ${MAX_RTT_MS / 1000}s`);
    }
    const rtt = this.latencyFilter(node, rttMs / 1000);
    this.updateVivaldi(other, rtt);
    this.updateAdjustment(other, rtt);
    this.updateGravity();
    if (!isValidCoordinate(this.coord)) {
      this.resets++;
      this.coord = newCoordinate(this.config);
    }
    return this.coord;
  }

  /** The moving median of the last `latencyFilterSize` samples for `node`, this one included (seconds). */
  latencyFilter(node: string, rttSeconds: number): number {
    const samples = this.latencySamples.get(node) ?? [];
    samples.push(rttSeconds);
    if (samples.length > this.config.latencyFilterSize) samples.shift();
    this.latencySamples.set(node, samples);
    const sorted = [...samples].sort((a, b) => a - b);
    return sorted[Math.floor(sorted.length / 2)]!;
  }

  private check(c: Coordinate): void {
    if (!isCompatible(this.coord, c)) throw new CoordinateError("dimensions aren't compatible");
    if (!isValidCoordinate(c)) throw new CoordinateError("coordinate is invalid");
  }

  /** Vivaldi (Dabek et al., figure 3): weight by relative confidence, move along the error. */
  private updateVivaldi(other: Coordinate, rttSeconds: number): void {
    const cfg = this.config;
    const rtt = Math.max(rttSeconds, ZERO_THRESHOLD);
    const dist = distanceMs(this.coord, other) / 1000;
    const wrongness = Math.abs(dist - rtt) / rtt;
    const totalError = Math.max(this.coord.Error + other.Error, ZERO_THRESHOLD);
    const weight = this.coord.Error / totalError;
    const error = Math.min(cfg.vivaldiCE * weight * wrongness + this.coord.Error * (1 - cfg.vivaldiCE * weight), cfg.vivaldiErrorMax);
    const force = cfg.vivaldiCC * weight * (rtt - dist);
    const moved = applyForce(cfg, this.rng, force, this.coord, other);
    this.coord = coordinate(moved.Vec, error, moved.Adjustment, moved.Height);
  }

  /** Adjustment: half the mean of the last window's (rtt - raw distance) samples. */
  private updateAdjustment(other: Coordinate, rttSeconds: number): void {
    const size = this.config.adjustmentWindowSize;
    if (size === 0) return;
    this.adjustmentSamples[this.adjustmentIndex] = rttSeconds - rawDistance(this.coord, other);
    this.adjustmentIndex = (this.adjustmentIndex + 1) % size;
    const sum = this.adjustmentSamples.reduce((s, x) => s + x, 0);
    this.coord = coordinate(this.coord.Vec, this.coord.Error, sum / (2 * size), this.coord.Height);
  }

  /** A pull towards the origin growing with the square of the distance (Ledlie et al.). */
  private updateGravity(): void {
    const dist = distanceMs(this.origin, this.coord) / 1000;
    const force = -1 * Math.pow(dist / this.config.gravityRho, 2);
    this.coord = applyForce(this.config, this.rng, force, this.coord, this.origin);
  }
}
