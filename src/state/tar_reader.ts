/**
 * A push parser for the ustar archives of snapshot files: bytes go in as they are decompressed, and
 * entries come out as (name, size) headers followed by their data in pieces, so an archive is read in
 * constant memory and a bad one is refused at the first header that says so. Stops at the end-of-archive
 * block (a zero header), however much input follows.
 */

const dec = new TextDecoder();

/** What the reader does with an entry's data; `header` may throw to refuse the entry (and the archive). */
export interface TarVisitor {
  /** A new entry; throw to refuse it. */
  header(name: string, size: number): void;
  /** The next piece of the current entry's data (a view: copy what you keep). */
  data(piece: Uint8Array): void;
  /** The current entry is complete. */
  end(): void;
}

function field(h: Uint8Array, at: number, len: number): string {
  return dec.decode(h.subarray(at, at + len)).replace(/\0.*$/s, "");
}

export class TarReader {
  private readonly header = new Uint8Array(512);
  private headerFill = 0;
  /** Data bytes left in the current entry, then padding bytes to skip. */
  private dataLeft = 0;
  private padLeft = 0;
  private inEntry = false;
  private finished = false;

  constructor(private readonly visitor: TarVisitor) {}

  /** Whether the end-of-archive block was read. */
  get done(): boolean {
    return this.finished;
  }

  /** Feeds decompressed bytes; returns false once the archive ended (the rest of the input is ignored). */
  push(bytes: Uint8Array): boolean {
    let at = 0;
    while (at < bytes.length && !this.finished) {
      if (this.dataLeft > 0) {
        const n = Math.min(this.dataLeft, bytes.length - at);
        this.visitor.data(bytes.subarray(at, at + n));
        this.dataLeft -= n;
        at += n;
        if (this.dataLeft === 0) this.closeEntry();
      } else if (this.padLeft > 0) {
        const n = Math.min(this.padLeft, bytes.length - at);
        this.padLeft -= n;
        at += n;
      } else {
        const n = Math.min(512 - this.headerFill, bytes.length - at);
        this.header.set(bytes.subarray(at, at + n), this.headerFill);
        this.headerFill += n;
        at += n;
        if (this.headerFill === 512) this.startEntry();
      }
    }
    return !this.finished;
  }

  /** Throws unless the input ended at an entry boundary (an archive cut short is truncated). */
  finish(): void {
    if (this.inEntry || this.headerFill > 0) throw new Error("the archive is truncated");
  }

  private startEntry(): void {
    this.headerFill = 0;
    const h = this.header;
    if (h.every((b) => b === 0)) {
      this.finished = true;
      return;
    }
    const name = field(h, 0, 100);
    const sizeText = field(h, 124, 12).trim();
    const size = /^[0-7]+$/.test(sizeText) ? parseInt(sizeText, 8) : NaN;
    if (!Number.isSafeInteger(size)) throw new Error(`the tar entry ${JSON.stringify(name)} has no valid size`);
    this.visitor.header(name, size);
    this.inEntry = true;
    this.dataLeft = size;
    this.padLeft = (512 - (size % 512)) % 512;
    if (size === 0) this.closeEntry();
  }

  private closeEntry(): void {
    this.inEntry = false;
    this.visitor.end();
  }
}
