/**
 * The serf layer's network coordinates (after hashicorp/serf serf/ping_delegate.go and the coordinate
 * parts of serf.go): the local Vivaldi client, the cache of every member's latest coordinate, and the
 * PingDelegate the SWIM core calls: each ack carries our coordinate, and each direct probe acked in
 * time feeds the peer's coordinate and the measured RTT to the client.
 *
 * Pure and synchronous. Bad payloads and rejected updates are counted, never thrown (serf logs them).
 */
import type { Rng } from "../platform/index.ts";
import { COORDINATE_DEFAULTS, decodeCoordinatePayload, encodeCoordinatePayload, type Coordinate, type CoordinateConfig } from "./coordinate.ts";
import { CoordinateClient, CoordinateError } from "./coordinate_client.ts";
import type { PingDelegate } from "./memberlist.ts";
import { CodecError } from "./wire.ts";

export interface SerfCoordinateStats {
  /** serf's `coordinate_resets`: the local coordinate went invalid and restarted at the origin. */
  readonly resets: number;
  /** Observations applied to the local coordinate. */
  readonly updates: number;
  /** Observations the client refused (incompatible or invalid coordinate, RTT out of range): serf's coordinate.rejected. */
  readonly rejected: number;
  /** Ack payloads that did not decode or had another ping version. */
  readonly badPayloads: number;
  /** Direct probes acked without a payload (older nodes, or coordinates disabled there). */
  readonly withoutPayload: number;
}

export class SerfCoordinates implements PingDelegate {
  readonly client: CoordinateClient;
  private readonly cache = new Map<string, Coordinate>();
  private payload: Uint8Array | undefined;
  private readonly counters = { updates: 0, rejected: 0, badPayloads: 0, withoutPayload: 0 };

  /** `name`: the local node, cached with its own coordinate (serf does so callers can look themselves up). */
  constructor(private readonly name: string, rng: Rng, config: CoordinateConfig = COORDINATE_DEFAULTS) {
    this.client = new CoordinateClient(config, rng);
    this.cache.set(name, this.client.coordinate);
  }

  /** serf AckPayload: the encoded local coordinate (re-encoded only after it moved). */
  ackPayload(): Uint8Array {
    this.payload ??= encodeCoordinatePayload(this.client.coordinate);
    return this.payload;
  }

  /** serf NotifyPingComplete: update the local coordinate and cache the peer's and ours. */
  notifyPingComplete(node: string, rttMs: number, payload: Uint8Array): void {
    if (payload.length === 0) {
      this.counters.withoutPayload++;
      return;
    }
    let other: Coordinate;
    try {
      other = decodeCoordinatePayload(payload);
    } catch (e) {
      if (!(e instanceof CodecError)) throw e;
      this.counters.badPayloads++;
      return;
    }
    try {
      this.client.update(node, other, rttMs);
    } catch (e) {
      if (!(e instanceof CoordinateError)) throw e;
      this.counters.rejected++;
      return;
    }
    this.counters.updates++;
    this.payload = undefined;
    this.cache.set(node, other);
    this.cache.set(this.name, this.client.coordinate);
  }

  /** The local coordinate (serf GetCoordinate). */
  local(): Coordinate {
    return this.client.coordinate;
  }

  /** The latest coordinate heard from `node`, or ours for the local name (serf GetCachedCoordinate). */
  cached(node: string): Coordinate | undefined {
    return this.cache.get(node);
  }

  /** Every cached coordinate, self included, in name order. A copy. */
  all(): Map<string, Coordinate> {
    return new Map([...this.cache].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  }

  /** A member was reaped: drop its latency history and cached coordinate (serf eraseNode). */
  forget(node: string): void {
    if (node === this.name) return;
    this.client.forgetNode(node);
    this.cache.delete(node);
  }

  stats(): SerfCoordinateStats {
    return { resets: this.client.stats().resets, ...this.counters };
  }
}
