import { afterEach, describe, expect, test } from "bun:test";
import type * as net from "node:net";
import { createTlsServer, listenTcp, type TcpListener } from "../platform/index.ts";
import { testPki } from "../../test/harness/tls_fixtures.ts";
import { dialServer, serverName } from "./dialer.ts";
import { ALPN, MARKER } from "./protocols.ts";

const pki = testPki();
const dc1 = { ca: pki.ca.cert, cert: pki.server.cert, key: pki.server.key };
const open: TcpListener[] = [];
afterEach(async () => {
  for (const l of open.splice(0)) await l.close();
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
    expect(await seen).toEqual({ servername: "n1.server.dc1.consul", alpn: ALPN.grpc });
    ok.destroy();
    // The certificate names dc1 servers only: dialing it as a dc2 server fails hostname verification.
    await expect(dialServer(settings, `127.0.0.1:${l.port}`, { datacenter: "dc2" }, "raft")).rejects.toThrow(/server\.dc2\.consul/);
  });
});
