/**
 * Sliding window of in-flight MsgApp messages to one follower (etcd tracker.Inflights): each slot holds
 * the last index of one message. When full, the leader stops sending appends to that follower until
 * acknowledgements free slots (flow control, Raft thesis §10.2.1 pipelining).
 */
export class Inflights {
  private buffer: number[] = [];
  constructor(readonly size: number) {}

  /** Records a message whose last entry is `index`. Indexes must be added in increasing order. */
  add(index: number): void {
    if (this.full()) throw new Error("cannot add into a full inflights");
    this.buffer.push(index);
  }

  /** Frees all messages whose last index is <= `to`. */
  freeLE(to: number): void {
    let i = 0;
    while (i < this.buffer.length && this.buffer[i]! <= to) i++;
    if (i > 0) this.buffer = this.buffer.slice(i);
  }

  /** Frees the oldest message (used on heartbeat response when the window is full, as etcd). */
  freeFirstOne(): void {
    if (this.buffer.length > 0) this.buffer = this.buffer.slice(1);
  }

  full(): boolean {
    return this.buffer.length >= this.size;
  }

  count(): number {
    return this.buffer.length;
  }

  reset(): void {
    this.buffer = [];
  }

  clone(): Inflights {
    const c = new Inflights(this.size);
    c.buffer = [...this.buffer];
    return c;
  }
}
