import { describe, expect, test } from "bun:test";
import { syncExtra, trimResponse, uncompressedSize, type TrimOptions } from "./trim.ts";
import { DnsType, encodeMessage, type DnsMessage, type DnsRecord } from "./wire.ts";

const FLAGS = { qr: true, opcode: 0, aa: true, tc: false, rd: true, ra: false, rcode: 0 };
const DEFAULTS: TrimOptions = { udpAnswerLimit: 3, enableTruncate: false, compress: true };

const a = (name: string, address: string): DnsRecord => ({ name, type: DnsType.A, class: 1, ttl: 0, data: { type: "A", address } });
const cname = (name: string, target: string): DnsRecord => ({ name, type: DnsType.CNAME, class: 1, ttl: 0, data: { type: "CNAME", name: target } });
const srv = (name: string, target: string, port = 8080): DnsRecord => ({
  name, type: DnsType.SRV, class: 1, ttl: 0, data: { type: "SRV", srv: { priority: 1, weight: 1, port, target } },
});
const txt = (name: string, strings: string[]): DnsRecord => ({ name, type: DnsType.TXT, class: 1, ttl: 0, data: { type: "TXT", strings } });
const soa: DnsRecord = {
  name: "consul", type: DnsType.SOA, class: 1, ttl: 0,
  data: { type: "SOA", soa: { mname: "ns.consul", rname: "hostmaster.consul", serial: 1, refresh: 3600, retry: 600, expire: 86400, minimum: 0 } },
};
const opt = (size: number): DnsRecord => ({ name: "", type: DnsType.OPT, class: size, ttl: 0, data: { type: "raw", bytes: new Uint8Array(0) } });

const msg = (qname: string, qtype: number, answers: DnsRecord[], authority: DnsRecord[] = [], additional: DnsRecord[] = []): DnsMessage => ({
  id: 7, flags: FLAGS, questions: [{ name: qname, type: qtype, class: 1 }], answers, authority, additional,
});

const WEB = "web.service.consul";
/** `n` A answers for web.service.consul: 10.0.x.y. */
const aAnswers = (n: number, owner = WEB) => Array.from({ length: n }, (_, i) => a(owner, `10.0.${i >> 8}.${i & 255}`));
/** `n` SRV answers with long node targets and one A extra per target. */
function srvWithExtras(n: number, first = 0) {
  const targets = Array.from({ length: n }, (_, i) => `ip-10-0-1-${first + i}.a-rather-long-node-name.node.dc1.consul`);
  return { answers: targets.map((t) => srv("redis.service.consul", t)), extras: targets.map((t, i) => a(t, `10.0.1.${(first + i) & 255}`)) };
}
/** Each SRV answer's target owns the Additional record at the same position. */
function expectAligned(m: DnsMessage) {
  expect(m.additional.length).toBe(m.answers.length);
  m.answers.forEach((rr, i) => expect(rr.data.type === "SRV" && rr.data.srv.target).toBe(m.additional[i]!.name));
}

