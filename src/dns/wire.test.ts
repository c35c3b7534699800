import { describe, expect, test } from "bun:test";
import { seededRng } from "../platform/index.ts";
import { decodeMessage, DnsType, DnsWireError, encodeMessage, type DnsMessage, type DnsRecord } from "./wire.ts";

const FLAGS = { qr: true, opcode: 0, aa: true, tc: false, rd: true, ra: false, rcode: 0 };
const rr = (name: string, type: number, data: DnsRecord["data"], ttl = 30): DnsRecord => ({ name, type, class: 1, ttl, data });

const SAMPLE: DnsMessage = {
  id: 0xbeef,
  flags: FLAGS,
  questions: [{ name: "web.service.consul", type: DnsType.SRV, class: 1 }],
  answers: [
    rr("web.service.consul", DnsType.SRV, { type: "SRV", srv: { priority: 1, weight: 1, port: 8080, target: "node1.node.dc1.consul" } }),
    rr("web.service.consul", DnsType.A, { type: "A", address: "10.0.0.1" }),
    rr("web.service.consul", DnsType.AAAA, { type: "AAAA", address: "2001:db8::1" }),
    rr("node1.node.dc1.consul", DnsType.TXT, { type: "TXT", strings: ["rack=a", ""] }),
    rr("1.0.0.10.in-addr.arpa", DnsType.PTR, { type: "PTR", name: "node1.node.dc1.consul" }),
    rr("alias.consul", DnsType.CNAME, { type: "CNAME", name: "web.service.consul" }),
  ],
  authority: [
    rr("consul", DnsType.SOA, { type: "SOA", soa: { mname: "ns.consul", rname: "hostmaster.consul", serial: 4_000_000_000, refresh: 3600, retry: 600, expire: 86400, minimum: 0 } }),
    rr("consul", DnsType.NS, { type: "NS", name: "ns.consul" }),
  ],
  additional: [{ name: "", type: DnsType.OPT, class: 4096, ttl: 0, data: { type: "raw", bytes: new Uint8Array(0) } }],
};

const decodeError = (b: Uint8Array) => {
  try {
    decodeMessage(b);
    return "decoded";
  } catch (err) {
    if (!(err instanceof DnsWireError)) throw err;
    return err.message;
  }
};

describe("DNS wire format", () => {
  test("every record type round-trips; names are compressed (SRV targets are not)", () => {
    const bytes = encodeMessage(SAMPLE);
    expect(decodeMessage(bytes)).toEqual(SAMPLE);
    // The question's name is written once; later copies are 2-byte pointers.
    const text = new TextDecoder("latin1").decode(bytes);
    expect(text.split("web").length - 1).toBe(1); // the question; every later web.service.consul is a pointer
    expect(text.split("node1").length - 1).toBe(2); // the SRV target (never compressed, RFC 2782) and the TXT name
    expect(bytes.length).toBeLessThan(300);
  });

  test("IPv6 addresses print in RFC 5952 form", () => {
    const one = (address: string) => (decodeMessage(encodeMessage({ ...SAMPLE, answers: [rr("x", DnsType.AAAA, { type: "AAAA", address })], authority: [], additional: [] })).answers[0]!.data as { address: string }).address;
    expect(one("2001:0DB8:0000:0000:0000:0000:0000:0001")).toBe("2001:db8::1");
    expect(one("::")).toBe("::");
    expect(one("1:0:0:2:0:0:0:3")).toBe("1:0:0:2::3");
    expect(one("::ffff:10.0.0.1")).toBe("::ffff:a00:1");
    expect(() => encodeMessage({ ...SAMPLE, answers: [rr("x", DnsType.AAAA, { type: "AAAA", address: "1::2::3" })] })).toThrow("not an IPv6 address");
    expect(() => encodeMessage({ ...SAMPLE, answers: [rr("x", DnsType.A, { type: "A", address: "10.0.0.256" })] })).toThrow("not an IPv4 address");
  });

  test("malformed messages are refused with what and where", () => {
    const ok = encodeMessage({ ...SAMPLE, answers: [], authority: [], additional: [] });
    expect(decodeError(ok.subarray(0, 5))).toBe("truncated header at byte 4");
    expect(decodeError(ok.subarray(0, ok.length - 1))).toMatch(/^truncated question 0 at byte/);
    expect(decodeError(Uint8Array.from([...ok, 0]))).toBe("1 bytes after the last record");
    // A pointer to itself, and one pointing forwards.
    const header = [0, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0];
    expect(decodeError(Uint8Array.from([...header, 0xc0, 12, 0, 1, 0, 1]))).toBe("compression pointer in question 0 at byte 12 does not point backwards");
    expect(decodeError(Uint8Array.from([...header, 0xc0, 20, 0, 1, 0, 1, 0, 0, 0]))).toMatch(/does not point backwards/);
    expect(() => encodeMessage({ ...SAMPLE, questions: [{ name: `${"a".repeat(64)}.consul`, type: 1, class: 1 }] })).toThrow("label over 63 bytes");
    expect(decodeError(Uint8Array.from([...header, 0x40, 0, 0, 1, 0, 1]))).toBe("unsupported label type in question 0 at byte 12");
    const long = Array.from({ length: 5 }, () => [63, ...new Array(63).fill(97)]).flat();
    expect(decodeError(Uint8Array.from([...header, ...long, 0, 0, 1, 0, 1]))).toBe("name over 255 bytes in question 0");
    // An A record with 3 bytes of data.
    const a = [0, 1, 0x80, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 1, 0, 1, 0, 0, 0, 0, 0, 3, 10, 0, 0];
    expect(decodeError(Uint8Array.from(a))).toBe("answer 0: an A record needs 4 bytes, got 3");
  });

  test("seeded fuzz: mutated and random packets decode or fail with a DnsWireError, never anything else", () => {
    const seed = 20261203;
    const rng = seededRng(seed);
    const base = encodeMessage(SAMPLE);
    let refused = 0;
    for (let i = 0; i < 20_000; i++) {
      const b = i % 4 === 0 ? rng.bytes(rng.int(64)) : Uint8Array.from(base);
      if (i % 4 !== 0) for (let k = 1 + rng.int(4); k > 0; k--) b[rng.int(b.length)] = rng.int(256);
      const input = i % 7 === 0 ? b.subarray(0, rng.int(b.length + 1)) : b;
      try {
        const m = decodeMessage(input);
        // What decodes re-encodes, and decodes to the same message.
        expect(decodeMessage(encodeMessage(m))).toEqual(m);
      } catch (err) {
        if (!(err instanceof DnsWireError)) throw new Error(`seed ${seed}, case ${i}: ${String(err)}`);
        refused++;
      }
    }
    expect(refused).toBeGreaterThan(1000);
  });
});

describe("DNS over TCP framing", () => {
  test("messages split across chunks and several in one chunk come out whole and in order", async () => {
    const { frameTcp, tcpMessages } = await import("./tcp_framing.ts");
    const got: number[][] = [];
    const feed = tcpMessages((m) => void got.push([...m]));
    const stream = Uint8Array.from([...frameTcp(Uint8Array.of(1, 2, 3)), ...frameTcp(Uint8Array.of()), ...frameTcp(Uint8Array.of(9))]);
    feed(stream.subarray(0, 1));
    feed(stream.subarray(1, 4));
    feed(stream.subarray(4));
    expect(got).toEqual([[1, 2, 3], [], [9]]);
  });
});
