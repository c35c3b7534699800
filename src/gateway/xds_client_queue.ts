/**
 * The request side of a client stream: an async iterable that producers push to from synchronous code
 * and ConnectRPC drains (as an async generator: ConnectRPC calls its `throw` and `return`). Single consumer.
 */
export class RequestQueue<T> implements AsyncIterable<T> {
  private readonly items: T[] = [];
  private wake: (() => void) | undefined;
  private ended = false;

  /** Queues an item; ignored after `end()`. */
  push(item: T): void {
    if (this.ended) return;
    this.items.push(item);
    this.signal();
  }

  /** Ends the iteration once the queued items are taken (a pending wait finishes at once). Idempotent. */
  end(): void {
    this.ended = true;
    this.signal();
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<T> {
    try {
      for (;;) {
        while (this.items.length > 0) yield this.items.shift()!;
        if (this.ended) return;
        await new Promise<void>((resolve) => (this.wake = resolve));
      }
    } finally {
      this.ended = true;
      this.items.length = 0;
    }
  }

  private signal(): void {
    const w = this.wake;
    this.wake = undefined;
    w?.();
  }
}
