/**
 * Transmit-limited broadcast queue (memberlist TransmitLimitedQueue, queue.go).
 *
 * Each broadcast carries a `key` (the node a membership message is about, or a user key): queueing a
 * broadcast drops any queued one with the same key, so newer information about a node invalidates
 * older. `take` hands out the least-transmitted broadcasts first (newest first among equals) that fit
 * in a byte budget (and a count cap), counts one transmit for each, and retires a broadcast once it has been
 * transmitted `retransmitLimit(n)` times.
 */

export interface QueuedBroadcast {
  readonly id: number;
  readonly key: string;
  /** The encoded message (see codec.encodeMessage). */
  readonly bytes: Uint8Array;
  transmits: number;
}

export class BroadcastQueue {
  private items: QueuedBroadcast[] = [];
  private nextId = 1;

  /** Queues `bytes` under `key`, invalidating older broadcasts with the same key. Returns its id. */
  queue(key: string, bytes: Uint8Array): number {
    this.items = this.items.filter((b) => b.key !== key);
    const id = this.nextId++;
    this.items.push({ id, key, bytes, transmits: 0 });
    return id;
  }

  /** Whether broadcast `id` is still queued (neither retired nor invalidated). */
  has(id: number): boolean {
    return this.items.some((b) => b.id === id);
  }

  /** Id of the queued broadcast for `key`, if any. */
  idOf(key: string): number | undefined {
    return this.items.find((b) => b.key === key)?.id;
  }

  get length(): number {
    return this.items.length;
  }

  /** Transmit count of the queued broadcast for `key`, if any (for tests and introspection). */
  transmitsOf(key: string): number | undefined {
    return this.items.find((b) => b.key === key)?.transmits;
  }

  /**
   * Picks broadcasts whose encoded size plus `overhead` each fits in `limit` bytes in total, in order
   * (fewest transmits, then newest). Each picked broadcast counts one transmit and is dropped once it
   * reaches `transmitLimit`.
   */
  take(overhead: number, limit: number, transmitLimit: number, maxCount = Infinity): Uint8Array[] {
    if (this.items.length === 0) return [];
    const order = [...this.items].sort((a, b) => a.transmits - b.transmits || b.id - a.id);
    const out: Uint8Array[] = [];
    let used = 0;
    const retired = new Set<number>();
    for (const b of order) {
      if (out.length >= maxCount) break;
      const size = overhead + b.bytes.length;
      if (used + size > limit) continue;
      used += size;
      out.push(b.bytes);
      b.transmits++;
      if (b.transmits >= transmitLimit) retired.add(b.id);
    }
    if (retired.size) this.items = this.items.filter((b) => !retired.has(b.id));
    return out;
  }

  /** Drops everything (used when the node shuts down). */
  reset(): void {
    this.items = [];
  }
}
