import { afterEach, describe, expect, test } from "bun:test";
import type * as net from "node:net";
import type { Duplex } from "node:stream";
import { createTlsServer, listenTcp, silentLogger, systemClock, type TcpListener } from "../platform/index.ts";
import { startFakeGateway } from "../../test/harness/rpc_cluster.ts";
import { testPki } from "../../test/harness/tls_fixtures.ts";
import { dialServer, dialThroughGateway, serverName, type GatewayRoute, type ServerDialSettings } from "./dialer.ts";
import { NoPathError } from "./errors.ts";
import { ALPN, MARKER } from "./protocols.ts";
import { createServerPort, type ServerPortConnection } from "./server_port.ts";

const pki = testPki();
const dc1 = { ca: pki.ca.cert, cert: pki.server.cert, key: pki.server.key };
const dc2 = { ca: pki.ca.cert, cert: pki.serverDc2.cert, key: pki.serverDc2.key };
const open: { close(): unknown }[] = [];
afterEach(async () => {
  for (const l of open.splice(0).reverse()) await l.close();
});

describe("serverName", () => {
  test("names a node's server or any server of a datacenter", () => {
    expect(serverName("dc1", "consul", "n1")).toBe("n1.server.dc1.consul");
    expect(serverName("dc2", "consul.", undefined)).toBe("server.dc2.consul");
    expect(serverName("dc2", "consul", "*")).toBe("server.dc2.consul");
  });
});

describe("dialServer", () => {
  test("plaintext within the datacenter: the protocol's marker byte comes first", async () => {
    const first = new Promise<number>((resolve) => {
      void listenTcp({ host: "127.0.0.1", port: 0, onConnection: (s: net.Socket) => s.once("data", (d: Buffer) => resolve(d[0]!)) }).then((l) => {
        open.push(l);
        void dialServer({ datacenter: "dc1", domain: "consul" }, `127.0.0.1:${l.port}`, { datacenter: "dc1" }, "raft");
      });
    });
    expect(await first).toBe(MARKER.raft);
  });

  test("another datacenter without TLS is refused before dialing", async () => {
    await expect(dialServer({ datacenter: "dc1", domain: "consul" }, "127.0.0.1:1", { datacenter: "dc2" }, "rpc")).rejects.toThrow("cannot dial a server in dc2 without TLS");
  });

  test("across datacenters TLS is used even without verify_outgoing, with the server name checked", async () => {
    const tlsServer = createTlsServer({ material: dc1, requireClientCert: true, alpn: [ALPN.grpc, ALPN.raft] });
    const seen = new Promise<{ servername?: string; alpn?: string | false }>((resolve) =>
      tlsServer.once("secureConnection", (t) => resolve({ servername: (t as { servername?: string }).servername, alpn: t.alpnProtocol })),
    );
    const l = await listenTcp({ host: "127.0.0.1", port: 0, onConnection: (s) => tlsServer.emit("connection", s) });
    open.push(l);
    const settings = { datacenter: "dc9", domain: "consul", tls: { material: dc1, verifyOutgoing: false } };
    const ok = await dialServer(settings, `127.0.0.1:${l.port}`, { datacenter: "dc1", node: "n1" }, "rpc");
    expect(ok.alpnProtocol).toBe(ALPN.grpc);
    expect(await seen).toEqual({ servername: "server.dc1.consul", alpn: ALPN.grpc });
    ok.destroy();
    // The certificate names dc1 servers only: dialing it as a dc2 server fails hostname verification.
    await expect(dialServer(settings, `127.0.0.1:${l.port}`, { datacenter: "dc2" }, "raft")).rejects.toThrow(/server\.dc2\.consul/);
  });
});

/** A server port (its datacenter's server certificate) answering RPC and WAN gossip packets with "<protocol>:<bytes>". */
async function echoServerPort(material: typeof dc1) {
  const seen: ServerPortConnection[] = [];
  const port = createServerPort({ logger: silentLogger(), clock: systemClock(), tls: { material, verifyIncomingRpc: true } });
  for (const p of ["grpc", "wan-gossip-packet"] as const) {
    port.serve(p, (socket, conn) => {
      seen.push(conn);
      socket.on("error", () => {});
      socket.once("data", (d: Buffer) => socket.end(`${conn.protocol}:${d.toString()}`));
      socket.resume();
    });
  }
  const listener = await listenTcp({ host: "127.0.0.1", port: 0, onConnection: (s) => port.accept(s) });
  open.push(listener, { close: () => port.close() });
  return { port: listener.port, seen };
}

/** Writes `text` and reads until the peer closes. */
function roundTrip(s: Duplex, text: string): Promise<string> {
  return new Promise((resolve) => {
    let out = "";
    s.on("data", (d: Buffer) => (out += d.toString()));
    s.on("error", () => {});
    s.on("close", () => resolve(out));
    s.write(text);
  });
}

/** A listener standing for a server's own address: it counts connections, which must stay 0 through a gateway. */
async function directAddress() {
  let dialled = 0;
  const l = await listenTcp({ host: "127.0.0.1", port: 0, onConnection: (s) => (dialled++, s.destroy()) });
  open.push(l);
  return { address: `127.0.0.1:${l.port}`, dialled: () => dialled };
}

