/**
 * The internal RPC over the server port: Status and Operator services through the pool, every way in
 * (native TLS with ALPN causeway/rpc, TLS upgrade with the multiplexed-RPC marker), a follower
 * forwarding a write to the leader, and a request for dc2 reaching dc2 through the injected dialer.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { create } from "@bufbuild/protobuf";
import { createClient } from "@connectrpc/connect";
import * as http2 from "node:http2";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Duplex } from "node:stream";
import { fromBinary, toBinary } from "@bufbuild/protobuf";
import { Operator, PingRequestSchema, PingResponseSchema, RoutingSchema, Status, type PingResponse } from "../../src/gen/causeway/status/v1/status_pb.ts";
import { asPlainStream, dialTcp, dialTls, seededRng, silentLogger, systemClock } from "../../src/platform/index.ts";
import { ALPN, createRpcPool, MARKER } from "../../src/rpc/index.ts";
import { waitFor } from "../harness/real_raft.ts";
import { Directory, directDialer, startRpcCluster, type RpcServer } from "../harness/rpc_cluster.ts";
import { testPki } from "../harness/tls_fixtures.ts";

const pki = testPki();
const dc1 = { ca: pki.ca.cert, cert: pki.server.cert, key: pki.server.key };
const dc2 = { ca: pki.ca.cert, cert: pki.serverDc2.cert, key: pki.serverDc2.key };
const work = mkdtempSync(join(tmpdir(), "causeway-rpc-"));
const servers: RpcServer[] = [];
const directory = new Directory();
afterAll(async () => {
  for (const s of servers) await s.close().catch(() => {});
  rmSync(work, { recursive: true, force: true });
});

const cluster = (dc: string, ids: string[], material: typeof dc1) => startRpcCluster({ work, dc, ids, material, directory, started: servers });

/**
 * Status.Ping as raw gRPC over an HTTP/2 session on `stream` (a plain node:http2 client: ConnectRPC's
 * client fails on Bun over a wrapped non-h2 TLS stream, see the rpc pool's note).
 */
function rawPing(stream: Duplex): Promise<PingResponse> {
  const session = http2.connect("http://server", { createConnection: () => stream });
  return new Promise((resolve, reject) => {
    const req = session.request({ ":method": "POST", ":path": "/causeway.status.v1.Status/Ping", "content-type": "application/grpc", te: "trailers" });
    const chunks: Buffer[] = [];
    req.on("data", (d: Buffer) => chunks.push(d));
    req.on("error", reject);
    req.on("end", () => {
      const body = Buffer.concat(chunks);
      session.destroy();
      if (body.length < 5) return reject(new Error(`no gRPC message in the response (${body.length} bytes)`));
      resolve(fromBinary(PingResponseSchema, body.subarray(5, 5 + body.readUInt32BE(1))));
    });
    const msg = toBinary(PingRequestSchema, create(PingRequestSchema, {}));
    const frame = Buffer.alloc(5 + msg.length);
    frame.writeUInt32BE(msg.length, 1);
    frame.set(msg, 5);
    req.end(frame);
  });
}

const client = () => createRpcPool({ dial: directDialer(directory, dc1), clock: systemClock(), rng: seededRng(1), logger: silentLogger() });

describe("internal RPC", () => {
  test("Status answers over native TLS (ALPN causeway/rpc) with the real Raft state", async () => {
    const dc = await cluster("dc1", ["a", "b", "c"], dc1);
    const leader = dc.find((s) => s.real.node.status().role === "Leader")!;
    const pool = client();
    try {
      const status = createClient(Status, pool.transport({ datacenter: "dc1", node: "b" }));
      expect(await status.ping({})).toMatchObject({ node: "b", datacenter: "dc1" });
      expect((await status.leader({})).address).toBe(`127.0.0.1:${leader.entry.port}`);
      expect((await status.peers({})).addresses.sort()).toEqual(dc.map((s) => `127.0.0.1:${s.entry.port}`).sort());
      const stats = await status.raftStats({});
      expect(stats.numPeers).toBe(3);
      expect(stats.term).toBeGreaterThan(0n);
      expect(pool.connections()).toBe(1);
    } finally {
      pool.close();
    }
  }, 30_000);

  test("the same services answer on ALPN causeway/rpc and on the multiplexed-RPC marker inside a TLS upgrade", async () => {
    const b = servers.find((s) => s.entry.datacenter === "dc1" && s.entry.node === "b")!;
    const viaAlpn = await dialTls({ host: "127.0.0.1", port: b.entry.port, ...dc1, servername: "server.dc1.consul", alpn: [ALPN.rpc] });
    expect(await rawPing(asPlainStream(viaAlpn))).toMatchObject({ node: "b", datacenter: "dc1" });
    const raw = await dialTcp({ host: "127.0.0.1", port: b.entry.port });
    raw.write(Buffer.from([MARKER.tlsUpgrade]));
    const upgraded = await dialTls({ socket: raw, ...dc1, servername: "server.dc1.consul" } as never);
    upgraded.write(Buffer.from([MARKER["multiplexed-rpc"]]));
    expect(await rawPing(asPlainStream(upgraded))).toMatchObject({ node: "b", datacenter: "dc1" });
  });

  test("a follower forwards a write (RaftRemovePeer) to the leader", async () => {
    const dc = servers.filter((s) => s.entry.datacenter === "dc1");
    const leader = dc.find((s) => s.real.node.status().role === "Leader")!;
    const [follower, victim] = dc.filter((s) => s !== leader) as [RpcServer, RpcServer];
    const pool = client();
    try {
      const op = createClient(Operator, pool.transport({ datacenter: "dc1", node: follower.entry.node }));
      const before = await op.raftGetConfiguration({}, { timeoutMs: 5000 });
      expect(before.servers.map((s) => s.id).sort()).toEqual(["a", "b", "c"]);
      expect(before.servers.find((s) => s.leader)?.id).toBe(leader.entry.id);
      await op.raftRemovePeer({ id: victim.entry.id }, { timeoutMs: 5000 });
      expect(leader.real.node.status().config.voters).not.toContain(victim.entry.id);
      // The follower reached the leader through its own pool, by the leader's node name.
      expect(follower.dialed).toContainEqual({ datacenter: "dc1", node: leader.entry.node });
      const refused = await op.raftRemovePeer({ id: "nope" }).then(() => "removed", (e: Error) => e.message);
      expect(refused).toContain('id "nope" was not found in the Raft configuration');
    } finally {
      pool.close();
    }
  }, 30_000);

  test("a request for dc2 reaches a dc2 server through the injected dialer", async () => {
    await cluster("dc2", ["x"], dc2);
    const a = servers.find((s) => s.entry.datacenter === "dc1" && s.entry.node === "a")!;
    const pool = client();
    try {
      const status = createClient(Status, pool.transport({ datacenter: "dc1", node: "a" }));
      const reply = await status.ping({ routing: create(RoutingSchema, { datacenter: "dc2" }) });
      expect(reply).toMatchObject({ node: "x", datacenter: "dc2" });
      expect(a.dialed).toContainEqual({ datacenter: "dc2" });
    } finally {
      pool.close();
    }
  }, 30_000);
});
