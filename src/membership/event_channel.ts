/**
 * In-order event delivery to subscribers, shared by the gossip driver and the pool.
 *
 * Events are delivered in publish order. A publish from inside a subscriber (a subscriber that gossips,
 * which drains the core again) only queues, so every subscriber sees the same order. Until the first
 * subscriber arrives, up to `maxHeld` events are kept for it. A throwing subscriber is logged and does
 * not affect the others.
 */
import type { Cancel, Logger } from "../platform/index.ts";

export interface EventChannel<E extends { readonly type: string }> {
  publish(events: readonly E[]): void;
  subscribe(fn: (e: E) => void): Cancel;
}

export function createEventChannel<E extends { readonly type: string }>(log: Logger, what: string, maxHeld = 4096): EventChannel<E> {
  const subscribers = new Set<(e: E) => void>();
  const pending: E[] = [];
  let delivering = false;
  const deliver = () => {
    if (delivering || subscribers.size === 0) return;
    delivering = true;
    try {
      for (let e = pending.shift(); e !== undefined; e = pending.shift()) {
        for (const fn of [...subscribers]) {
          try {
            fn(e);
          } catch (err) {
            log.error(`${what} subscriber threw`, { event: e.type, error: err });
          }
        }
      }
    } finally {
      delivering = false;
    }
  };
  return {
    publish(events) {
      for (const e of events) if (subscribers.size > 0 || pending.length < maxHeld) pending.push(e);
      deliver();
    },
    subscribe(fn) {
      subscribers.add(fn);
      deliver();
      return () => void subscribers.delete(fn);
    },
  };
}
