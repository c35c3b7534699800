/**
 * Forwarding to another datacenter through a mesh gateway, end to end over loopback: a client calls
 * server a (dc1) with routing dc2; a's pool dials through a fake gateway (a TLS-passthrough relay that
 * routes by SNI, as the built-in gateway does) to server x's real server port in dc2, which answers.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { create } from "@bufbuild/protobuf";
import { ConnectError, createClient } from "@connectrpc/connect";
import { RoutingSchema, Status } from "../gen/causeway/status/v1/status_pb.ts";
import type { ConsensusStatus } from "../consensus/index.ts";
import { createGrpcServer, listenTcp, seededRng, silentLogger, systemClock, type TlsMaterial } from "../platform/index.ts";
import { startFakeGateway } from "../../test/harness/rpc_cluster.ts";
import { testPki } from "../../test/harness/tls_fixtures.ts";
import { dialServer, type GatewayRoute } from "./dialer.ts";
import type { RpcContext } from "./forward.ts";
import { createRpcPool, type RpcPool } from "./pool.ts";
import { createServerPort, type ServerPortConnection } from "./server_port.ts";
import { registerStatusServices } from "./status_service.ts";

const pki = testPki();
const dc1 = { ca: pki.ca.cert, cert: pki.server.cert, key: pki.server.key };
const dc2 = { ca: pki.ca.cert, cert: pki.serverDc2.cert, key: pki.serverDc2.key };
const open: { close(): unknown }[] = [];
afterAll(async () => {
  for (const c of open.splice(0).reverse()) await c.close();
});

/**
 * A server: server port (mutual TLS, verify_incoming_rpc) serving the Status service, with a pool
 * whose dialer goes through `viaGateway` for other datacenters. `otherServer` is where the WAN pool
 * says the other datacenter's server is: it must never be dialled.
 */
async function startServer(o: { dc: string; node: string; material: TlsMaterial; viaGateway: (dc: string) => GatewayRoute; otherServer: string }) {
  const clock = systemClock();
  const seen: ServerPortConnection[] = [];
  const pool: RpcPool = createRpcPool({
    dial: (t) => dialServer({ datacenter: o.dc, domain: "consul", tls: { material: o.material, verifyOutgoing: true }, viaGateway: o.viaGateway }, o.otherServer, t, "rpc"),
    clock, rng: seededRng(1), logger: silentLogger(),
  });
  const ctx: RpcContext = {
    datacenter: o.dc, node: o.node, pool, datacenters: () => ["dc1", "dc2", "dc3"],
    raft: { status: () => ({ role: "Leader", leader: o.node }) as unknown as ConsensusStatus, changeMembership: () => Promise.reject(new Error("unused")) },
    servers: { lookup: () => undefined },
  };
  const grpc = createGrpcServer({ routes: (r) => registerStatusServices(r, ctx), logger: silentLogger() });
  const port = createServerPort({ logger: silentLogger(), clock, tls: { material: o.material, verifyIncomingRpc: true } });
  port.serve("grpc", (s, c) => (seen.push(c), grpc.acceptSocket(s)));
  const listener = await listenTcp({ host: "127.0.0.1", port: 0, onConnection: (s) => port.accept(s) });
  open.push({ close: () => pool.close() }, { close: () => grpc.close() }, { close: () => port.close() }, listener);
  return { port: listener.port, seen };
}

describe("RPC to another datacenter through a mesh gateway", async () => {
  let directDials = 0;
  const unreachable = await listenTcp({ host: "127.0.0.1", port: 0, onConnection: (s) => (directDials++, s.destroy()) });
  open.push(unreachable);
  const gateways = new Map<string, string>();
  const viaGateway = (dc: string): GatewayRoute => {
    const address = gateways.get(dc);
    return address ? { ok: true, address } : { ok: false, message: `no path to datacenter ${dc}: no healthy mesh gateway` };
  };
  const x = await startServer({ dc: "dc2", node: "x", material: dc2, viaGateway, otherServer: `127.0.0.1:${unreachable.port}` });
  const a = await startServer({ dc: "dc1", node: "a", material: dc1, viaGateway, otherServer: `127.0.0.1:${unreachable.port}` });
  const gw = await startFakeGateway((sni) => (sni === "server.dc2.consul" || sni?.endsWith(".server.dc2.consul") ? x.port : undefined));
  open.push(gw);
  gateways.set("dc2", gw.address);

  const client = createRpcPool({
    dial: (t) => dialServer({ datacenter: "dc1", domain: "consul", tls: { material: dc1, verifyOutgoing: true } }, `127.0.0.1:${a.port}`, t, "rpc"),
    clock: systemClock(), rng: seededRng(2), logger: silentLogger(),
  });
  open.push({ close: () => client.close() });
  const status = createClient(Status, client.transport({ datacenter: "dc1", node: "a" }));
  const ping = (dc: string) => status.ping({ routing: create(RoutingSchema, { datacenter: dc }) }, { timeoutMs: 5000 });
  const failure = (dc: string) => ping(dc).then(() => "answered", (e) => ConnectError.from(e).rawMessage);

  test("a request for dc2 is answered by a dc2 server, reached only through the gateway, on one pooled connection", async () => {
    expect(await ping("dc2")).toMatchObject({ node: "x", datacenter: "dc2" });
    expect(await ping("dc2")).toMatchObject({ node: "x", datacenter: "dc2" });
    expect(await ping("dc1")).toMatchObject({ node: "a", datacenter: "dc1" });
    expect(gw.passages).toEqual([{ sni: "server.dc2.consul", alpn: ["h2"], forwardedTo: x.port }]);
    expect(x.seen.map((c) => [c.protocol, c.servername, c.peerCertificate?.subject?.CN])).toEqual([["grpc", "server.dc2.consul", "server.dc1.consul"]]);
    expect(directDials).toBe(0);
  });

  test("a datacenter without a usable gateway fails at once with the reason, not a hang; a gateway that refuses fails too", async () => {
    expect(await failure("dc3")).toBe("no path to datacenter dc3: no healthy mesh gateway");
    expect(await failure("dc3")).toBe("no path to datacenter dc3: no healthy mesh gateway");
    const refusing = await listenTcp({ host: "127.0.0.1", port: 0, onConnection: (s) => s.destroy() });
    await refusing.close();
    gateways.set("dc3", `127.0.0.1:${refusing.port}`);
    expect(await failure("dc3")).toMatch(new RegExp(`^\\*\\.dc3: dial tls 127\\.0\\.0\\.1:${refusing.port}: `));
    gateways.delete("dc3");
    expect(gw.passages.length).toBe(1);
  });

  test("when the gateway goes away calls fail with the reason; a new gateway is used as soon as the locator picks it", async () => {
    gateways.delete("dc2");
    await gw.close();
    // The pooled connection through the old gateway dies with it (a call may still catch it closing).
    const noPath = "no path to datacenter dc2: no healthy mesh gateway";
    const seen: string[] = [];
    while (seen.length < 5 && seen.at(-1) !== noPath) seen.push(await failure("dc2"));
    expect(seen.at(-1)).toBe(noPath);
    const gw2 = await startFakeGateway(() => x.port);
    open.push(gw2);
    gateways.set("dc2", gw2.address);
    // No backoff after "no path": the very next call goes through the new gateway.
    expect(await ping("dc2")).toMatchObject({ node: "x", datacenter: "dc2" });
    expect(gw2.passages.map((p) => p.sni)).toEqual(["server.dc2.consul"]);
    expect(directDials).toBe(0);
  });
});
