/**
 * The latest durations of something that happens a few times a second (probes, gossip rounds), kept in
 * a fixed ring so that a reader that looks every second (the metrics collector) sees each one without
 * a callback across layers and without allocating per entry. A reader that falls more than `capacity`
 * entries behind misses the oldest.
 */
export class DurationRing {
  private readonly values: Float64Array;
  /** Entries written since creation. */
  written = 0;

  constructor(capacity = 64) {
    this.values = new Float64Array(capacity);
  }

  push(ms: number): void {
    this.values[this.written % this.values.length] = ms;
    this.written++;
  }

  /** Calls `fn` for each entry written since `cursor` (a previous return value; 0 at first) and returns the new cursor. */
  readSince(cursor: number, fn: (ms: number) => void): number {
    for (let i = Math.max(cursor, this.written - this.values.length); i < this.written; i++) fn(this.values[i % this.values.length]!);
    return this.written;
  }
}
