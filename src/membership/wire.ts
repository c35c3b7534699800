/**
 * Byte-level reader and writer for the gossip codec. All integers are big-endian; the reader is
 * strict: any read past the end, bad UTF-8 or out-of-range value throws `CodecError` and nothing else.
 */
import { ByteBuffer } from "../lib/index.ts";

/** The only error the codec throws on malformed input. Drivers drop the input and count it. */
export class CodecError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "CodecError";
  }
}

const utf8 = new TextEncoder();
const utf8Strict = new TextDecoder("utf-8", { fatal: true });

/** Big-endian fixed-width fields and length-prefixed bytes over a growable buffer; methods chain. */
export class Writer {
  private readonly out = new ByteBuffer(256);

  u8(v: number): this {
    this.out.byte(v);
    return this;
  }
  u16(v: number): this {
    if (!Number.isInteger(v) || v < 0 || v > 0xffff) throw new RangeError(`u16 out of range: ${v}`);
    return this.u8(v >>> 8).u8(v);
  }
  u32(v: number): this {
    if (!Number.isInteger(v) || v < 0 || v > 0xffff_ffff) throw new RangeError(`u32 out of range: ${v}`);
    return this.u8(v >>> 24).u8(v >>> 16).u8(v >>> 8).u8(v);
  }
  /** IEEE 754 double, big-endian (NaN and infinities pass through; the reader's caller judges them). */
  f64(v: number): this {
    const b = new Uint8Array(8);
    new DataView(b.buffer).setFloat64(0, v);
    this.out.raw(b);
    return this;
  }
  /** u16 length-prefixed bytes. */
  bytes16(b: Uint8Array): this {
    this.u16(b.length);
    this.out.raw(b);
    return this;
  }
  /** u32 length-prefixed bytes. */
  bytes32(b: Uint8Array): this {
    this.u32(b.length);
    this.out.raw(b);
    return this;
  }
  str(s: string): this {
    return this.bytes16(utf8.encode(s));
  }
  finish(): Uint8Array {
    return this.out.bytes();
  }
}

/** `decode(bytes)`, or undefined when it throws CodecError (malformed input); any other error propagates. */
export function tryDecode<T>(decode: (b: Uint8Array) => T, bytes: Uint8Array): T | undefined {
  try {
    return decode(bytes);
  } catch (e) {
    if (!(e instanceof CodecError)) throw e;
    return undefined;
  }
}

export class Reader {
  private pos = 0;
  constructor(private readonly buf: Uint8Array, private readonly what: string) {}

  private need(n: number): void {
    if (this.pos + n > this.buf.length) throw new CodecError(`${this.what}: truncated at byte ${this.pos} (need ${n} more, have ${this.buf.length - this.pos})`);
  }
  u8(): number {
    this.need(1);
    return this.buf[this.pos++]!;
  }
  u16(): number {
    this.need(2);
    const v = (this.buf[this.pos]! << 8) | this.buf[this.pos + 1]!;
    this.pos += 2;
    return v;
  }
  u32(): number {
    this.need(4);
    const b = this.buf, p = this.pos;
    this.pos += 4;
    return ((b[p]! << 24) >>> 0) + ((b[p + 1]! << 16) | (b[p + 2]! << 8) | b[p + 3]!);
  }
  f64(): number {
    this.need(8);
    const v = new DataView(this.buf.buffer, this.buf.byteOffset + this.pos, 8).getFloat64(0);
    this.pos += 8;
    return v;
  }
  bool(): boolean {
    const v = this.u8();
    if (v > 1) throw new CodecError(`${this.what}: bad boolean ${v} at byte ${this.pos - 1}`);
    return v === 1;
  }
  bytes16(): Uint8Array {
    const n = this.u16();
    this.need(n);
    const out = this.buf.slice(this.pos, this.pos + n);
    this.pos += n;
    return out;
  }
  bytes32(): Uint8Array {
    const n = this.u32();
    this.need(n);
    const out = this.buf.slice(this.pos, this.pos + n);
    this.pos += n;
    return out;
  }
  str(): string {
    const at = this.pos;
    const b = this.bytes16();
    try {
      return utf8Strict.decode(b);
    } catch {
      throw new CodecError(`${this.what}: invalid UTF-8 string at byte ${at}`);
    }
  }
  /** Throws unless every byte was consumed. */
  end(): void {
    if (this.pos !== this.buf.length) throw new CodecError(`${this.what}: ${this.buf.length - this.pos} trailing bytes`);
  }
  get remaining(): number {
    return this.buf.length - this.pos;
  }
}
