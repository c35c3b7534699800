import { describe, expect, test } from "bun:test";
import { seededRng, type Rng } from "../platform/index.ts";
import { encodeWanGossipPacket, PacketFramingError, WAN_GOSSIP_PACKET_MAX_BYTES, WanGossipPacketDecoder } from "./packet_framing.ts";

const MAX = WAN_GOSSIP_PACKET_MAX_BYTES;
const header = (len: number) => {
  const h = new Uint8Array(4);
  new DataView(h.buffer).setUint32(0, len, false);
  return h;
};
const concat = (parts: readonly Uint8Array[]) => new Uint8Array(Buffer.concat(parts));
/** Splits `bytes` at random points (chunks of 1 byte up to about 3x the average packet). */
function chunked(rng: Rng, bytes: Uint8Array, maxChunk: number): Uint8Array[] {
  const out: Uint8Array[] = [];
  for (let off = 0; off < bytes.length;) {
    const n = 1 + rng.int(Math.max(1, Math.min(maxChunk, bytes.length - off)));
    out.push(bytes.subarray(off, off + n));
    off += n;
  }
  return out;
}
function caught(fn: () => unknown): PacketFramingError {
  try {
    fn();
  } catch (err) {
    if (err instanceof PacketFramingError) return err;
    throw err;
  }
  throw new Error("expected a PacketFramingError");
}

describe("encode", () => {
  test("uint32 big-endian length then the payload", () => {
    expect([...encodeWanGossipPacket(new Uint8Array([7, 8, 9]))]).toEqual([0, 0, 0, 3, 7, 8, 9]);
    expect([...encodeWanGossipPacket(new Uint8Array(0))]).toEqual([0, 0, 0, 0]);
    expect([...encodeWanGossipPacket(new Uint8Array(0x10203)).subarray(0, 4)]).toEqual([0, 1, 2, 3]);
  });
  test("exactly 4 MiB is allowed, one byte more refused", () => {
    expect(encodeWanGossipPacket(new Uint8Array(MAX)).length).toBe(MAX + 4);
    const err = caught(() => encodeWanGossipPacket(new Uint8Array(MAX + 1)));
    expect(err.kind).toBe("oversize");
    expect(err.message).toBe(`gossip packet size ${MAX + 1} exceeds threshold of 4194304`);
  });
});

describe("decode", () => {
  test("several packets in one chunk, and one packet byte by byte", () => {
    const d = new WanGossipPacketDecoder();
    const got = d.push(concat([encodeWanGossipPacket(new Uint8Array([1])), encodeWanGossipPacket(new Uint8Array([])), encodeWanGossipPacket(new Uint8Array([2, 3]))]));
    expect(got.map((p) => [...p])).toEqual([[1], [], [2, 3]]);
    const bytes = encodeWanGossipPacket(new Uint8Array([4, 5, 6]));
    for (let i = 0; i < bytes.length - 1; i++) expect(d.push(bytes.subarray(i, i + 1))).toEqual([]);
    expect(d.buffered).toBe(bytes.length - 1);
    expect(d.push(bytes.subarray(bytes.length - 1)).map((p) => [...p])).toEqual([[4, 5, 6]]);
    expect(d.buffered).toBe(0);
    d.end();
  });

  test("an oversize length is refused at the header, before any body, and the decoder stays failed", () => {
    const d = new WanGossipPacketDecoder();
    const err = caught(() => d.push(header(0xffff_ffff)));
    expect(err.kind).toBe("oversize");
    expect(err.message).toBe("gossip packet size 4294967295 exceeds threshold of 4194304");
    expect(caught(() => d.push(new Uint8Array([1]))).kind).toBe("oversize");
    expect(caught(() => d.end()).kind).toBe("oversize");
  });

  test("a declared 4 MiB length holds only the bytes received, not the declared size", () => {
    const d = new WanGossipPacketDecoder();
    expect(d.push(header(MAX))).toEqual([]);
    expect(d.push(new Uint8Array(10))).toEqual([]);
    expect(d.buffered).toBe(14);
    expect(caught(() => d.end()).message).toBe("gossip packet stream ended inside a packet (14 bytes of it received)");
  });

  test("truncated inside a header", () => {
    const d = new WanGossipPacketDecoder();
    d.push(new Uint8Array([0, 0]));
    const err = caught(() => d.end());
    expect(err.kind).toBe("truncated");
  });
});

describe("seeded fuzz of lengths and chunking", () => {
  const SEEDS = [1, 2, 3, 42, 1337, 2024, 0xdeadbeef, 77777];

  /** Lengths that favour edges: 0, tiny, around 64 KiB, and (rarely) near the 4 MiB limit. */
  const length = (rng: Rng) => {
    const r = rng.int(100);
    if (r < 10) return 0;
    if (r < 60) return rng.int(64);
    if (r < 90) return rng.int(70_000);
    if (r < 97) return 65_536 + rng.int(3) - 1;
    return MAX - rng.int(2);
  };

  for (const seed of SEEDS) {
    test(`seed ${seed}: round trip, truncation at every cut inside a packet, oversize refused`, () => {
      const rng = seededRng(seed);
      const packets = Array.from({ length: 3 + rng.int(12) }, () => rng.bytes(length(rng)));
      const framed = packets.map(encodeWanGossipPacket);
      const stream = concat(framed);

      // Round trip under random chunking.
      const d = new WanGossipPacketDecoder();
      const out: Uint8Array[] = [];
      for (const c of chunked(rng, stream, 1 + rng.int(200_000))) {
        out.push(...d.push(c));
        expect({ seed, bound: d.buffered <= MAX + 4 }).toEqual({ seed, bound: true });
      }
      d.end();
      expect({ seed, n: out.length }).toEqual({ seed, n: packets.length });
      out.forEach((p, i) => expect({ seed, i, same: Buffer.compare(p, packets[i]!) === 0 }).toEqual({ seed, i, same: true }));

      // A cut at a packet boundary ends cleanly; a cut anywhere else is truncation.
      const boundaries = new Set<number>([0]);
      framed.reduce((off, f) => (boundaries.add(off + f.length), off + f.length), 0);
      for (let k = 0; k < 20; k++) {
        const cut = rng.int(stream.length + 1);
        const t = new WanGossipPacketDecoder();
        for (const c of chunked(rng, stream.subarray(0, cut), 50_000)) t.push(c);
        if (boundaries.has(cut)) t.end();
        else expect({ seed, cut, kind: caught(() => t.end()).kind }).toEqual({ seed, cut, kind: "truncated" });
      }

      // An oversize header after valid packets is refused without reading its body.
      const big = MAX + 1 + rng.int(0xffff_ffff - MAX);
      const o = new WanGossipPacketDecoder();
      const firstPackets = o.push(framed[0]!);
      expect(firstPackets.length).toBe(1);
      expect({ seed, big, kind: caught(() => o.push(concat([header(big), rng.bytes(16)]))).kind }).toEqual({ seed, big, kind: "oversize" });
    });
  }
});
