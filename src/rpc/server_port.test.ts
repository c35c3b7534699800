import { afterEach, describe, expect, test } from "bun:test";
import type * as net from "node:net";
import * as tls from "node:tls";
import { dialTcp, dialTls, listenTcp, memoryLogger, systemClock, type TcpListener } from "../platform/index.ts";
import { testPki } from "../../test/harness/tls_fixtures.ts";
import { ALL_PROTOCOLS, ALPN, MARKER, markerOf, type ServerProtocol } from "./protocols.ts";
import { createServerPort, type ServerPortConnection } from "./server_port.ts";

const pki = testPki();
const material = { ca: pki.ca.cert, cert: pki.server.cert, key: pki.server.key };
const open: { close(): unknown }[] = [];
afterEach(async () => {
  for (const c of open.splice(0).reverse()) await c.close();
});

/** A server port where every protocol echoes "<protocol>:" + the first bytes it reads. */
async function echoPort(opts: { tls?: boolean; verifyIncomingRpc?: boolean; serve?: readonly ServerProtocol[] } = {}) {
  const logger = memoryLogger("debug");
  const seen: ServerPortConnection[] = [];
  const port = createServerPort({
    logger,
    clock: systemClock(),
    handshakeTimeoutMs: 1000,
    tls: opts.tls === false ? undefined : { material, verifyIncomingRpc: opts.verifyIncomingRpc ?? false },
  });
  for (const p of opts.serve ?? ALL_PROTOCOLS) {
    port.serve(p, (socket, conn) => {
      seen.push(conn);
      socket.on("error", () => {});
      socket.once("data", (d: Buffer) => socket.end(`${conn.protocol}:${d.toString()}`));
      socket.resume();
    });
  }
  const listener: TcpListener = await listenTcp({ host: "127.0.0.1", port: 0, onConnection: (s) => port.accept(s) });
  open.push(listener, { close: () => port.close() });
  return { port, listener, logger, seen };
}

/** Reads everything until the peer closes. */
function readAll(s: net.Socket | tls.TLSSocket): Promise<string> {
  return new Promise((resolve) => {
    let out = "";
    s.on("data", (d: Buffer) => (out += d.toString()));
    s.on("error", () => {});
    s.on("close", () => resolve(out));
  });
}

/** Resolves once `cond` holds (checked as events arrive); the test's timeout is the failure guard. */
async function until(cond: () => boolean): Promise<void> {
  while (!cond()) await new Promise((r) => setImmediate(r));
}

const clientTls = (extra: Partial<tls.ConnectionOptions> = {}) => ({ ca: pki.ca.cert, cert: pki.client.cert, key: pki.client.key, servername: "server.dc1.consul", ...extra });

