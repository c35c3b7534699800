import { afterEach, describe, expect, test } from "bun:test";
import { Buffer } from "node:buffer";
import type * as net from "node:net";
import { dialRefused, readExactly, startMux as startMuxHelper } from "../../test/harness/net_helpers.ts";
import { testPki } from "../../test/harness/tls_fixtures.ts";
import { TLS_HANDSHAKE_BYTE } from "./mux.ts";
import type { MuxConnectionInfo, ProtocolMuxOptions } from "./mux.ts";
import { dialTcp } from "./tcp.ts";
import { dialTls } from "./tls.ts";

const pki = testPki();
const HOST = "127.0.0.1";

const open: Array<{ close(): unknown }> = [];
afterEach(async () => {
  for (const c of open.splice(0).reverse()) await c.close();
});

/** A mux on an ephemeral port (see net_helpers.startMux), closed after the test. */
async function startMux(extra: Partial<ProtocolMuxOptions> = {}, withTls = true) {
  const m = await startMuxHelper(extra, withTls);
  open.push(m);
  return m;
}

describe("protocol mux", () => {
  test("exports the TLS handshake byte", () => {
    expect(TLS_HANDSHAKE_BYTE).toBe(0x16);
  });

  test("good client cert + ALPN x/test reaches the ALPN handler and data round-trips", async () => {
    const { mux, listener } = await startMux();
    const seen: MuxConnectionInfo[] = [];
    mux.registerAlpn("x/test", (sock, info) => {
      seen.push(info);
      sock.on("error", () => {});
      sock.on("data", (d) => sock.write(Buffer.concat([Buffer.from("echo:"), d])));
      sock.resume();
    });
    const t = await dialTls({
      host: HOST, port: listener.port, ca: pki.ca.cert, cert: pki.client.cert, key: pki.client.key,
      servername: "server.dc1.consul", alpn: ["x/test"],
    });
    expect(t.alpnProtocol).toBe("x/test");
    const localPort = t.localPort;
    t.write("hello");
    expect((await readExactly(t, 10)).toString()).toBe("echo:hello");
    t.destroy();
    expect(seen).toHaveLength(1);
    expect(seen[0]!.alpn).toBe("x/test");
    expect(seen[0]!.servername).toBe("server.dc1.consul");
    expect(seen[0]!.remotePort).toBe(localPort!);
    expect(seen[0]!.peerCertificate?.subject?.CN).toBe("client.dc1.consul");
  });

  test("client cert from a rogue CA is refused", async () => {
    const { mux, listener, waitFor } = await startMux();
    let called = false;
    mux.registerAlpn("x/test", (s) => { called = true; s.destroy(); });
    const port = await dialRefused(listener.port, { cert: pki.rogueClient.cert, key: pki.rogueClient.key, alpn: ["x/test"] });
    expect(await waitFor(new RegExp(`remote=127\\.0\\.0\\.1:${port} reason=.*tls handshake failed`))).toContain("connection refused");
    expect(called).toBe(false);
  });

  test("missing client cert is refused", async () => {
    const { mux, listener, waitFor } = await startMux();
    let called = false;
    mux.registerAlpn("x/test", (s) => { called = true; s.destroy(); });
    const port = await dialRefused(listener.port, { alpn: ["x/test"] });
    await waitFor(new RegExp(`remote=127\\.0\\.0\\.1:${port} reason=.*tls handshake failed`));
    expect(called).toBe(false);
  });

  test("unknown ALPN is closed and logged with the peer", async () => {
    const { mux, listener, waitFor } = await startMux();
    mux.registerAlpn("x/test", (s) => s.destroy());
    const port = await dialRefused(listener.port, { cert: pki.client.cert, key: pki.client.key, alpn: ["x/other"] });
    await waitFor(new RegExp(`remote=127\\.0\\.0\\.1:${port} reason=`));
  });

  test("TLS without ALPN is closed and logged", async () => {
    const { mux, listener, waitFor } = await startMux();
    mux.registerAlpn("x/test", (s) => s.destroy());
    const port = await dialRefused(listener.port, { cert: pki.client.cert, key: pki.client.key });
    await waitFor(new RegExp(`remote=127\\.0\\.0\\.1:${port} reason="no alpn negotiated"`));
  });

  test("plaintext marker: marker + payload in one write arrive intact", async () => {
    const { mux, listener } = await startMux();
    const payload = Buffer.from(Array.from({ length: 3000 }, (_, i) => i % 251));
    const got = new Promise<{ data: Buffer; info: MuxConnectionInfo }>((resolve) => {
      mux.registerMarker(0x01, (sock, info) => {
        void readExactly(sock as net.Socket, payload.length).then((data) => {
          sock.end("ok");
          resolve({ data, info });
        });
      });
    });
    const c = await dialTcp({ host: HOST, port: listener.port });
    const localPort = c.localPort;
    c.write(Buffer.concat([Buffer.from([0x01]), payload]));
    const { data, info } = await got;
    expect(data.equals(payload)).toBe(true);
    expect(info.marker).toBe(1);
    expect(info.remotePort).toBe(localPort!);
    expect((await readExactly(c, 2)).toString()).toBe("ok");
    c.destroy();
  });

  test("unknown marker is closed and logged", async () => {
    const { listener, waitFor } = await startMux();
    const c = await dialTcp({ host: HOST, port: listener.port });
    const localPort = c.localPort;
    const closed = new Promise((r) => c.once("close", r));
    c.write(Buffer.from([0x7f, 1, 2, 3]));
    await closed;
    await waitFor(new RegExp(`remote=127\\.0\\.0\\.1:${localPort} reason="unknown marker 0x7f"`));
  });

  test("allowPlaintextMarker can refuse a registered marker", async () => {
    const { mux, listener, waitFor } = await startMux({ allowPlaintextMarker: (m) => m !== 0x02 });
    mux.registerMarker(0x02, (s) => s.destroy());
    const c = await dialTcp({ host: HOST, port: listener.port });
    c.write(Buffer.from([0x02]));
    await new Promise((r) => c.once("close", r));
    await waitFor(/reason="plaintext marker 0x02 not allowed"/);
  });

  test("TLS byte without TLS configured is refused", async () => {
    const { listener, waitFor } = await startMux({}, false);
    const c = await dialTcp({ host: HOST, port: listener.port });
    const localPort = c.localPort;
    c.write(Buffer.from([TLS_HANDSHAKE_BYTE, 3, 1]));
    await new Promise((r) => c.once("close", r));
    await waitFor(new RegExp(`remote=127\\.0\\.0\\.1:${localPort} reason="tls not configured"`));
  });

  test("a silent connection is closed after the handshake timeout", async () => {
    const { listener, waitFor } = await startMux({ handshakeTimeoutMs: 150 });
    const c = await dialTcp({ host: HOST, port: listener.port });
    const localPort = c.localPort;
    await new Promise((r) => c.once("close", r));
    await waitFor(new RegExp(`remote=127\\.0\\.0\\.1:${localPort} reason="handshake timeout after 150ms"`));
  });

  test("a stalled TLS handshake is closed by the same deadline", async () => {
    const { listener, waitFor } = await startMux({ handshakeTimeoutMs: 150 });
    const c = await dialTcp({ host: HOST, port: listener.port });
    const localPort = c.localPort;
    c.write(Buffer.from([TLS_HANDSHAKE_BYTE]));
    await new Promise((r) => c.once("close", r));
    await waitFor(new RegExp(`remote=127\\.0\\.0\\.1:${localPort} reason="handshake timeout after 150ms"`));
  });

  test("registration rejects the TLS byte and duplicates", async () => {
    const { mux } = await startMux();
    expect(() => mux.registerMarker(TLS_HANDSHAKE_BYTE, () => {})).toThrow();
    mux.registerMarker(3, () => {});
    expect(() => mux.registerMarker(3, () => {})).toThrow();
    mux.registerAlpn("a", () => {});
    expect(() => mux.registerAlpn("a", () => {})).toThrow();
  });
});
