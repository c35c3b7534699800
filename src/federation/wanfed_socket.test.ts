/**
 * The socket adapter and the TLS gateway dial over real loopback TLS (port 0, the test PKI): a dc2
 * wanfed transport sends packets and a stream to a dc1 transport whose "server port" is a TLS server
 * that hands connections over by negotiated ALPN, paused, as the real server port does.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type * as net from "node:net";
import type * as tls from "node:tls";
import type { GossipStream } from "../membership/index.ts";
import { createTlsServer, silentLogger, systemClock } from "../platform/index.ts";
import { testPki } from "../../test/harness/tls_fixtures.ts";
import { WAN_GOSSIP_PACKET_ALPN, WAN_GOSSIP_STREAM_ALPN } from "./names.ts";
import { socketConnection, tlsGatewayDial } from "./wanfed_socket.ts";
import { recordingTransport } from "./wanfed_fixtures.test.ts";
import { createWanfedTransport, type WanfedTransport } from "./wanfed_transport.ts";

const pki = testPki();
const material = { ca: pki.ca.cert, cert: pki.server.cert, key: pki.server.key };
let server: tls.Server;
let port = 0;
let dc1: WanfedTransport;
const packets: Array<[string, string]> = [];
let onPacket = () => {};
let onStream: (s: GossipStream) => void = () => {};

beforeAll(async () => {
  dc1 = createWanfedTransport({
    local: recordingTransport("10.1.0.1:8302"), localDc: "dc1", domain: "consul", nameOf: () => undefined,
    resolveGateway: () => ({ ok: false, message: "unused" }), dial: () => Promise.reject(new Error("unused")),
    clock: systemClock(), logger: silentLogger(),
  });
  dc1.listen({
    packet(from, b) {
      packets.push([from, Buffer.from(b).toString()]);
      onPacket();
    },
    stream: (s) => onStream(s),
  });
  server = createTlsServer({ material, requireClientCert: true, alpn: [WAN_GOSSIP_PACKET_ALPN, WAN_GOSSIP_STREAM_ALPN] });
  server.on("secureConnection", (socket: tls.TLSSocket) => {
    socket.pause(); // the server port delivers sockets paused
    const remote = `${socket.remoteAddress}:${socket.remotePort}`;
    if (socket.alpnProtocol === WAN_GOSSIP_PACKET_ALPN) dc1.acceptPacketConnection(socketConnection(socket), remote);
    else dc1.acceptStreamConnection(socketConnection(socket), remote);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  port = (server.address() as net.AddressInfo).port;
});

afterAll(async () => {
  await dc1.close();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

function dc2Transport(): WanfedTransport {
  return createWanfedTransport({
    local: recordingTransport("10.2.0.1:8302"), localDc: "dc2", domain: "consul",
    nameOf: (addr) => (addr === "10.1.0.1:8302" ? "s1.dc1" : undefined),
    resolveGateway: () => ({ ok: true, address: `127.0.0.1:${port}` }),
    dial: tlsGatewayDial(material), clock: systemClock(), logger: silentLogger(),
  });
}

describe("wanfed over real TLS", () => {
  test("packets: one pooled TLS connection with the packet ALPN; the far side gets each packet whole", async () => {
    const dc2 = dc2Transport();
    const got = new Promise<void>((resolve) => (onPacket = () => packets.length === 3 && resolve()));
    await dc2.sendPacket("10.1.0.1:8302", new TextEncoder().encode("one"));
    await dc2.sendPacket("10.1.0.1:8302", new TextEncoder().encode("two"));
    await dc2.sendPacket("10.1.0.1:8302", new TextEncoder().encode("three"));
    await got;
    expect(packets.map(([, b]) => b)).toEqual(["one", "two", "three"]);
    expect(new Set(packets.map(([from]) => from)).size).toBe(1);
    expect(dc2.stats().pool).toMatchObject({ dials: 1, reused: 2, open: 1 });
    await dc2.close();
  });

  test("a stream: a fresh TLS connection with the stream ALPN, bytes both ways", async () => {
    const dc2 = dc2Transport();
    onStream = (s) => {
      s.read({ data: (c) => void s.write(new Uint8Array([...c].reverse())).then(() => s.close()), end: () => {} });
    };
    const s = await dc2.dialStream("*.dc1/192.0.2.2:8302", 5000);
    expect(s.remote).toBe(`*.dc1 via 127.0.0.1:${port}`);
    const echoed = new Promise<number[]>((resolve) => {
      const bytes: number[] = [];
      s.read({ data: (c) => void bytes.push(...c), end: () => resolve(bytes) });
    });
    await s.write(new Uint8Array([1, 2, 3]));
    expect(await echoed).toEqual([3, 2, 1]);
    s.close();
    await dc2.close();
  });

  test("a server name the certificate does not carry fails the dial (hostname verification is always on)", async () => {
    const dial = tlsGatewayDial(material);
    await expect(dial(`127.0.0.1:${port}`, "s1.server.dc9.consul", WAN_GOSSIP_PACKET_ALPN, 5000)).rejects.toThrow("dial tls 127.0.0.1");
  });

  test("an ALPN protocol the server does not offer fails the dial: by the server's alert, or by our check when it ignores ALPN", async () => {
    const dial = tlsGatewayDial(material);
    await expect(dial(`127.0.0.1:${port}`, "s1.server.dc1.consul", "causeway/raft", 5000)).rejects.toThrow("NO_APPLICATION_PROTOCOL");
    const noAlpn = createTlsServer({ material, requireClientCert: true });
    noAlpn.on("secureConnection", (socket: tls.TLSSocket) => socket.destroy());
    await new Promise<void>((resolve) => noAlpn.listen(0, "127.0.0.1", resolve));
    const other = (noAlpn.address() as net.AddressInfo).port;
    try {
      await expect(dial(`127.0.0.1:${other}`, "s1.server.dc1.consul", WAN_GOSSIP_PACKET_ALPN, 5000)).rejects.toThrow(
        `dial tls 127.0.0.1:${other} (s1.server.dc1.consul): the server did not agree to ALPN ${WAN_GOSSIP_PACKET_ALPN} (got none)`,
      );
    } finally {
      await new Promise<void>((resolve) => noAlpn.close(() => resolve()));
    }
  });
});
