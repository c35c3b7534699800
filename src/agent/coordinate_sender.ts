/**
 * The agent's periodic send of its LAN coordinate to the catalog (Consul 1.8 agent/agent.go
 * sendCoordinate): wait `rateScaledIntervalMs` for the current cluster size plus a random stagger of up
 * to as long again, then send the coordinate (Coordinate.Update, which the servers batch); a failure is
 * logged and the next round tries again. With coordinates disabled the agent does not start a sender;
 * while the local coordinate is unknown a round sends nothing.
 */
import type { CoordinateEntry, NetworkCoordinate } from "../model/index.ts";
import type { Cancel, Clock, Logger, Rng } from "../platform/index.ts";

/** Consul's sync_coordinate_rate_target (updates per second, cluster-wide) and sync_coordinate_interval_min. */
export const COORDINATE_SYNC_DEFAULTS = Object.freeze({ rateTarget: 64, intervalMinMs: 15_000 });

/**
 * Consul's lib.RateScaledInterval: the interval at which `n` nodes together make `rate` updates per
 * second, but never below `minMs`.
 */
export function rateScaledIntervalMs(rate: number, minMs: number, n: number): number {
  if (!(rate > 0)) return minMs; // no rate to scale by (Go would divide by zero)
  const interval = (1000 * n) / rate;
  return interval < minMs ? minMs : interval;
}

export interface CoordinateSenderOptions {
  readonly clock: Clock;
  readonly rng: Rng;
  readonly logger: Logger;
  /** The local agent's node name. */
  readonly nodeName: string;
  /** The agent's network segment ("" for the default one). */
  readonly segment?: string;
  /** Members of the LAN pool now (Consul counts every LAN member, whatever its status). */
  readonly memberCount: () => number;
  /** The agent's LAN coordinate now; undefined when not known. */
  readonly localCoordinate: () => NetworkCoordinate | undefined;
  /** Sends one update to the servers (Coordinate.Update); rejects on failure. */
  readonly send: (update: CoordinateEntry) => Promise<void>;
  /** Updates per second the whole cluster aims at (sync_coordinate_rate_target); default 64. */
  readonly rateTarget?: number;
  /** The shortest interval (sync_coordinate_interval_min); default 15 s. */
  readonly intervalMinMs?: number;
}

export interface CoordinateSender {
  /** Starts the rounds (the first send comes one interval after the start). Idempotent. */
  start(): void;
  /** Stops; a send in flight completes but no further round is scheduled. */
  stop(): void;
  /** Runs one round's send now (the timer calls this); resolves when it is done, never rejects. */
  sendNow(): Promise<void>;
}

export function createCoordinateSender(o: CoordinateSenderOptions): CoordinateSender {
  const rate = o.rateTarget ?? COORDINATE_SYNC_DEFAULTS.rateTarget;
  const min = o.intervalMinMs ?? COORDINATE_SYNC_DEFAULTS.intervalMinMs;
  let cancel: Cancel | undefined;
  let running = false;

  const sendNow = async () => {
    const coord = o.localCoordinate();
    if (!coord) return;
    try {
      await o.send({ Node: o.nodeName, Segment: o.segment ?? "", Coord: coord });
    } catch (err) {
      o.logger.error("Coordinate update error", { error: err });
    }
  };

  const schedule = () => {
    const interval = rateScaledIntervalMs(rate, min, o.memberCount());
    // lib.RandomStagger: uniform in [0, interval).
    const delay = interval + o.rng.next() * interval;
    cancel = o.clock.setTimer(delay, () => {
      void sendNow().then(() => {
        if (running) schedule();
      });
    });
  };

  return {
    start() {
      if (running) return;
      running = true;
      schedule();
    },
    stop() {
      running = false;
      cancel?.();
      cancel = undefined;
    },
    sendNow,
  };
}