describe("trimResponse over UDP", () => {
  test("without EDNS the default limit keeps 3 of 5 answers; TC only with enable_truncate", () => {
    const resp = msg(WEB, DnsType.A, aAnswers(5));
    const plain = trimResponse(resp, "udp", undefined, DEFAULTS);
    expect(plain.trimmed).toBe(true);
    expect(plain.message.answers).toEqual(resp.answers.slice(0, 3));
    expect(plain.message.flags.tc).toBe(false);
    const flagged = trimResponse(resp, "udp", undefined, { ...DEFAULTS, enableTruncate: true });
    expect(flagged.message.answers.length).toBe(3);
    expect(flagged.message.flags.tc).toBe(true);
  });

  test("nothing to cut: not trimmed, message unchanged (OPT and TXT extras kept), no TC", () => {
    const resp = msg(WEB, DnsType.SRV, [srv(WEB, "n1.node.dc1.consul")], [], [a("n1.node.dc1.consul", "10.0.0.1"), txt("n1.node.dc1.consul", ["k=v"]), opt(512)]);
    const r = trimResponse(resp, "udp", 512, { ...DEFAULTS, enableTruncate: true });
    expect(r.trimmed).toBe(false);
    expect(r.message).toEqual(resp);
    expect(r.message).not.toBe(resp);
  });

  test("the limit is capped at 8, and 0 gives no answers", () => {
    expect(trimResponse(msg(WEB, DnsType.A, aAnswers(12)), "udp", undefined, { ...DEFAULTS, udpAnswerLimit: 20 }).message.answers.length).toBe(8);
    const zero = trimResponse(msg(WEB, DnsType.A, aAnswers(2)), "udp", undefined, { ...DEFAULTS, udpAnswerLimit: 0 });
    expect(zero.message.answers).toEqual([]);
    expect(zero.trimmed).toBe(true);
  });

  test("an EDNS size over 512 lifts the count limit; one of 512 or less does not", () => {
    const resp = msg(WEB, DnsType.A, aAnswers(20));
    const big = trimResponse(resp, "udp", 4096, DEFAULTS);
    expect(big.trimmed).toBe(false);
    expect(big.message.answers.length).toBe(20);
    expect(trimResponse(resp, "udp", 512, DEFAULTS).message.answers.length).toBe(3);
    expect(trimResponse(resp, "udp", 300, DEFAULTS).message.answers.length).toBe(3);
  });

  test("many SRV answers over 512 bytes: fits in 512, authority dropped, Additional aligned (syncExtra)", () => {
    const { answers, extras } = srvWithExtras(100);
    const resp = msg("redis.service.consul", DnsType.SRV, answers, [soa], [...extras, opt(512)]);
    // Even the 3 answers left by the count limit do not fit, so the size loop runs too.
    const r = trimResponse(resp, "udp", undefined, { ...DEFAULTS, enableTruncate: true });
    expect(r.trimmed).toBe(true);
    expect(r.message.flags.tc).toBe(true);
    expect(r.message.answers.length).toBeGreaterThan(0);
    expect(r.message.answers.length).toBeLessThan(3);
    expect(r.message.authority).toEqual([]);
    expectAligned(r.message);
    expect(encodeMessage(r.message).length).toBeLessThanOrEqual(512);
    expect(uncompressedSize(r.message)).toBeLessThanOrEqual(512 - 8);
  });

  test("EDNS 2048 keeps more SRV answers than plain UDP, within 2048-8 bytes (TrimSizeEDNS)", () => {
    const { answers, extras } = srvWithExtras(100, 150);
    const resp = msg("redis.service.consul", DnsType.SRV, answers, [soa], extras);
    const plain = trimResponse(resp, "udp", undefined, DEFAULTS);
    const edns = trimResponse(resp, "udp", 2048, DEFAULTS);
    expect(plain.trimmed && edns.trimmed).toBe(true);
    expect(edns.message.answers.length).toBeGreaterThan(plain.message.answers.length);
    expect(edns.message.answers).toEqual(answers.slice(0, edns.message.answers.length));
    expect(encodeMessage(edns.message).length).toBeLessThanOrEqual(2048 - 8);
    expect(encodeMessage(edns.message).length).toBeGreaterThan(2048 - 8 - 200);
    expectAligned(plain.message);
    expectAligned(edns.message);
  });

  test("the EDNS size is capped at 65467", () => {
    const r = trimResponse(msg("", DnsType.A, aAnswers(5000, "")), "udp", 65535, DEFAULTS);
    expect(r.trimmed).toBe(true);
    const size = encodeMessage(r.message).length;
    expect(size).toBeLessThanOrEqual(65467 - 8);
    expect(size).toBeGreaterThan(65467 - 8 - 30);
  });

  test("size is measured uncompressed when the count limit ran, compressed otherwise (as Consul)", () => {
    // A 200-byte owner name: 2 bytes per answer compressed, 200 uncompressed.
    const owner = Array.from({ length: 4 }, (_, i) => `${"l".repeat(48)}${i}`).join(".");
    const answers = Array.from({ length: 4 }, (_, i) => srv(owner, `n${i}.node.dc1.consul`));
    const three = msg(owner, DnsType.SRV, answers.slice(0, 3));
    expect(encodeMessage(three).length).toBeLessThan(504);
    expect(uncompressedSize(three)).toBeGreaterThan(504);
    // 3 answers: no count limit, compressed measurement, all kept.
    expect(trimResponse(three, "udp", undefined, DEFAULTS).trimmed).toBe(false);
    // 4 answers: the count limit runs, then the uncompressed measurement cuts further.
    const four = trimResponse(msg(owner, DnsType.SRV, answers), "udp", undefined, DEFAULTS);
    expect(four.message.answers.length).toBeLessThan(3);
    expect(uncompressedSize(four.message)).toBeLessThanOrEqual(504);
    // disable_compression: always measured uncompressed.
    expect(trimResponse(three, "udp", undefined, { ...DEFAULTS, compress: false }).message.answers.length).toBeLessThan(3);
  });

  test("a single oversized answer is still sent; of several, the first is kept even if alone too big", () => {
    const huge = txt(WEB, Array.from({ length: 4 }, () => "x".repeat(255)));
    const single = trimResponse(msg(WEB, DnsType.TXT, [huge], [soa]), "udp", undefined, DEFAULTS);
    expect(single.trimmed).toBe(false);
    expect(single.message.answers).toEqual([huge]);
    expect(single.message.authority).toEqual([soa]);
    const two = trimResponse(msg(WEB, DnsType.TXT, [huge, txt(WEB, ["small"])]), "udp", undefined, DEFAULTS);
    expect(two.trimmed).toBe(true);
    expect(two.message.answers).toEqual([huge]);
  });

  test("the input message is not mutated", () => {
    const { answers, extras } = srvWithExtras(50);
    const resp = msg("redis.service.consul", DnsType.SRV, answers, [soa], [...extras, opt(4096)]);
    const before = structuredClone(resp);
    trimResponse(resp, "udp", undefined, { ...DEFAULTS, enableTruncate: true });
    trimResponse(resp, "udp", 1024, { ...DEFAULTS, enableTruncate: true });
    trimResponse(resp, "tcp", undefined, { ...DEFAULTS, enableTruncate: true });
    expect(resp).toEqual(before);
  });
});

