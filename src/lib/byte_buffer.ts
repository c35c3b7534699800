/**
 * A growable output buffer for hand-written binary encoders (Raft messages, log batches, gossip
 * packets, KV commands): bytes are appended, the backing array doubles as needed, and `bytes()`
 * returns a copy of exactly what was written.
 */
export class ByteBuffer {
  private buf: Uint8Array;
  private len = 0;

  constructor(initialSize = 256) {
    this.buf = new Uint8Array(initialSize);
  }

  /** Number of bytes written so far. */
  get length(): number {
    return this.len;
  }

  /** Ensures room for `n` more bytes. */
  private room(n: number): void {
    if (this.len + n <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < this.len + n) size *= 2;
    const next = new Uint8Array(size);
    next.set(this.buf.subarray(0, this.len));
    this.buf = next;
  }

  /** Appends one byte (the low 8 bits of `v`). */
  byte(v: number): void {
    this.room(1);
    this.buf[this.len++] = v & 0xff;
  }

  /** Appends an unsigned LEB128 / protobuf varint of a non-negative safe integer. */
  varint(v: number): void {
    this.room(10);
    while (v > 0x7f) {
      this.buf[this.len++] = (v % 0x80) | 0x80;
      v = Math.floor(v / 0x80);
    }
    this.buf[this.len++] = v;
  }

  /** Appends `b` as is. */
  raw(b: Uint8Array): void {
    this.room(b.length);
    this.buf.set(b, this.len);
    this.len += b.length;
  }

  /**
   * Appends what `fill` appends to this buffer, preceded by its length as a varint (the body of a
   * protobuf length-delimited field), with no second buffer: five bytes are reserved for the length
   * and the content is moved back over the ones the varint does not need.
   */
  delimited(fill: () => void): void {
    this.room(5);
    const at = this.len;
    this.len += 5;
    fill();
    const size = this.len - at - 5;
    const n = varintSize(size);
    if (n > 5) throw new RangeError(`length-delimited content of ${size} bytes is too long`);
    if (n < 5) this.buf.copyWithin(at + n, at + 5, this.len);
    this.len -= 5 - n;
    let v = size;
    for (let i = at; i < at + n - 1; i++) {
      this.buf[i] = (v % 0x80) | 0x80;
      v = Math.floor(v / 0x80);
    }
    this.buf[at + n - 1] = v;
  }

  /** A view of what was written (valid until the next append). */
  /** Overwrites the byte at `at` (already written) with the low 8 bits of `v`. */
  setByte(at: number, v: number): void {
    if (at < 0 || at >= this.len) throw new RangeError(`byte ${at} not written yet`);
    this.buf[at] = v & 0xff;
  }

  view(): Uint8Array {
    return this.buf.subarray(0, this.len);
  }

  /** A copy of what was written. */
  bytes(): Uint8Array {
    return this.buf.slice(0, this.len);
  }
}

/** Bytes of the varint of a non-negative safe integer. */
export function varintSize(v: number): number {
  let n = 1;
  while (v > 0x7f) {
    v = Math.floor(v / 0x80);
    n++;
  }
  return n;
}

/** Joins byte chunks into one new array. */
export function concatBytes(chunks: readonly Uint8Array[]): Uint8Array {
  const out = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.length;
  }
  return out;
}
