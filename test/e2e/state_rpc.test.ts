/**
 * The State service over real servers (Raft, server port, mutual TLS): writes from a follower reach
 * the leader through Raft, reads follow Consul's consistency modes (default and consistent on the leader, stale on
 * the receiving server) with leader facts for the X-Consul-* headers, and a client agent's caller
 * reaches another datacenter through a server of its own.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { seededRng, silentLogger, systemClock } from "../../src/platform/index.ts";
import { createRemoteStateCaller, createRpcPool } from "../../src/rpc/index.ts";
import { encodeKvCommand } from "../harness/kv_state_machine.ts";
import { waitFor } from "../harness/real_raft.ts";
import { Directory, directDialer, startRpcCluster, type RpcServer } from "../harness/rpc_cluster.ts";
import { testPki } from "../harness/tls_fixtures.ts";

const pki = testPki();
const dc1 = { ca: pki.ca.cert, cert: pki.server.cert, key: pki.server.key };
const dc2 = { ca: pki.ca.cert, cert: pki.serverDc2.cert, key: pki.serverDc2.key };
const work = mkdtempSync(join(tmpdir(), "causeway-state-rpc-"));
const servers: RpcServer[] = [];
const directory = new Directory();
const enc = new TextEncoder();
const dec = new TextDecoder();

const cluster = (dc: string, ids: string[], material: typeof dc1) => startRpcCluster({ work, dc, ids, material, directory, started: servers });

let leader: RpcServer;
let follower: RpcServer;
beforeAll(async () => {
  const dc = await cluster("dc1", ["a", "b", "c"], dc1);
  await cluster("dc2", ["x"], dc2);
  leader = dc.find((s) => s.real.node.status().role === "Leader")!;
  follower = dc.find((s) => s !== leader)!;
  // Followers learn the leader from its first heartbeats.
  await waitFor(() => follower.real.node.status().lastLeaderContactMs !== undefined, 10_000, "leader contact on the follower");
}, 30_000);
afterAll(async () => {
  for (const s of servers) await s.close().catch(() => {});
  rmSync(work, { recursive: true, force: true });
});

describe("State service", () => {
  test("a write arriving at a follower is proposed there and carried to the leader by Raft, not by RPC", async () => {
    const dialedBefore = follower.dialed.length;
    const result = await follower.state.apply(encodeKvCommand({ op: "put", key: "k", value: "v1" }));
    expect(JSON.parse(dec.decode(result))).toEqual({ ok: true });
    expect(leader.real.sm.get("k")).toBe("v1");
    expect(follower.real.sm.get("k")).toBe("v1");
    expect(follower.dialed.length).toBe(dialedBefore);
  }, 20_000);

  test("default reads are served by the leader, consistent and stale reads by the receiving server", async () => {
    await follower.state.apply(encodeKvCommand({ op: "put", key: "modes", value: "m" }));
    const before = { leader: leader.servedQueries.length, follower: follower.servedQueries.length };

    const byDefault = await follower.state.query(enc.encode("modes"));
    expect(dec.decode(byDefault.result)).toBe("m");
    expect(byDefault).toMatchObject({ knownLeader: true, lastContactMs: 0 });
    expect(byDefault.index).toBeGreaterThanOrEqual(1);

    expect(leader.servedQueries.length - before.leader).toBe(1);
    expect(follower.servedQueries.length).toBe(before.follower);

    // A consistent read is served where it arrives, after a ReadIndex round through the leader: it
    // sees every write acknowledged before it started.
    await leader.state.apply(encodeKvCommand({ op: "put", key: "modes", value: "m2" }));
    const consistent = await follower.state.query(enc.encode("modes"), { consistency: "consistent" });
    expect(dec.decode(consistent.result)).toBe("m2");
    expect(follower.servedQueries.length).toBe(before.follower + 1);

    const stale = await follower.state.query(enc.encode("modes"), { consistency: "stale" });
    expect(follower.servedQueries.length).toBe(before.follower + 2);
    expect(stale.knownLeader).toBe(true);
    // A follower reports how long ago it heard from the leader: heartbeats keep that well under a second.
    expect(stale.lastContactMs).toBeLessThan(5_000);
  }, 20_000);

  test("a session renewal is served by the leader, which keeps the TTL timers", async () => {
    expect(dec.decode(await follower.state.renewSession("known"))).toBe(`renewed on ${leader.entry.id}`);
    expect(dec.decode(await follower.state.renewSession("unknown"))).toBe("");
  }, 20_000);

  test("a client agent's caller reaches dc2 through a dc1 server", async () => {
    const pool = createRpcPool({ dial: directDialer(directory, dc1), clock: systemClock(), rng: seededRng(3), logger: silentLogger() });
    try {
      const client = createRemoteStateCaller(() => pool.transport({ datacenter: "dc1" }));
      const x = servers.find((s) => s.entry.datacenter === "dc2")!;
      await client.apply(encodeKvCommand({ op: "put", key: "where", value: "dc2" }), "dc2");
      expect(x.real.sm.get("where")).toBe("dc2");
      expect(leader.real.sm.get("where")).toBeUndefined();
      const read = await client.query(enc.encode("where"), { datacenter: "dc2" });
      expect(dec.decode(read.result)).toBe("dc2");
    } finally {
      pool.close();
    }
  }, 20_000);
});