describe("trimResponse over TCP", () => {
  test("answers are pre-cut to 4096, or 1024 for an SRV question", () => {
    // Root-owned A answers are 15 bytes each, so 4096 of them fit in 65523 bytes.
    const many = aAnswers(5000, "");
    const r = trimResponse(msg("", DnsType.A, many), "tcp", undefined, { ...DEFAULTS, enableTruncate: true });
    expect(r.message.answers).toEqual(many.slice(0, 4096));
    expect(r.trimmed).toBe(true);
    expect(r.message.flags.tc).toBe(true);
    const srvs = Array.from({ length: 1500 }, (_, i) => srv("", "", i));
    expect(trimResponse(msg("", DnsType.SRV, srvs), "tcp", undefined, DEFAULTS).message.answers.length).toBe(1024);
    const asA = trimResponse(msg("", DnsType.A, srvs), "tcp", undefined, DEFAULTS);
    expect(asA.trimmed).toBe(false);
    expect(asA.message.answers.length).toBe(1500);
  });

  test("the UDP count limit does not apply; the size loop keeps the message within 65523 bytes", () => {
    expect(trimResponse(msg(WEB, DnsType.A, aAnswers(20)), "tcp", undefined, DEFAULTS).trimmed).toBe(false);
    const { answers, extras } = srvWithExtras(1500);
    const r = trimResponse(msg("redis.service.consul", DnsType.A, answers, [soa], extras), "tcp", undefined, DEFAULTS);
    expect(r.trimmed).toBe(true);
    expect(r.message.authority).toEqual([]);
    expectAligned(r.message);
    const size = encodeMessage(r.message).length;
    expect(size).toBeLessThanOrEqual(65523);
    expect(size).toBeGreaterThan(65523 - 200);
  });
});

describe("syncExtra", () => {
  test("follows CNAME chains case-insensitively, drops unrelated records and duplicates, survives loops", () => {
    const answers = [
      srv(WEB, "ip-10-0-1-185.node.dc1.consul", 1001),
      srv(WEB, "ip-10-0-1-185.node.dc1.consul", 1002), // same host: its extra only once
      srv(WEB, "demo.example.com", 1003), // CNAME then A, stored in the opposite order
      srv(WEB, "insensitive.example.com"), // owner in another case
      srv(WEB, "loop.example.com"), // CNAME to itself
      srv(WEB, "dangling.example.com."), // CNAME to nothing; trailing dot ignored
      a(WEB, "10.9.9.9"), // not an SRV: ignored
    ];
    const extra = [
      a("ip-10-0-1-185.node.dc1.consul", "10.0.1.185"),
      a("ip-10-0-1-185.node.dc1.consul", "10.0.1.185"),
      a("fake.example.com", "127.0.0.1"),
      cname("demo.example.com", "fake.example.com"),
      cname("INSENSITIVE.EXAMPLE.COM", "Another.Server.Com"),
      a("another.server.com", "127.0.0.2"),
      a("ip-10-0-1-186.node.dc1.consul", "10.0.1.186"),
      txt("ip-10-0-1-186.node.dc1.consul", ["meta=1"]),
      cname("loop.example.com", "loop.example.com"),
      cname("dangling.example.com", "nowhere.example.com"),
      opt(4096),
    ];
    expect(syncExtra(answers, extra)).toEqual([
      extra[0]!, extra[3]!, extra[2]!, extra[4]!, extra[5]!, extra[8]!, extra[9]!,
    ]);
  });

  test("only the first record per owner is used, and an OPT never matches", () => {
    const extra = [a("n1", "10.0.0.1"), { ...a("n1", "::1"), type: DnsType.AAAA, data: { type: "AAAA" as const, address: "::1" } }, opt(512)];
    expect(syncExtra([srv(WEB, "n1"), srv(WEB, "")], extra)).toEqual([extra[0]!]);
    expect(syncExtra([], extra)).toEqual([]);
  });
});

test("uncompressedSize equals the encoded size when no name can be compressed", () => {
  const m = msg("q", DnsType.ANY, [a("b", "10.0.0.1"), srv("c", "d.e"), txt("f", ["gh", ""]), cname("i", "j")], [
    { ...soa, name: "k", data: { type: "SOA", soa: { mname: "l", rname: "m", serial: 1, refresh: 2, retry: 3, expire: 4, minimum: 5 } } },
  ], [opt(1232)]);
  expect(uncompressedSize(m)).toBe(encodeMessage(m).length);
});
