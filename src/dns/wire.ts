/**
 * The DNS wire format (RFC 1035 sections 4.1-4.1.4, RFC 2782 SRV, RFC 3596 AAAA, RFC 6891 EDNS0 OPT):
 * a strict decoder and an encoder with name compression, for the DNS interface (issue 20). Pure.
 *
 * Decoding refuses, with a DnsWireError naming what and where: a message shorter than its header or
 * than its sections, a label over 63 bytes or a name over 255, a compression pointer that does not point
 * strictly backwards (which also rules out loops), RDATA whose length disagrees with its type, and bytes
 * left over after the last record. Types it does not know keep their RDATA as raw bytes. Names are kept
 * as written (case included), without the trailing dot; the root is "".
 */

import { ByteBuffer, formatIp, parseIp } from "../lib/index.ts";

export const DnsType = { A: 1, NS: 2, CNAME: 5, SOA: 6, PTR: 12, TXT: 16, AAAA: 28, SRV: 33, OPT: 41, ANY: 255 } as const;
export const DnsClass = { IN: 1, ANY: 255 } as const;
export const DnsRcode = { NOERROR: 0, FORMERR: 1, SERVFAIL: 2, NXDOMAIN: 3, NOTIMP: 4, REFUSED: 5 } as const;

export interface DnsQuestion {
  readonly name: string;
  readonly type: number;
  readonly class: number;
}

export interface SoaData {
  readonly mname: string;
  readonly rname: string;
  readonly serial: number;
  readonly refresh: number;
  readonly retry: number;
  readonly expire: number;
  readonly minimum: number;
}

export interface SrvData {
  readonly priority: number;
  readonly weight: number;
  readonly port: number;
  readonly target: string;
}

/** A record's data by type: A and AAAA addresses as text, names for NS/CNAME/PTR, TXT strings, raw bytes otherwise. */
export type DnsRecordData =
  | { readonly type: "A" | "AAAA"; readonly address: string }
  | { readonly type: "NS" | "CNAME" | "PTR"; readonly name: string }
  | { readonly type: "TXT"; readonly strings: readonly string[] }
  | { readonly type: "SRV"; readonly srv: SrvData }
  | { readonly type: "SOA"; readonly soa: SoaData }
  | { readonly type: "raw"; readonly bytes: Uint8Array };

export interface DnsRecord {
  readonly name: string;
  /** The numeric type (DnsType); for OPT, `class` is the UDP payload size and `ttl` the extended flags. */
  readonly type: number;
  readonly class: number;
  readonly ttl: number;
  readonly data: DnsRecordData;
}

export interface DnsFlags {
  readonly qr: boolean;
  readonly opcode: number;
  readonly aa: boolean;
  readonly tc: boolean;
  readonly rd: boolean;
  readonly ra: boolean;
  readonly rcode: number;
}

export interface DnsMessage {
  readonly id: number;
  readonly flags: DnsFlags;
  readonly questions: readonly DnsQuestion[];
  readonly answers: readonly DnsRecord[];
  readonly authority: readonly DnsRecord[];
  readonly additional: readonly DnsRecord[];
}

export class DnsWireError extends Error {
  override readonly name = "DnsWireError";
}

const MAX_LABEL = 63;
const MAX_NAME = 255;
const utf8 = new TextEncoder();
const fromUtf8 = new TextDecoder();

/** `text` as 4 (`family` 4) or 16 address bytes; a DnsWireError otherwise. */
function addressBytes(text: string, family: 4 | 6): Uint8Array {
  let b: Uint8Array | undefined;
  try {
    b = parseIp(text);
  } catch {
    b = undefined;
  }
  if (!b || b.length !== (family === 4 ? 4 : 16)) throw new DnsWireError(`not an IPv${family} address: ${JSON.stringify(text)}`);
  return b;
}

// ---------------------------------------------------------------------------------------------------
// Decoding

class Reader {
  pos = 0;
  constructor(readonly buf: Uint8Array) {}
  need(n: number, what: string): void {
    if (this.pos + n > this.buf.length) throw new DnsWireError(`truncated ${what} at byte ${this.pos}`);
  }
  u8(what: string): number {
    this.need(1, what);
    return this.buf[this.pos++]!;
  }
  u16(what: string): number {
    this.need(2, what);
    const v = (this.buf[this.pos]! << 8) | this.buf[this.pos + 1]!;
    this.pos += 2;
    return v;
  }
  u32(what: string): number {
    this.need(4, what);
    const v = ((this.buf[this.pos]! << 24) >>> 0) + (this.buf[this.pos + 1]! << 16) + (this.buf[this.pos + 2]! << 8) + this.buf[this.pos + 3]!;
    this.pos += 4;
    return v;
  }
  bytes(n: number, what: string): Uint8Array {
    this.need(n, what);
    const out = this.buf.slice(this.pos, this.pos + n);
    this.pos += n;
    return out;
  }

