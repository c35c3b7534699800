/**
 * Where a write is applied: the backend's applyPolicy sends lock acquisitions to the leader (its
 * lock-delays are the newest), everything else is proposed where it arrives. Over a real pool and a
 * real gRPC server standing in for the leader.
 */
import { afterAll, describe, expect, test } from "bun:test";
import type { ConsensusStatus } from "../consensus/index.ts";
import { createGrpcServer, dialTcp, seededRng, silentLogger } from "../platform/index.ts";
import { simClock } from "../../test/harness/sim_clock.ts";
import type { RpcContext } from "./forward.ts";
import { createRpcPool, type RpcPool } from "./pool.ts";
import { createServerStateCaller, registerStateService, type StateBackend } from "./state_service.ts";

const utf8 = new TextEncoder();
const text = new TextDecoder();

/** A backend that records what it applied; commands starting with "lock" ask for the leader. */
function recordingBackend(name: string) {
  const applied: string[] = [];
  const unused = () => Promise.reject(new Error("unused"));
  const backend: StateBackend = {
    apply: async (bytes) => (applied.push(text.decode(bytes)), utf8.encode(`applied by ${name}`)),
    applyPolicy: (bytes) => (text.decode(bytes).startsWith("lock") ? "leader" : "local"),
    query: unused, linearizableRead: unused, renewSession: unused, signLeaf: unused, setCAConfiguration: unused, signIntermediate: unused,
  };
  return { backend, applied };
}

function context(role: "Leader" | "Follower", pool: RpcPool): RpcContext {
  return {
    datacenter: "dc1", node: role === "Leader" ? "leader" : "follower", pool, datacenters: () => ["dc1"],
    raft: { status: () => ({ role, leader: role === "Leader" ? "self" : "r-leader" }) as unknown as ConsensusStatus, changeMembership: () => Promise.reject(new Error("unused")) },
    servers: { lookup: (id) => (id === "r-leader" ? { node: "leader", address: "unused" } : undefined) },
  };
}

describe("State.Apply routing by the backend's policy", async () => {
  const leader = recordingBackend("leader");
  const noPool: RpcPool = { transport: () => { throw new Error("the leader forwards nothing"); }, connections: () => 0, targets: () => 0, retire: () => 0, close() {} };
  const grpc = createGrpcServer({ routes: (r) => registerStateService(r, createServerStateCaller(context("Leader", noPool), leader.backend)), logger: silentLogger() });
  const { port } = await grpc.listen({ host: "127.0.0.1", port: 0 });
  const pool = createRpcPool({ dial: () => dialTcp({ host: "127.0.0.1", port }), clock: simClock(), rng: seededRng(1), logger: silentLogger() });
  afterAll(async () => {
    pool.close();
    await grpc.close();
  });
  const follower = recordingBackend("follower");
  const caller = createServerStateCaller(context("Follower", pool), follower.backend);

  test("a lock acquisition arriving at a follower is applied by the leader", async () => {
    expect(text.decode(await caller.apply(utf8.encode("lock k")))).toBe("applied by leader");
    expect([leader.applied, follower.applied]).toEqual([["lock k"], []]);
  });

  test("any other write is proposed by the server it reached", async () => {
    expect(text.decode(await caller.apply(utf8.encode("set k")))).toBe("applied by follower");
    expect(follower.applied).toEqual(["set k"]);
  });
});