describe("server port", () => {
  test("every plaintext marker reaches its protocol, with the bytes after the marker intact", async () => {
    const { listener, seen } = await echoPort({ tls: false });
    for (const protocol of ALL_PROTOCOLS) {
      const marker = markerOf(protocol);
      if (marker === undefined) continue;
      const s = await dialTcp({ host: "127.0.0.1", port: listener.port });
      const reply = readAll(s);
      s.write(Buffer.concat([Buffer.from([marker]), Buffer.from("hello")]));
      expect(await reply).toBe(`${protocol}:hello`);
    }
    expect(seen.every((c) => c.via === "plaintext")).toBe(true);
  });

  test("every ALPN name reaches its protocol over native mutual TLS", async () => {
    const { listener, seen } = await echoPort();
    for (const [protocol, alpn] of Object.entries(ALPN)) {
      const s = await dialTls({ host: "127.0.0.1", port: listener.port, alpn: [alpn], ...clientTls() });
      expect(s.alpnProtocol).toBe(alpn);
      const reply = readAll(s);
      s.write("ping");
      expect(await reply).toBe(`${protocol}:ping`);
    }
    expect(seen.map((c) => c.via)).toEqual(Array(6).fill("native-tls"));
    expect(seen[0]!.servername).toBe("server.dc1.consul");
    expect(seen[0]!.peerCertificate?.subject?.CN).toBe("client.dc1.consul");
  });

  test("the TLS upgrade marker carries a second marker inside TLS", async () => {
    const { listener, seen } = await echoPort();
    const raw = await dialTcp({ host: "127.0.0.1", port: listener.port });
    raw.write(Buffer.from([MARKER.tlsUpgrade]));
    const t = await dialTls({ socket: raw, ...clientTls() } as never);
    const reply = readAll(t);
    t.write(Buffer.concat([Buffer.from([MARKER.raft]), Buffer.from("entries")]));
    expect(await reply).toBe("raft:entries");
    expect(seen[0]).toMatchObject({ protocol: "raft", via: "tls-upgrade" });
  });

  test("TLS inside TLS is refused", async () => {
    const { listener, logger } = await echoPort();
    const raw = await dialTcp({ host: "127.0.0.1", port: listener.port });
    raw.write(Buffer.from([MARKER.tlsUpgrade]));
    const t = await dialTls({ socket: raw, ...clientTls() } as never);
    const closed = readAll(t);
    t.write(Buffer.from([MARKER.tlsUpgrade]));
    expect(await closed).toBe("");
    expect(logger.lines.some((l) => l.includes('reason="TLS inside TLS"'))).toBe(true);
  });

  test("verify_incoming_rpc refuses plaintext markers but allows the TLS upgrade (with a client certificate)", async () => {
    const { listener, logger } = await echoPort({ verifyIncomingRpc: true });
    const plain = await dialTcp({ host: "127.0.0.1", port: listener.port });
    const refused = readAll(plain);
    plain.write(Buffer.from([MARKER.rpc, 1, 2, 3]));
    expect(await refused).toBe("");
    expect(logger.lines.some((l) => l.includes("plaintext marker 0x00 not allowed"))).toBe(true);

    const raw = await dialTcp({ host: "127.0.0.1", port: listener.port });
    raw.write(Buffer.from([MARKER.tlsUpgrade]));
    const t = await dialTls({ socket: raw, ...clientTls() } as never);
    const reply = readAll(t);
    t.write(Buffer.concat([Buffer.from([MARKER.rpc]), Buffer.from("x")]));
    expect(await reply).toBe("rpc:x");
  });

  test("native TLS refuses a missing client certificate and one from another CA, and logs the peer", async () => {
    const { listener, logger } = await echoPort();
    for (const extra of [{ cert: undefined, key: undefined }, { cert: pki.rogueClient.cert, key: pki.rogueClient.key }]) {
      const s = await dialTls({ host: "127.0.0.1", port: listener.port, alpn: [ALPN.rpc], ...clientTls(extra) }).catch(() => undefined);
      if (s) {
        const r = readAll(s);
        s.write("x");
        expect(await r).toBe("");
      }
    }
    const refusals = () => logger.lines.filter((l) => l.includes("connection refused") && l.includes("remote=127.0.0.1:"));
    await until(() => refusals().length >= 2);
    expect(refusals().length).toBe(2);
  });

  test("a client checking the server name refuses a certificate without it", async () => {
    const { listener } = await echoPort();
    await expect(dialTls({ host: "127.0.0.1", port: listener.port, alpn: [ALPN.rpc], ...clientTls({ servername: "server.dc2.consul" }) })).rejects.toThrow();
  });

  test("protocols that are not served yet close with a log line; unknown markers and ALPN names are refused", async () => {
    const { listener, logger } = await echoPort({ serve: ["rpc"] });
    const s = await dialTls({ host: "127.0.0.1", port: listener.port, alpn: [ALPN["wan-gossip-packet"]], ...clientTls() });
    const r = readAll(s);
    s.write("x");
    expect(await r).toBe("");
    expect(logger.lines.some((l) => l.includes("protocol not served yet") && l.includes("protocol=wan-gossip-packet"))).toBe(true);

    const unknown = await dialTcp({ host: "127.0.0.1", port: listener.port });
    const r2 = readAll(unknown);
    unknown.write(Buffer.from([0x42]));
    expect(await r2).toBe("");
    expect(logger.lines.some((l) => l.includes("unknown marker 0x42"))).toBe(true);

    const badAlpn = await dialTls({ host: "127.0.0.1", port: listener.port, alpn: ["causeway/nope"], ...clientTls() }).catch(() => undefined);
    if (badAlpn) {
      const r3 = readAll(badAlpn);
      expect(await r3).toBe("");
    }
  });
});
