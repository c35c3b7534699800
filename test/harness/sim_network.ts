/**
 * A simulated network for Raft transports: every delivery is a timer on the simulated clock, so loss,
 * duplication, reordering (random delays), symmetric and asymmetric partitions are all drawn from the
 * seed and replay exactly.
 */
import type { Transport } from "../../src/consensus/index.ts";
import type { Message } from "../../src/raft/index.ts";
import type { Rng } from "../../src/platform/rng.ts";
import type { SimClock } from "./sim_clock.ts";

export interface NetworkFaults {
  /** Probability that a message is lost. */
  drop: number;
  /** Probability that a delivered message is delivered twice. */
  duplicate: number;
  /** Delivery delay range in ms; a wide range reorders messages. */
  minDelayMs: number;
  maxDelayMs: number;
}

export const NO_FAULTS: NetworkFaults = { drop: 0, duplicate: 0, minDelayMs: 1, maxDelayMs: 1 };

type SnapMsg = Message & { type: "MsgSnap" };

export interface SimNetwork {
  faults: NetworkFaults;
  /** The transport of node `id`. A node has one transport per incarnation: a restarted node gets a fresh one. */
  transport(id: string): Transport;
  /** Blocks delivery from `from` to `to` (one direction). */
  block(from: string, to: string): void;
  unblock(from: string, to: string): void;
  /** Splits the nodes into groups that cannot talk to each other (symmetric partition). */
  partition(groups: readonly (readonly string[])[]): void;
  /** Removes every block. */
  heal(): void;
  /** Drops everything to and from `id` (a crashed node) until it gets a new transport. */
  disconnect(id: string): void;
  stats(): { sent: number; delivered: number; dropped: number };
}

export function simNetwork(clock: SimClock, rng: Rng, faults: NetworkFaults = NO_FAULTS): SimNetwork {
  const blocked = new Set<string>();
  const endpoints = new Map<string, { onMessage?: (m: Message) => void; onSnapshot?: (m: SnapMsg, d: Uint8Array) => void; alive: boolean }>();
  const stats = { sent: 0, delivered: 0, dropped: 0 };
  const net: SimNetwork = {
    faults,
    transport(id) {
      const prev = endpoints.get(id);
      if (prev) prev.alive = false;
      const ep: { onMessage?: (m: Message) => void; onSnapshot?: (m: SnapMsg, d: Uint8Array) => void; alive: boolean } = { alive: true };
      endpoints.set(id, ep);
      const delay = () => net.faults.minDelayMs + rng.int(Math.max(1, net.faults.maxDelayMs - net.faults.minDelayMs + 1));
      const canDeliver = (to: string) => ep.alive && !blocked.has(`${id}->${to}`);
      return {
        send(msg) {
          stats.sent++;
          if (!canDeliver(msg.to) || rng.next() < net.faults.drop) {
            stats.dropped++;
            return;
          }
          const copies = rng.next() < net.faults.duplicate ? 2 : 1;
          for (let i = 0; i < copies; i++) {
            clock.setTimer(delay(), () => {
              const dst = endpoints.get(msg.to);
              // Re-check at delivery: a partition or crash that started in flight loses the message.
              if (!dst?.alive || !dst.onMessage || !canDeliver(msg.to)) {
                stats.dropped++;
                return;
              }
              stats.delivered++;
              dst.onMessage(msg);
            });
          }
        },
        sendSnapshot(to, msg, data) {
          const copy = data.slice();
          return new Promise<boolean>((resolve) => {
            if (!canDeliver(to) || rng.next() < net.faults.drop) {
              clock.setTimer(delay(), () => resolve(false));
              return;
            }
            // A snapshot takes several deliveries' time; it must survive the whole window.
            clock.setTimer(delay() * 4, () => {
              const dst = endpoints.get(to);
              if (!dst?.alive || !dst.onSnapshot || !canDeliver(to)) return resolve(false);
              dst.onSnapshot(msg, copy);
              resolve(true);
            });
          });
        },
        onMessage(h) {
          ep.onMessage = h;
        },
        onSnapshot(h) {
          ep.onSnapshot = h;
        },
        async close() {
          ep.alive = false;
        },
      };
    },
    block: (from, to) => void blocked.add(`${from}->${to}`),
    unblock: (from, to) => void blocked.delete(`${from}->${to}`),
    partition(groups) {
      for (const a of groups) for (const b of groups) if (a !== b) for (const x of a) for (const y of b) blocked.add(`${x}->${y}`);
    },
    heal: () => blocked.clear(),
    disconnect(id) {
      const ep = endpoints.get(id);
      if (ep) ep.alive = false;
    },
    stats: () => ({ ...stats }),
  };
  return net;
}
