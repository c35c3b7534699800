import { beforeAll, describe, expect, test } from "bun:test";
import { createClientHelloParser, DEFAULT_MAX_CLIENT_HELLO_BYTES, parseClientHello, type ClientHelloResult } from "./client_hello.ts";
import { captureNodeHello, captureOpensslHello, handshakeBytes, haveOpenssl, hello, helloMessage, inRecords } from "./client_hello_kit.test.ts";

const bytes = (...b: number[]) => Uint8Array.from(b);
const ascii = (s: string) => new TextEncoder().encode(s);
const concat = (...parts: Uint8Array[]) => Uint8Array.from(parts.flatMap((p) => [...p]));

/** Feeds `data` split at the given offsets and returns every intermediate result. */
function feedSplit(data: Uint8Array, cuts: readonly number[], maxBytes?: number): ClientHelloResult[] {
  const p = createClientHelloParser({ maxBytes });
  const points = [0, ...cuts, data.length];
  return points.slice(1).map((end, i) => p.feed(data.subarray(points[i]!, end)));
}

const real: Record<string, Uint8Array> = {};

beforeAll(async () => {
  real.sniAlpn = await captureNodeHello({ servername: "Foo.Example.COM", ALPNProtocols: ["h2", "http/1.1"] });
  real.noSni = await captureNodeHello({});
  real.tls12 = await captureNodeHello({ servername: "db.dc2.internal.example.consul", maxVersion: "TLSv1.2" });
  if (haveOpenssl) real.openssl = await captureOpensslHello(["-servername", "Web.Service.Consul", "-alpn", "h2"]);
});

describe("real ClientHellos", () => {
  test("node:tls with SNI and ALPN: lower-cased name, protocols in order", () => {
    expect(parseClientHello(real.sniAlpn!)).toEqual({ state: "done", serverName: "foo.example.com", alpn: ["h2", "http/1.1"] });
  });

  test("node:tls to an IP address sends no SNI", () => {
    expect(parseClientHello(real.noSni!)).toEqual({ state: "done", serverName: undefined, alpn: [] });
  });

  test("a TLS 1.2-only client", () => {
    expect(parseClientHello(real.tls12!)).toMatchObject({ state: "done", serverName: "db.dc2.internal.example.consul" });
  });

  test.skipIf(!haveOpenssl)("openssl s_client", () => {
    expect(parseClientHello(real.openssl!)).toEqual({ state: "done", serverName: "web.service.consul", alpn: ["h2"] });
  });

  test("split at every byte offset: 'more' before the cut, the same answer after", () => {
    for (const data of Object.values(real)) {
      const whole = parseClientHello(data);
      for (let cut = 1; cut < data.length; cut++) {
        const [first, second] = feedSplit(data, [cut]);
        expect(first).toEqual({ state: "more" });
        expect(second).toEqual(whole);
      }
    }
  });

  test("fed one byte at a time", () => {
    const data = real.sniAlpn!;
    const results = feedSplit(data, Array.from({ length: data.length - 1 }, (_, i) => i + 1));
    expect(results.slice(0, -1).every((r) => r.state === "more")).toBe(true);
    expect(results.at(-1)).toMatchObject({ state: "done", serverName: "foo.example.com" });
  });

  test("the handshake message spread over many records, each split everywhere", () => {
    for (const size of [1, 2, 3, 4, 5, 7, 64, 1000]) {
      const data = inRecords(handshakeBytes(real.sniAlpn!), size);
      expect(parseClientHello(data)).toMatchObject({ state: "done", serverName: "foo.example.com", alpn: ["h2", "http/1.1"] });
    }
    const data = inRecords(handshakeBytes(real.tls12!), 10);
    for (let cut = 1; cut < data.length; cut++) expect(feedSplit(data, [cut])[1]).toMatchObject({ state: "done", serverName: "db.dc2.internal.example.consul" });
  });

  test("bytes after the ClientHello are ignored and the result stays put", () => {
    const p = createClientHelloParser();
    const first = p.feed(concat(real.sniAlpn!, ascii("early data that belongs upstream")));
    expect(first.state).toBe("done");
    expect(p.feed(ascii("GET / HTTP/1.1\r\n"))).toBe(first);
    expect(p.result).toBe(first);
  });
});