describe("dialServer through mesh gateways (WAN federation)", () => {
  const settings = (viaGateway: (dc: string) => GatewayRoute, verifyOutgoing = true): ServerDialSettings =>
    ({ datacenter: "dc1", domain: "consul", tls: { material: dc1, verifyOutgoing }, viaGateway });

  test("another datacenter's server: TCP to the picked gateway, SNI <node>.server.<dc>.<domain> or server.<dc>.<domain>, the protocol's ALPN", async () => {
    const server = await echoServerPort(dc2);
    const gw = await startFakeGateway((sni) => (sni?.endsWith("server.dc2.consul") ? server.port : undefined));
    open.push(gw);
    const direct = await directAddress();
    const asked: string[] = [];
    const s = settings((dc) => (asked.push(dc), { ok: true, address: gw.address }));

    expect(await roundTrip(await dialServer(s, direct.address, { datacenter: "dc2", node: "x" }, "rpc"), "a")).toBe("grpc:a");
    expect(await roundTrip(await dialServer(s, direct.address, { datacenter: "dc2" }, "rpc"), "b")).toBe("grpc:b");
    expect(await roundTrip(await dialThroughGateway(s, { datacenter: "dc2", node: "x" }, "wan-gossip-packet"), "c")).toBe("wan-gossip-packet:c");

    expect(asked).toEqual(["dc2", "dc2", "dc2"]);
    expect(gw.passages.map((p) => [p.sni, p.alpn])).toEqual([
      ["x.server.dc2.consul", [ALPN.grpc]],
      ["server.dc2.consul", [ALPN.grpc]],
      ["x.server.dc2.consul", [ALPN["wan-gossip-packet"]]],
    ]);
    // The server saw the same name, and our certificate (mutual TLS).
    expect(server.seen.map((c) => [c.via, c.servername, c.peerCertificate?.subject?.CN])).toEqual([
      ["native-tls", "x.server.dc2.consul", "server.dc1.consul"],
      ["native-tls", "server.dc2.consul", "server.dc1.consul"],
      ["native-tls", "x.server.dc2.consul", "server.dc1.consul"],
    ]);
    expect(direct.dialled()).toBe(0);
  });

  test("hostname verification is forced: a gateway that delivers to a server of the wrong datacenter is caught", async () => {
    const wrong = await echoServerPort(dc1);
    const gw = await startFakeGateway(() => wrong.port);
    open.push(gw);
    const s = settings(() => ({ ok: true, address: gw.address }));
    await expect(dialServer(s, "127.0.0.1:1", { datacenter: "dc2", node: "x" }, "rpc")).rejects.toThrow(/x\.server\.dc2\.consul/);
    expect(gw.passages.length).toBe(1);
    expect(wrong.seen).toEqual([]);
  });

  test("no usable gateway: a NoPathError with the locator's message at once, nothing dialled", async () => {
    const direct = await directAddress();
    const s = settings((dc) => ({ ok: false, message: `no path to datacenter ${dc}: no healthy mesh gateway` }));
    const err = await dialServer(s, direct.address, { datacenter: "dc3" }, "rpc").catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NoPathError);
    expect((err as Error).message).toBe("no path to datacenter dc3: no healthy mesh gateway");
    expect(direct.dialled()).toBe(0);
  });

  test("outgoing TLS disabled: refused in Consul's words before the gateway is even asked", async () => {
    let asked = 0;
    const via = () => (asked++, { ok: true as const, address: "127.0.0.1:1" });
    const want = "cannot dial via a mesh gateway when outgoing TLS is disabled";
    await expect(dialServer(settings(via, false), "127.0.0.1:1", { datacenter: "dc2" }, "rpc")).rejects.toThrow(want);
    await expect(dialServer({ datacenter: "dc1", domain: "consul", viaGateway: via }, "127.0.0.1:1", { datacenter: "dc2" }, "rpc")).rejects.toThrow(want);
    expect(asked).toBe(0);
  });

  test("this datacenter's servers are dialled directly, as without WAN federation", async () => {
    const server = await echoServerPort(dc1);
    const s = settings(() => {
      throw new Error("the gateway resolver must not be asked for this datacenter");
    });
    expect(await roundTrip(await dialServer(s, `127.0.0.1:${server.port}`, { datacenter: "dc1", node: "n2" }, "rpc"), "x")).toBe("grpc:x");
    // Checked as server.dc1.consul (Consul's wrapTLSClient): a certificate made without -node names no node.
    expect(server.seen[0]!.servername).toBe("server.dc1.consul");
    await expect(dialThroughGateway(s, { datacenter: "dc1" }, "rpc")).rejects.toThrow("are not dialled through a mesh gateway");
  });

  test("the WAN gossip protocols have no plaintext marker", async () => {
    await expect(dialServer({ datacenter: "dc1", domain: "consul" }, "127.0.0.1:1", { datacenter: "dc1" }, "wan-gossip-stream")).rejects.toThrow("spoken only in native TLS");
  });
});
