import { afterEach, describe, expect, test } from "bun:test";
import * as tls from "node:tls";
import { testPki } from "../../test/harness/tls_fixtures.ts";
import { listenTcp } from "./tcp.ts";
import { createTlsServer, dialTls } from "./tls.ts";
import type { TlsServerOptions } from "./tls.ts";

const pki = testPki();
const HOST = "127.0.0.1";
const material = { ca: pki.ca.cert, cert: pki.server.cert, key: pki.server.key };
const client = { ca: pki.ca.cert, cert: pki.client.cert, key: pki.client.key };

const open: Array<{ close(): unknown }> = [];
afterEach(async () => {
  for (const c of open.splice(0).reverse()) await c.close();
});

/** A TLS echo server fed through emit("connection") as the mux does; returns its port. */
async function echoServer(options: Partial<TlsServerOptions> = {}) {
  const server = createTlsServer({ material, requireClientCert: true, alpn: ["h2", "x/test"], ...options });
  const secured: tls.TLSSocket[] = [];
  server.on("secureConnection", (t: tls.TLSSocket) => {
    secured.push(t);
    t.on("error", () => {});
    t.on("data", (d) => t.write(d));
  });
  server.on("tlsClientError", () => {});
  const listener = await listenTcp({ host: HOST, port: 0, onConnection: (s) => server.emit("connection", s) });
  open.push(listener);
  return { port: listener.port, secured };
}

const failure = (p: Promise<unknown>) => p.then(() => undefined, (e: unknown) => e as Error & { code?: string });

describe("tls", () => {
  test("mTLS handshake negotiates ALPN and verifies the server name", async () => {
    const { port, secured } = await echoServer();
    const t = await dialTls({ host: HOST, port, ...client, servername: "server.dc1.consul", alpn: ["x/test", "h2"] });
    expect(["x/test", "h2"]).toContain(t.alpnProtocol as string);
    expect(t.authorized).toBe(true);
    const echoed = new Promise<string>((r) => t.once("data", (d) => r(String(d))));
    t.write("hi");
    expect(await echoed).toBe("hi");
    expect(secured[0]!.getPeerCertificate().subject.CN).toBe("client.dc1.consul");
    t.destroy();
  });

  test("an IP host is checked against the IP SAN when no servername is given", async () => {
    const { port } = await echoServer();
    const t = await dialTls({ host: HOST, port, ...client, alpn: ["h2"] });
    expect(t.alpnProtocol).toBe("h2");
    t.destroy();
  });

  test("hostname mismatch rejects unless verifyHostname is false", async () => {
    const { port } = await echoServer();
    const err = await failure(dialTls({ host: HOST, port, ...client, servername: "other.example" }));
    expect(err?.message).toContain(`dial tls ${HOST}:${port}:`);
    expect(err?.code).toBe("ERR_TLS_CERT_ALTNAME_INVALID");
    const t = await dialTls({ host: HOST, port, ...client, servername: "other.example", verifyHostname: false });
    expect(t.authorized).toBe(true);
    t.destroy();
  });

  test("an unknown server CA is rejected", async () => {
    const { port } = await echoServer();
    const err = await failure(dialTls({ host: HOST, port, ...client, ca: pki.rogueCa.cert, servername: "server.dc1.consul" }));
    expect(err?.message).toContain(`dial tls ${HOST}:${port}:`);
  });

  test("without requireClientCert no client cert is needed", async () => {
    const { port, secured } = await echoServer({ requireClientCert: false });
    const t = await dialTls({ host: HOST, port, ca: pki.ca.cert, servername: "localhost" });
    const echoed = new Promise<string>((r) => t.once("data", (d) => r(String(d))));
    t.write("x");
    expect(await echoed).toBe("x");
    expect(Object.keys(secured[0]!.getPeerCertificate() ?? {})).toHaveLength(0);
    t.destroy();
  });

  test("sniCallback sees the requested server name", async () => {
    const names: string[] = [];
    const ctx = tls.createSecureContext({ cert: pki.server.cert, key: pki.server.key, ca: pki.ca.cert });
    const { port } = await echoServer({ sniCallback: (name, cb) => { names.push(name); cb(null, ctx); } });
    const t = await dialTls({ host: HOST, port, ...client, servername: "server.dc1.consul" });
    t.destroy();
    expect(names).toEqual(["server.dc1.consul"]);
  });

  test("a silent server fails the dial at the deadline", async () => {
    const listener = await listenTcp({ host: HOST, port: 0, onConnection: () => {} });
    open.push(listener);
    const err = await failure(dialTls({ host: HOST, port: listener.port, ...client, timeoutMs: 100 }));
    expect(err?.message).toBe(`dial tls ${HOST}:${listener.port}: timed out after 100ms`);
    expect(err?.code).toBe("ETIMEDOUT");
  });
});