describe("hand-built hellos", () => {
  test("no extensions at all, and extensions without SNI", () => {
    expect(parseClientHello(hello({ noExtensions: true }))).toEqual({ state: "done", serverName: undefined, alpn: [] });
    expect(parseClientHello(hello({ alpn: ["h2"], extensions: [[43, bytes(2, 3, 4)]] }))).toEqual({ state: "done", serverName: undefined, alpn: ["h2"] });
  });

  test("only ASCII letters are lower-cased; other bytes come through one char per byte", () => {
    const r = parseClientHello(hello({ serverName: Uint8Array.from([0x41, 0x5a, 0x2d, 0xc0, 0x7a]) }));
    expect(r).toMatchObject({ state: "done", serverName: "az-\u00c0z" });
  });

  test("a 255-byte name is accepted, 256 is not", () => {
    expect(parseClientHello(hello({ serverName: "a".repeat(255) }))).toMatchObject({ state: "done", serverName: "a".repeat(255) });
    expect(parseClientHello(hello({ serverName: "a".repeat(256) }))).toMatchObject({ state: "failed", reason: "malformed" });
  });

  const malformed: [string, Uint8Array, string][] = [
    ["an empty server name", hello({ serverName: "" }), "server_name length 0"],
    ["a NUL in the server name", hello({ serverName: "a\0b" }), "NUL"],
    ["two names in server_name", hello({ extensions: [[0, bytes(0, 10, 0, 0, 2, 0x61, 0x62, 0, 0, 2, 0x63, 0x64)]] }), "exactly one name"],
    ["a name type other than host_name", hello({ extensions: [[0, bytes(0, 5, 1, 0, 2, 0x61, 0x62)]] }), "type 1 is not host_name"],
    ["a server_name list length that disagrees", hello({ extensions: [[0, bytes(0, 9, 0, 0, 2, 0x61, 0x62)]] }), "server_name list length"],
    ["a repeated extension", hello({ serverName: "a.b", extensions: [[0, bytes(0, 4, 0, 0, 1, 0x61)]] }), "appears twice"],
    ["an empty ALPN protocol", hello({ extensions: [[16, bytes(0, 4, 2, 0x68, 0x32, 0)]] }), "ALPN protocol name length"],
    ["an empty ALPN list", hello({ extensions: [[16, bytes(0, 0)]] }), "ALPN list length"],
    ["an ALPN name running past its list", hello({ extensions: [[16, bytes(0, 3, 5, 0x68, 0x32)]] }), "ALPN protocol name length"],
  ];
  for (const [what, data, detail] of malformed) {
    test(`refuses ${what}`, () => {
      const r = parseClientHello(data);
      expect(r).toMatchObject({ state: "failed", reason: "malformed" });
      expect(r.state === "failed" && r.detail).toContain(detail);
    });
  }

  test("refuses a body whose extensions length disagrees, or with trailing bytes", () => {
    const msg = helloMessage({ serverName: "a.b" });
    const longer = Uint8Array.from([...msg, 0]);
    longer[3] = longer[3]! + 1; // the handshake length covers the extra byte
    expect(parseClientHello(inRecords(longer))).toMatchObject({ state: "failed", reason: "malformed" });
    const truncated = msg.subarray(0, msg.length - 1).slice();
    truncated[3] = truncated[3]! - 1;
    expect(parseClientHello(inRecords(truncated))).toMatchObject({ state: "failed", reason: "malformed" });
  });

  test("refuses broken fixed fields: version, session id, cipher suites, compression", () => {
    const variants: [number, number, string][] = [
      [4, 2, "version major 2"],
      [4 + 34, 33, "session_id"], // longer than 32
      [4 + 35, 0xff, "cipher_suites"], // runs past the message
      [4 + 36, 3, "cipher_suites"], // odd length
      [4 + 41, 0, "compression_methods"], // none
    ];
    for (const [offset, value, detail] of variants) {
      const msg = helloMessage({ serverName: "a.b" });
      msg[offset] = value;
      const r = parseClientHello(inRecords(msg));
      expect(r).toMatchObject({ state: "failed", reason: "malformed" });
      expect(r.state === "failed" && r.detail).toContain(detail);
    }
  });
});