  /** A name at the current position, following compression pointers, which must point strictly backwards. */
  name(what: string): string {
    const labels: string[] = [];
    let length = 1;
    let at = this.pos;
    let resumeAt = -1;
    /** The lowest offset a pointer may target next: strictly before the previous pointer's own position. */
    let limit = at;
    for (;;) {
      if (at >= this.buf.length) throw new DnsWireError(`truncated ${what} at byte ${at}`);
      const len = this.buf[at]!;
      if (len === 0) {
        at += 1;
        break;
      }
      const kind = len & 0xc0;
      if (kind === 0xc0) {
        if (at + 1 >= this.buf.length) throw new DnsWireError(`truncated compression pointer in ${what} at byte ${at}`);
        const target = ((len & 0x3f) << 8) | this.buf[at + 1]!;
        if (target >= limit) throw new DnsWireError(`compression pointer in ${what} at byte ${at} does not point backwards`);
        if (resumeAt < 0) resumeAt = at + 2;
        limit = target;
        at = target;
        continue;
      }
      if (kind !== 0) throw new DnsWireError(`unsupported label type in ${what} at byte ${at}`);
      if (len > MAX_LABEL) throw new DnsWireError(`label over ${MAX_LABEL} bytes in ${what} at byte ${at}`);
      if (at + 1 + len > this.buf.length) throw new DnsWireError(`truncated label in ${what} at byte ${at}`);
      length += len + 1;
      if (length > MAX_NAME) throw new DnsWireError(`name over ${MAX_NAME} bytes in ${what}`);
      labels.push(fromUtf8.decode(this.buf.subarray(at + 1, at + 1 + len)));
      at += 1 + len;
    }
    this.pos = resumeAt >= 0 ? resumeAt : at;
    return labels.join(".");
  }
}

function decodeData(r: Reader, type: number, rdlength: number, what: string): DnsRecordData {
  const end = r.pos + rdlength;
  r.need(rdlength, `${what} RDATA`);
  const done = (d: DnsRecordData): DnsRecordData => {
    if (r.pos !== end) throw new DnsWireError(`${what} RDATA length ${rdlength} disagrees with its contents`);
    return d;
  };
  switch (type) {
    case DnsType.A:
      if (rdlength !== 4) throw new DnsWireError(`${what}: an A record needs 4 bytes, got ${rdlength}`);
      return done({ type: "A", address: Array.from(r.bytes(4, what)).join(".") });
    case DnsType.AAAA:
      if (rdlength !== 16) throw new DnsWireError(`${what}: an AAAA record needs 16 bytes, got ${rdlength}`);
      return done({ type: "AAAA", address: formatIp(r.bytes(16, what)) });
    case DnsType.NS:
    case DnsType.CNAME:
    case DnsType.PTR:
      return done({ type: type === DnsType.NS ? "NS" : type === DnsType.CNAME ? "CNAME" : "PTR", name: r.name(what) });
    case DnsType.TXT: {
      const strings: string[] = [];
      while (r.pos < end) {
        const n = r.u8(what);
        if (r.pos + n > end) throw new DnsWireError(`${what}: a TXT string runs past its RDATA`);
        strings.push(fromUtf8.decode(r.bytes(n, what)));
      }
      return done({ type: "TXT", strings });
    }
    case DnsType.SRV:
      return done({ type: "SRV", srv: { priority: r.u16(what), weight: r.u16(what), port: r.u16(what), target: r.name(what) } });
    case DnsType.SOA:
      return done({
        type: "SOA",
        soa: { mname: r.name(what), rname: r.name(what), serial: r.u32(what), refresh: r.u32(what), retry: r.u32(what), expire: r.u32(what), minimum: r.u32(what) },
      });
    default:
      return done({ type: "raw", bytes: r.bytes(rdlength, what) });
  }
}

function decodeRecord(r: Reader, what: string): DnsRecord {
  const name = r.name(what);
  const type = r.u16(what);
  const klass = r.u16(what);
  const ttl = r.u32(what);
  const rdlength = r.u16(what);
  return { name, type, class: klass, ttl, data: decodeData(r, type, rdlength, what) };
}

export function decodeMessage(buf: Uint8Array): DnsMessage {
  const r = new Reader(buf);
  const id = r.u16("header");
  const f = r.u16("header");
  const counts = [r.u16("header"), r.u16("header"), r.u16("header"), r.u16("header")] as const;
  const flags: DnsFlags = {
    qr: (f & 0x8000) !== 0, opcode: (f >> 11) & 0xf, aa: (f & 0x0400) !== 0, tc: (f & 0x0200) !== 0, rd: (f & 0x0100) !== 0, ra: (f & 0x0080) !== 0, rcode: f & 0xf,
  };
  const questions: DnsQuestion[] = [];
  for (let i = 0; i < counts[0]; i++) questions.push({ name: r.name(`question ${i}`), type: r.u16(`question ${i}`), class: r.u16(`question ${i}`) });
  const section = (n: number, label: string) => Array.from({ length: n }, (_, i) => decodeRecord(r, `${label} ${i}`));
  const answers = section(counts[1], "answer");
  const authority = section(counts[2], "authority record");
  const additional = section(counts[3], "additional record");
  if (r.pos !== buf.length) throw new DnsWireError(`${buf.length - r.pos} bytes after the last record`);
  return { id, flags, questions, answers, authority, additional };
}

