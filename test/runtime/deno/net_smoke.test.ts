/**
 * Deno smoke suite for the networking ports of src/platform (tcp, tls, mux, http2, udp).
 * Run: npx deno test -A test/runtime/deno/net_smoke.test.ts
 */
import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import type * as net from "node:net";
import type * as tls from "node:tls";
import * as grpc from "@grpc/grpc-js";
import { ADS_TYPES, adsRoundTrip, dialRefused, echoAds, readExactly, startMux } from "../../harness/net_helpers.ts";
import { testPki } from "../../harness/tls_fixtures.ts";
import { createGrpcServer } from "../../../src/platform/http2.ts";
import { silentLogger } from "../../../src/platform/logger.ts";
import type { MuxConnectionInfo } from "../../../src/platform/mux.ts";
import { dialTcp, listenTcp } from "../../../src/platform/tcp.ts";
import { dialTls } from "../../../src/platform/tls.ts";
import { bindUdp } from "../../../src/platform/udp.ts";

const pki = testPki();
const HOST = "127.0.0.1";
const opts = { sanitizeOps: false, sanitizeResources: false };

Deno.test("mux mTLS: good cert + ALPN x/test round-trips", opts, async () => {
  const m = await startMux();
  try {
    let info: MuxConnectionInfo | undefined;
    m.mux.registerAlpn("x/test", (sock, i) => {
      info = i;
      sock.on("error", () => {});
      sock.on("data", (d) => sock.write(d));
      sock.resume();
    });
    const t = await dialTls({ host: HOST, port: m.listener.port, ca: pki.ca.cert, cert: pki.client.cert, key: pki.client.key, servername: "server.dc1.consul", alpn: ["x/test"] });
    assert.equal(t.alpnProtocol, "x/test");
    t.write("ping");
    assert.equal((await readExactly(t, 4)).toString(), "ping");
    t.destroy();
    assert.equal(info?.alpn, "x/test");
    assert.equal(info?.peerCertificate?.subject?.CN, "client.dc1.consul");
  } finally { await m.close(); }
});

Deno.test("mux mTLS: rogue-CA client cert refused", opts, async () => {
  const m = await startMux();
  try {
    let called = false;
    m.mux.registerAlpn("x/test", (s) => { called = true; s.destroy(); });
    const port = await dialRefused(m.listener.port, { cert: pki.rogueClient.cert, key: pki.rogueClient.key, alpn: ["x/test"] });
    await m.waitFor(new RegExp(`remote=127\\.0\\.0\\.1:${port} reason=.*tls handshake failed`));
    assert.equal(called, false);
  } finally { await m.close(); }
});

Deno.test("mux mTLS: missing client cert refused", opts, async () => {
  const m = await startMux();
  try {
    let called = false;
    m.mux.registerAlpn("x/test", (s) => { called = true; s.destroy(); });
    const port = await dialRefused(m.listener.port, { alpn: ["x/test"] });
    await m.waitFor(new RegExp(`remote=127\\.0\\.0\\.1:${port} reason=.*tls handshake failed`));
    assert.equal(called, false);
  } finally { await m.close(); }
});

Deno.test("mux: unknown ALPN closed and logged", opts, async () => {
  const m = await startMux();
  try {
    m.mux.registerAlpn("x/test", (s) => s.destroy());
    const port = await dialRefused(m.listener.port, { cert: pki.client.cert, key: pki.client.key, alpn: ["x/other"] });
    await m.waitFor(new RegExp(`remote=127\\.0\\.0\\.1:${port} reason=`));
  } finally { await m.close(); }
});

Deno.test("mux: plaintext marker first chunk preserved", opts, async () => {
  const m = await startMux();
  try {
    const payload = Buffer.from(Array.from({ length: 3000 }, (_, i) => i % 251));
    const got = new Promise<Buffer>((resolve) => {
      m.mux.registerMarker(0x01, (sock) => void readExactly(sock as net.Socket, payload.length).then((d) => { sock.destroy(); resolve(d); }));
    });
    const c = await dialTcp({ host: HOST, port: m.listener.port });
    c.on("error", () => {});
    c.write(Buffer.concat([Buffer.from([0x01]), payload]));
    assert.ok((await got).equals(payload));
    c.destroy();
  } finally { await m.close(); }
});