describe("not a ClientHello", () => {
  test("HTTP, SSH and other plain text are not TLS after the first byte", () => {
    for (const text of ["GET / HTTP/1.1\r\nHost: x\r\n\r\n", "SSH-2.0-OpenSSH_9.6\r\n", "PRI * HTTP/2.0\r\n"]) {
      const p = createClientHelloParser();
      expect(p.feed(ascii(text).subarray(0, 1))).toMatchObject({ state: "failed", reason: "not_tls" });
      expect(p.consumed).toBe(1);
    }
  });

  test("an SSLv2-compatible ClientHello is recognised as such once its third byte is in", () => {
    const v2 = bytes(0x80, 0x2e, 0x01, 0x00, 0x02, 0x00, 0x15, 0x00, 0x00, 0x00, 0x10);
    const r = feedSplit(v2, [1, 2]);
    expect(r.map((x) => x.state)).toEqual(["more", "more", "failed"]);
    expect(r[2]).toMatchObject({ reason: "sslv2" });
    expect(parseClientHello(bytes(0x80, 0x2e, 0x04))).toMatchObject({ state: "failed", reason: "not_tls" });
  });

  test("a handshake record with a foreign version is not TLS", () => {
    expect(parseClientHello(bytes(0x16, 0x02, 0x00))).toMatchObject({ state: "failed", reason: "not_tls" });
  });

  test("records that cannot carry a ClientHello are malformed", () => {
    expect(parseClientHello(bytes(0x16, 3, 1, 0, 0))).toMatchObject({ state: "failed", reason: "malformed" }); // empty record
    expect(parseClientHello(bytes(0x16, 3, 1, 0x40, 0x01))).toMatchObject({ state: "failed", reason: "malformed" }); // > 2^14
    expect(parseClientHello(bytes(0x16, 3, 1, 0, 4, 2, 0, 0, 0))).toMatchObject({ state: "failed", reason: "malformed" }); // server_hello
    const msg = helloMessage({ serverName: "a.b" });
    const alert = concat(inRecords(msg.subarray(0, 10)), bytes(0x15, 3, 3, 0, 2, 1, 0));
    expect(parseClientHello(alert)).toMatchObject({ state: "failed", reason: "malformed" });
    const oldVersion = concat(inRecords(msg.subarray(0, 10)), bytes(0x16, 2, 0, 0, 2, 1, 0));
    expect(parseClientHello(oldVersion)).toMatchObject({ state: "failed", reason: "malformed" });
  });

  test("an empty feed and a partial record header ask for more", () => {
    expect(parseClientHello(new Uint8Array(0))).toEqual({ state: "more" });
    expect(parseClientHello(bytes(0x16, 3))).toEqual({ state: "more" });
  });
});

describe("size bound", () => {
  const padding = (n: number): [number, Uint8Array] => [21, new Uint8Array(n)];

  test(`defaults to ${DEFAULT_MAX_CLIENT_HELLO_BYTES} bytes; a bigger hello is refused as soon as its length is read`, () => {
    const big = hello({ serverName: "a.b", extensions: [padding(20_000)] });
    const p = createClientHelloParser();
    expect(p.feed(big.subarray(0, 9))).toMatchObject({ state: "failed", reason: "too_large" });
    expect(p.consumed).toBe(9);
    expect(parseClientHello(big, { maxBytes: 64 * 1024 })).toMatchObject({ state: "done", serverName: "a.b" });
  });

  test("a hello that only outgrows the bound through its record headers is refused at the bound", () => {
    const msg = helloMessage({ serverName: "a.b", extensions: [padding(3_000)] });
    const data = inRecords(msg, 1); // 6 bytes on the wire per handshake byte
    const p = createClientHelloParser();
    expect(p.feed(data)).toMatchObject({ state: "failed", reason: "too_large" });
    expect(p.consumed).toBe(DEFAULT_MAX_CLIENT_HELLO_BYTES);
    expect(parseClientHello(data, { maxBytes: data.length })).toMatchObject({ state: "done" });
  });

  test("a hello of exactly maxBytes fits; one byte less does not", () => {
    const data = hello({ serverName: "x.y", extensions: [padding(500)] });
    expect(parseClientHello(data, { maxBytes: data.length })).toMatchObject({ state: "done", serverName: "x.y" });
    expect(parseClientHello(data, { maxBytes: data.length - 1 })).toMatchObject({ state: "failed", reason: "too_large" });
    for (let cut = 1; cut < data.length; cut += 37) expect(feedSplit(data, [cut], data.length)[1]).toMatchObject({ state: "done" });
  });

  test("real hellos fit the default bound with room to spare", () => {
    for (const data of Object.values(real)) expect(data.length).toBeLessThan(DEFAULT_MAX_CLIENT_HELLO_BYTES / 4);
  });
});
