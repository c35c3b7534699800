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
async function echoPort(opts: { tls?: boolean; verifyIncomingRpc?: boolean; verifyServerHostname?: boolean; serve?: readonly ServerProtocol[] } = {}) {
  const logger = memoryLogger("debug");
  const seen: ServerPortConnection[] = [];
  const port = createServerPort({
    logger,
    clock: systemClock(),
    handshakeTimeoutMs: 1000,
    datacenter: "dc1",
    tls: opts.tls === false
      ? undefined
      : { material, verifyIncomingRpc: opts.verifyIncomingRpc ?? false, verifyServerHostname: opts.verifyServerHostname ?? false },
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

describe("server port: raft with verify_server_hostname (Consul's handleRaftRPC)", () => {
  type Cert = { cert: string; key: string };
  /** Sends `marker` + "x" inside the TLS upgrade with `cert`; the reply ("" when refused). */
  async function overUpgrade(port: number, marker: number, cert: Cert): Promise<string> {
    const raw = await dialTcp({ host: "127.0.0.1", port });
    raw.write(Buffer.from([MARKER.tlsUpgrade]));
    const t = await dialTls({ socket: raw, ...clientTls(cert) } as never);
    const reply = readAll(t);
    t.write(Buffer.concat([Buffer.from([marker]), Buffer.from("x")]));
    return reply;
  }
  async function overNativeTls(port: number, alpn: string, cert: Cert): Promise<string> {
    const s = await dialTls({ host: "127.0.0.1", port, alpn: [alpn], ...clientTls(cert) });
    const reply = readAll(s);
    s.write("x");
    return reply;
  }
  const raftRefusals = (lines: readonly string[]) =>
    lines.filter((l) => l.includes("connection refused") && l.includes("protocol=raft") && l.includes("server.dc1.consul"));

  test("only this datacenter's server certificate reaches raft over TLS; other protocols are not affected", async () => {
    const { listener, logger } = await echoPort({ verifyIncomingRpc: true, verifyServerHostname: true });
    // A client agent's certificate and another datacenter's server are refused, over the upgrade and natively.
    expect(await overUpgrade(listener.port, MARKER.raft, pki.client)).toBe("");
    expect(await overUpgrade(listener.port, MARKER.raft, pki.serverDc2)).toBe("");
    expect(await overNativeTls(listener.port, ALPN.raft, pki.client)).toBe("");
    await until(() => raftRefusals(logger.lines).length >= 3);
    expect(raftRefusals(logger.lines).length).toBe(3);
    // This datacenter's server is accepted both ways.
    expect(await overUpgrade(listener.port, MARKER.raft, pki.server)).toBe("raft:x");
    expect(await overNativeTls(listener.port, ALPN.raft, pki.server)).toBe("raft:x");
    // The client certificate still reaches RPC and the snapshot protocol.
    expect(await overUpgrade(listener.port, MARKER.rpc, pki.client)).toBe("rpc:x");
    expect(await overNativeTls(listener.port, ALPN.snapshot, pki.client)).toBe("snapshot:x");
  });

  test("without verify_incoming_rpc the upgrade asks for no certificate, and raft is not checked there (as in Consul)", async () => {
    const { listener, logger } = await echoPort({ verifyIncomingRpc: false, verifyServerHostname: true });
    expect(await overUpgrade(listener.port, MARKER.raft, pki.client)).toBe("raft:x");
    // Native TLS always has the client's certificate, so it is checked there.
    expect(await overNativeTls(listener.port, ALPN.raft, pki.client)).toBe("");
    await until(() => raftRefusals(logger.lines).length >= 1);
  });

  test("without verify_server_hostname any certificate of the CA reaches raft", async () => {
    const { listener } = await echoPort({ verifyIncomingRpc: true, verifyServerHostname: false });
    expect(await overUpgrade(listener.port, MARKER.raft, pki.client)).toBe("raft:x");
    expect(await overNativeTls(listener.port, ALPN.raft, pki.serverDc2)).toBe("raft:x");
  });
});

describe("server port: WAN gossip through mesh gateways", () => {
  /** A server port whose WAN gossip handlers echo "<kind>:" + the first bytes; RPC echoes as echoPort does. */
  async function wanPort(verifyServerHostname: boolean) {
    const logger = memoryLogger("debug");
    const got: { kind: string; remote: string; alpn: string | false }[] = [];
    const echo = (kind: string) => (conn: tls.TLSSocket, remote: string) => {
      got.push({ kind, remote, alpn: conn.alpnProtocol });
      conn.on("error", () => {});
      conn.once("data", (d: Buffer) => conn.end(`${kind}:${d.toString()}`));
      conn.resume();
    };
    const port = createServerPort({
      logger, clock: systemClock(), handshakeTimeoutMs: 1000, domain: "consul.",
      tls: { material, verifyIncomingRpc: true, verifyServerHostname },
      wanGossip: { packet: echo("packet"), stream: echo("stream") },
    });
    port.serve("grpc", (socket, conn) => {
      socket.on("error", () => {});
      socket.once("data", (d: Buffer) => socket.end(`${conn.protocol}:${d.toString()}`));
      socket.resume();
    });
    const listener = await listenTcp({ host: "127.0.0.1", port: 0, onConnection: (s) => port.accept(s) });
    open.push(listener, { close: () => port.close() });
    return { port, listener, logger, got };
  }

  /** Sends `text` over native TLS with `alpn` and the given client certificate; the reply ("" when refused). */
  async function exchange(port: number, alpn: string, cert: { cert: string; key: string }, text: string): Promise<string> {
    const s = await dialTls({ host: "127.0.0.1", port, alpn: [alpn], ...clientTls({ cert: cert.cert, key: cert.key, servername: "s1.server.dc1.consul" }) });
    const reply = readAll(s);
    s.write(text);
    return reply;
  }

  test("the wanGossip handlers get both protocols: the TLS socket after the handshake, paused with nothing lost, and the peer", async () => {
    const { listener, got } = await wanPort(false);
    expect(await exchange(listener.port, ALPN["wan-gossip-packet"], pki.serverDc2, "\x00\x00\x00\x01p")).toBe("packet:\x00\x00\x00\x01p");
    expect(await exchange(listener.port, ALPN["wan-gossip-stream"], pki.serverDc2, "push-pull")).toBe("stream:push-pull");
    expect(got.map((g) => [g.kind, g.alpn])).toEqual([["packet", ALPN["wan-gossip-packet"]], ["stream", ALPN["wan-gossip-stream"]]]);
    expect(got.every((g) => /^127\.0\.0\.1:\d+$/.test(g.remote))).toBe(true);
  });

  test("a protocol given by the wanGossip option cannot be served twice", async () => {
    const { port } = await wanPort(false);
    expect(() => port.serve("wan-gossip-stream", () => {})).toThrow("wan-gossip-stream is already served");
  });

  test("with verify_server_hostname only a server's certificate (of any datacenter) may gossip; RPC is not affected", async () => {
    const { listener, logger, got } = await wanPort(true);
    // A client agent's certificate (CN client.dc1.consul, no server name) is refused for both protocols.
    expect(await exchange(listener.port, ALPN["wan-gossip-packet"], pki.client, "x")).toBe("");
    expect(await exchange(listener.port, ALPN["wan-gossip-stream"], pki.client, "x")).toBe("");
    const refusals = logger.lines.filter((l) => l.includes("connection refused") && l.includes("does not name a server (server.<dc>.consul.)"));
    expect(refusals.length).toBe(2);
    expect(got).toEqual([]);
    // Servers of this datacenter and of another one are accepted.
    expect(await exchange(listener.port, ALPN["wan-gossip-packet"], pki.serverDc2, "a")).toBe("packet:a");
    expect(await exchange(listener.port, ALPN["wan-gossip-stream"], pki.server, "b")).toBe("stream:b");
    // The same client certificate still reaches RPC.
    expect(await exchange(listener.port, ALPN.grpc, pki.client, "c")).toBe("grpc:c");
  });

  test("without verify_server_hostname any certificate of the CA may gossip (mutual TLS is still required)", async () => {
    const { listener } = await wanPort(false);
    expect(await exchange(listener.port, ALPN["wan-gossip-packet"], pki.client, "x")).toBe("packet:x");
    const rogue = await exchange(listener.port, ALPN["wan-gossip-packet"], pki.rogueClient, "x").catch(() => "");
    expect(rogue).toBe("");
  });
});
