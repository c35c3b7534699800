/**
 * A single-consumer event queue: producers push from callbacks, one async loop awaits `next()`.
 * Used by each ADS stream to serialize requests, cache changes, rate-limit grants and cancellation.
 */
export class EventQueue<T> {
  private readonly items: T[] = [];
  private waiter: ((item: T) => void) | undefined;

  push(item: T): void {
    const w = this.waiter;
    if (w) {
      this.waiter = undefined;
      w(item);
    } else {
      this.items.push(item);
    }
  }

  /** The oldest item, waiting for one if none is queued. Only one `next()` may be pending at a time. */
  next(): Promise<T> {
    if (this.items.length > 0) return Promise.resolve(this.items.shift()!);
    return new Promise((resolve) => {
      this.waiter = resolve;
    });
  }
}