// ---------------------------------------------------------------------------------------------------
// Encoding

class Writer {
  private readonly out = new ByteBuffer(512);
  /** Offsets of names already written (lower-cased suffixes), for compression. */
  private readonly names = new Map<string, number>();

  get len(): number {
    return this.out.length;
  }
  u8(v: number): void {
    this.out.byte(v);
  }
  u16(v: number): void {
    this.out.byte(v >> 8);
    this.out.byte(v);
  }
  u32(v: number): void {
    this.u16(Math.floor(v / 0x10000) & 0xffff);
    this.u16(v & 0xffff);
  }
  bytes(b: Uint8Array): void {
    this.out.raw(b);
  }
  /** Overwrites the two bytes at `at` (an RDLENGTH written as 0 before its RDATA). */
  setU16(at: number, v: number): void {
    this.out.setByte(at, v >> 8);
    this.out.setByte(at + 1, v);
  }

  /** A name, its longest suffix already written replaced by a pointer (`compress` false for names inside OPT and other raw data). */
  name(name: string, compress = true): void {
    const labels = name === "" || name === "." ? [] : name.replace(/\.$/, "").split(".");
    const encoded = labels.map((l) => utf8.encode(l));
    let total = 1;
    for (let i = 0; i < encoded.length; i++) {
      const n = encoded[i]!.length;
      if (n === 0) throw new DnsWireError(`empty label in ${JSON.stringify(name)}`);
      if (n > MAX_LABEL) throw new DnsWireError(`label over ${MAX_LABEL} bytes in ${JSON.stringify(name)}`);
      total += n + 1;
      if (total > MAX_NAME) throw new DnsWireError(`name over ${MAX_NAME} bytes: ${JSON.stringify(name)}`);
    }
    // Suffix keys ("b.c", "c"), lower case, built once from the right.
    const suffixes: string[] = new Array(labels.length);
    if (compress) {
      let key = "";
      for (let i = labels.length - 1; i >= 0; i--) suffixes[i] = key = key === "" ? labels[i]!.toLowerCase() : `${labels[i]!.toLowerCase()}.${key}`;
    }
    for (let i = 0; i < labels.length; i++) {
      const at = compress ? this.names.get(suffixes[i]!) : undefined;
      if (at !== undefined) {
        this.u16(0xc000 | at);
        return;
      }
      if (compress && this.len < 0x4000) this.names.set(suffixes[i]!, this.len);
      this.u8(encoded[i]!.length);
      this.bytes(encoded[i]!);
    }
    this.u8(0);
  }
  result(): Uint8Array {
    return this.out.bytes();
  }
}

function encodeData(w: Writer, d: DnsRecordData): void {
  switch (d.type) {
    case "A":
      return w.bytes(addressBytes(d.address, 4));
    case "AAAA":
      return w.bytes(addressBytes(d.address, 6));
    case "NS":
    case "CNAME":
    case "PTR":
      return w.name(d.name);
    case "TXT":
      for (const s of d.strings) {
        const b = utf8.encode(s);
        if (b.length > 255) throw new DnsWireError("a TXT string over 255 bytes");
        w.u8(b.length);
        w.bytes(b);
      }
      return;
    case "SRV":
      w.u16(d.srv.priority);
      w.u16(d.srv.weight);
      w.u16(d.srv.port);
      // RFC 2782: the target is not compressed.
      return w.name(d.srv.target, false);
    case "SOA":
      w.name(d.soa.mname);
      w.name(d.soa.rname);
      for (const v of [d.soa.serial, d.soa.refresh, d.soa.retry, d.soa.expire, d.soa.minimum]) w.u32(v);
      return;
    case "raw":
      return w.bytes(d.bytes);
  }
}

export function encodeMessage(m: DnsMessage): Uint8Array {
  const w = new Writer();
  const f = m.flags;
  w.u16(m.id);
  w.u16((f.qr ? 0x8000 : 0) | ((f.opcode & 0xf) << 11) | (f.aa ? 0x0400 : 0) | (f.tc ? 0x0200 : 0) | (f.rd ? 0x0100 : 0) | (f.ra ? 0x0080 : 0) | (f.rcode & 0xf));
  for (const n of [m.questions.length, m.answers.length, m.authority.length, m.additional.length]) w.u16(n);
  for (const q of m.questions) {
    w.name(q.name);
    w.u16(q.type);
    w.u16(q.class);
  }
  for (const rr of [...m.answers, ...m.authority, ...m.additional]) {
    w.name(rr.name, rr.type !== DnsType.OPT);
    w.u16(rr.type);
    w.u16(rr.class);
    w.u32(rr.ttl);
    const at = w.len;
    w.u16(0);
    const start = w.len;
    encodeData(w, rr.data);
    const rdlength = w.len - start;
    if (rdlength > 0xffff) throw new DnsWireError("RDATA over 65535 bytes");
    w.setU16(at, rdlength);
  }
  return w.result();
}
