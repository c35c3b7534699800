/**
 * Consul's Coordinate.Update batching (agent/consul/coordinate_endpoint.go): the server an update
 * reaches keeps the latest one per node and segment, and every `periodMs` proposes what it holds
 * through Raft as `coordinate-batch` commands of at most `batchSize` updates, at most `maxBatches` of
 * them; the rest of a round is discarded with a warning (Consul's rate limit). In Consul the leader
 * batches (Update is forwarded to it); here writes are proposed where they arrive (a follower's
 * proposal reaches the leader through Raft), so every server batches what it received.
 */
import { coordinateProblem, type CoordinateEntry } from "../model/index.ts";
import type { Cancel, Clock, Logger } from "../platform/index.ts";
import type { StateCommand, StateResult } from "../state/index.ts";

/** Consul's defaults: coordinate_update_period 5 s, coordinate_update_batch_size 128, coordinate_update_max_batches 5. */
export const COORDINATE_UPDATE_DEFAULTS = Object.freeze({ periodMs: 5_000, batchSize: 128, maxBatches: 5 });

export interface CoordinateBatcherOptions {
  readonly clock: Clock;
  readonly logger: Logger;
  /** Proposes a command through Raft and resolves to its result. */
  readonly propose: (command: StateCommand) => Promise<StateResult>;
  readonly periodMs?: number;
  readonly batchSize?: number;
  readonly maxBatches?: number;
}

export interface CoordinateBatcher {
  /**
   * Queues updates (Consul's Coordinate.Update), replacing any pending one of the same node and segment.
   * Throws an Error with Consul's text ("invalid coordinate", "incompatible coordinate") and queues
   * nothing when any of them is refused.
   */
  submit(updates: readonly CoordinateEntry[]): void;
  /** Proposes what is pending now (the timer calls this); failures are logged, the updates dropped as in Consul. */
  flush(): Promise<void>;
  /** Updates waiting for the next flush. */
  pending(): number;
  /** Starts the flush timer. */
  start(): void;
  /** Stops the flush timer; pending updates are dropped. */
  stop(): void;
}

export function createCoordinateBatcher(o: CoordinateBatcherOptions): CoordinateBatcher {
  const periodMs = o.periodMs ?? COORDINATE_UPDATE_DEFAULTS.periodMs;
  const batchSize = Math.max(1, o.batchSize ?? COORDINATE_UPDATE_DEFAULTS.batchSize);
  const maxBatches = Math.max(1, o.maxBatches ?? COORDINATE_UPDATE_DEFAULTS.maxBatches);
  let updates = new Map<string, CoordinateEntry>();
  let cancel: Cancel | undefined;

  const flush = async () => {
    const pending = [...updates.values()];
    updates = new Map();
    const limit = batchSize * maxBatches;
    if (pending.length > limit) o.logger.warn("discarded coordinate updates", { count: pending.length - limit });
    const taken = pending.slice(0, limit);
    for (let start = 0; start < taken.length; start += batchSize) {
      try {
        const r = await o.propose({ type: "coordinate-batch", updates: taken.slice(start, start + batchSize) });
        if (r.type === "error") throw new Error(r.error);
      } catch (err) {
        o.logger.warn("coordinate batch update failed", { error: err });
        return;
      }
    }
  };

  return {
    submit(batch) {
      for (const u of batch) {
        const problem = coordinateProblem(u.Coord);
        if (problem) throw new Error(problem);
      }
      for (const u of batch) updates.set(`${u.Node}:${u.Segment}`, { Node: u.Node, Segment: u.Segment, Coord: u.Coord });
    },
    flush,
    pending: () => updates.size,
    start() {
      cancel ??= o.clock.setInterval(periodMs, () => void flush());
    },
    stop() {
      cancel?.();
      cancel = undefined;
      updates = new Map();
    },
  };
}