Deno.test("mux: unknown marker closed and logged", opts, async () => {
  const m = await startMux();
  try {
    const c = await dialTcp({ host: HOST, port: m.listener.port });
    const localPort = c.localPort;
    const closed = new Promise((r) => c.once("close", r));
    c.write(Buffer.from([0x7f, 1]));
    await closed;
    await m.waitFor(new RegExp(`remote=127\\.0\\.0\\.1:${localPort} reason="unknown marker 0x7f"`));
  } finally { await m.close(); }
});

Deno.test("http2: gRPC bidi stream over h2c (grpc-js client)", opts, async () => {
  const server = createGrpcServer({ routes: echoAds, logger: silentLogger() });
  try {
    const l = await server.listen({ host: HOST, port: 0 });
    const { versions, status } = await adsRoundTrip(`${HOST}:${l.port}`, grpc.credentials.createInsecure());
    assert.deepEqual(versions, ADS_TYPES);
    assert.equal(status.code, grpc.status.OK);
  } finally { await server.close(); }
});

Deno.test("http2: gRPC bidi stream over mTLS through the mux (ALPN h2)", opts, async () => {
  const server = createGrpcServer({ routes: echoAds, logger: silentLogger() });
  const m = await startMux();
  try {
    m.mux.registerAlpn("h2", (sock) => server.acceptTlsSocket(sock as tls.TLSSocket));
    const creds = grpc.credentials.createSsl(Buffer.from(pki.ca.cert), Buffer.from(pki.client.key), Buffer.from(pki.client.cert));
    const { versions, status } = await adsRoundTrip(`${HOST}:${m.listener.port}`, creds, { "grpc.ssl_target_name_override": "server.dc1.consul" });
    assert.deepEqual(versions, ADS_TYPES);
    assert.equal(status.code, grpc.status.OK);
  } finally { await server.close(); await m.close(); }
});

Deno.test("udp: round trip", opts, async () => {
  let resolveEcho!: (v: { data: Uint8Array; port: number }) => void;
  const echoed = new Promise<{ data: Uint8Array; port: number }>((r) => { resolveEcho = r; });
  const server = await bindUdp({ host: HOST, port: 0, onMessage: (data, from) => void server.send(data, from.port, from.address) });
  const client = await bindUdp({ host: HOST, port: 0, onMessage: (data, from) => resolveEcho({ data, port: from.port }) });
  try {
    await client.send(new TextEncoder().encode("gossip"), server.port, HOST);
    const { data, port } = await echoed;
    assert.equal(new TextDecoder().decode(data), "gossip");
    assert.equal(port, server.port);
  } finally { await client.close(); await server.close(); }
});

Deno.test("mux: a silent connection is closed after the handshake timeout", opts, async () => {
  const m = await startMux({ handshakeTimeoutMs: 150 }, false);
  try {
    const c = await dialTcp({ host: HOST, port: m.listener.port });
    const localPort = c.localPort;
    await new Promise((r) => c.once("close", r));
    await m.waitFor(new RegExp(`remote=127\\.0\\.0\\.1:${localPort} reason="handshake timeout after 150ms"`));
  } finally { await m.close(); }
});

Deno.test("tls: hostname verification and unknown server CA", opts, async () => {
  const m = await startMux();
  try {
    m.mux.registerAlpn("x/test", (s) => s.destroy());
    const base = { host: HOST, port: m.listener.port, cert: pki.client.cert, key: pki.client.key, alpn: ["x/test"] };
    await assert.rejects(dialTls({ ...base, ca: pki.ca.cert, servername: "other.example" }), /dial tls 127\.0\.0\.1:\d+:/);
    await assert.rejects(dialTls({ ...base, ca: pki.rogueCa.cert, servername: "server.dc1.consul" }), /dial tls 127\.0\.0\.1:\d+:/);
    const t = await dialTls({ ...base, ca: pki.ca.cert, servername: "other.example", verifyHostname: false });
    t.on("error", () => {});
    t.destroy();
  } finally { await m.close(); }
});

Deno.test("tcp: close() destroys accepted connections; refused dial names host:port", opts, async () => {
  const listener = await listenTcp({ host: HOST, port: 0, onConnection: () => {} });
  const c = await dialTcp({ host: HOST, port: listener.port });
  c.on("error", () => {});
  const closed = new Promise((r) => c.once("close", r));
  await listener.close();
  await closed;
  await assert.rejects(dialTcp({ host: HOST, port: listener.port, timeoutMs: 2000 }), (e: Error & { code?: string }) =>
    e.message.startsWith(`dial tcp ${HOST}:${listener.port}:`) && e.code === "ECONNREFUSED");
});
