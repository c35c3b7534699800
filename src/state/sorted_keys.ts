/**
 * A sorted set of strings in chunks (a "sorted list of sorted arrays"): insert and delete cost
 * O(log n + chunk size), ordered scans from any lower bound cost O(log n + results). Used for the KV
 * and tombstone key order, so prefix scans never walk the whole table.
 *
 * Order is JavaScript string order (UTF-16 code units). It equals memdb's byte order except between
 * astral-plane characters and U+E000..U+FFFF at the same position, which keys rarely mix.
 */

const LOAD = 256;

function bisectLeft(a: readonly string[], x: string): number {
  let lo = 0;
  let hi = a.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (a[mid]! < x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** The sorted string set described above. */
export class SortedKeys {
  private chunks: string[][] = [];
  /** Last (largest) key of each chunk. */
  private maxes: string[] = [];
  private count = 0;

  get size(): number {
    return this.count;
  }

  /** Adds `key`; false if it was already present. */
  add(key: string): boolean {
    if (this.chunks.length === 0) {
      this.chunks.push([key]);
      this.maxes.push(key);
      this.count = 1;
      return true;
    }
    let ci = bisectLeft(this.maxes, key);
    if (ci === this.chunks.length) ci--;
    const i = bisectLeft(this.chunks[ci]!, key);
    if (this.chunks[ci]![i] === key) return false;
    const chunk = this.writable(ci);
    chunk.splice(i, 0, key);
    this.maxes[ci] = chunk[chunk.length - 1]!;
    this.count++;
    if (chunk.length > 2 * LOAD) {
      const tail = chunk.splice(LOAD);
      this.chunks.splice(ci + 1, 0, tail);
      this.maxes.splice(ci, 1, chunk[chunk.length - 1]!, tail[tail.length - 1]!);
    }
    return true;
  }

  /** Removes `key`; false if it was not present. */
  delete(key: string): boolean {
    const ci = bisectLeft(this.maxes, key);
    if (ci === this.chunks.length) return false;
    const i = bisectLeft(this.chunks[ci]!, key);
    if (this.chunks[ci]![i] !== key) return false;
    const chunk = this.writable(ci);
    chunk.splice(i, 1);
    this.count--;
    if (chunk.length === 0) {
      this.chunks.splice(ci, 1);
      this.maxes.splice(ci, 1);
      return true;
    }
    this.maxes[ci] = chunk[chunk.length - 1]!;
    if (chunk.length < LOAD / 4 && this.chunks.length > 1) {
      const ni = ci + 1 < this.chunks.length ? ci + 1 : ci - 1;
      const [a, b] = ni > ci ? [ci, ni] : [ni, ci];
      const merged = this.chunks[a]!.concat(this.chunks[b]!);
      this.chunks.splice(a, 2, merged);
      this.maxes.splice(a, 2, merged[merged.length - 1]!);
      if (merged.length > 2 * LOAD) {
        const tail = merged.splice(LOAD);
        this.chunks.splice(a + 1, 0, tail);
        this.maxes.splice(a, 1, merged[merged.length - 1]!, tail[tail.length - 1]!);
      }
    }
    return true;
  }

  /** Keys >= `from` in order. Do not modify the set while iterating. */
  *from(from: string): IterableIterator<string> {
    let ci = bisectLeft(this.maxes, from);
    if (ci === this.chunks.length) return;
    let i = bisectLeft(this.chunks[ci]!, from);
    for (; ci < this.chunks.length; ci++, i = 0) {
      const chunk = this.chunks[ci]!;
      for (; i < chunk.length; i++) yield chunk[i]!;
    }
  }

  /** Keys starting with `prefix`, in order. Do not modify the set while iterating. */
  *withPrefix(prefix: string): IterableIterator<string> {
    for (const k of this.from(prefix)) {
      if (!k.startsWith(prefix)) return;
      yield k;
    }
  }

  /**
   * The keys as they are now, in order, as chunks that never change: costs O(chunks) now and one chunk
   * copy at the first later change to each chunk (copy-on-write). For readers that run while writes go on.
   */
  frozen(): readonly (readonly string[])[] {
    for (const c of this.chunks) this.frozenChunks.add(c);
    return this.chunks.slice();
  }

  /** Chunks handed out by frozen(), copied before they change. */
  private readonly frozenChunks = new WeakSet<string[]>();

  /** Chunk `ci`, copied first if frozen() handed it out. */
  private writable(ci: number): string[] {
    const c = this.chunks[ci]!;
    if (!this.frozenChunks.has(c)) return c;
    const copy = c.slice();
    this.chunks[ci] = copy;
    return copy;
  }

  /** All keys in order, as a new array. */
  toArray(): string[] {
    return ([] as string[]).concat(...this.chunks);
  }

  /** Removes every key. */
  clear(): void {
    this.chunks = [];
    this.maxes = [];
    this.count = 0;
  }
}
