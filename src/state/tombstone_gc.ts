/**
 * The leader's KV tombstone GC (Consul's agent/consul/state/tombstone_gc.go): hints of tombstone
 * indexes are grouped into buckets of `granularityMs`; each bucket expires `ttlMs` after it was
 * opened and hands its highest index to `onExpire`, which should propose a `tombstone-reap` with it.
 * Enabled only on the leader; disabling drops all pending buckets and timers.
 */
import type { Cancel, Clock } from "../platform/index.ts";

/** Configuration of createTombstoneGc. */
export interface TombstoneGcOptions {
  readonly clock: Clock;
  /** How long a tombstone lives (Consul's tombstone_ttl, default 15 min). */
  readonly ttlMs: number;
  /** Expiry bucket width (Consul's tombstone_ttl_granularity, default 30 s). */
  readonly granularityMs: number;
  readonly onExpire: (reapIndex: number) => void;
}

/** The leader-side tombstone GC; see the module doc. */
export interface TombstoneGc {
  /** Notes that tombstones up to `index` exist (ignored while disabled). */
  hint(index: number): void;
  setEnabled(enabled: boolean): void;
  /** Number of pending expiry buckets. */
  pending(): number;
}

/** Creates a disabled tombstone GC; enable it while this server leads. */
export function createTombstoneGc(o: TombstoneGcOptions): TombstoneGc {
  const buckets = new Map<number, { index: number; cancel: Cancel }>();
  let enabled = false;
  return {
    hint(index) {
      if (!enabled) return;
      const now = o.clock.now();
      const g = Math.max(1, o.granularityMs);
      const expires = now + o.ttlMs;
      const at = expires + g - (expires % g); // the next bucket boundary strictly after, as Consul's nextExpires
      const b = buckets.get(at);
      if (b) {
        b.index = Math.max(b.index, index);
        return;
      }
      const bucket = {
        index,
        cancel: o.clock.setTimer(at - now, () => {
          buckets.delete(at);
          o.onExpire(bucket.index);
        }),
      };
      buckets.set(at, bucket);
    },
    setEnabled(on) {
      if (!on) {
        for (const b of buckets.values()) b.cancel();
        buckets.clear();
      }
      enabled = on;
    },
    pending: () => buckets.size,
  };
}
