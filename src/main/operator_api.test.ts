import { describe, expect, test } from "bun:test";
import { createRouterTransport } from "@connectrpc/connect";
import type { ConsensusStatus } from "../consensus/index.ts";
import { registerStatusServices, type AutopilotClusterHealth, type RpcContext } from "../rpc/index.ts";
import { autopilotHealthOver } from "./operator_api.ts";

const status = (role: ConsensusStatus["role"]): ConsensusStatus => ({
  id: "a", leader: role === "Leader" ? "a" : "b", role, term: 2, commit: 9, applied: 9, lastIndex: 9, lastLogTerm: 2,
  config: { voters: ["a", "b"], learners: [], votersOutgoing: [], learnersNext: [], autoLeave: false }, lastLeaderContactMs: 0,
});

function over(o: { role: ConsensusStatus["role"]; health?: AutopilotClusterHealth; autopilot?: boolean }) {
  const ctx: RpcContext = {
    datacenter: "dc1",
    node: "s-a",
    raft: { status: () => status(o.role), changeMembership: () => Promise.reject(new Error("unused")) },
    servers: { lookup: () => undefined },
    pool: { transport: () => { throw new Error("no other servers here"); } } as never,
    ...(o.autopilot === false ? {} : { autopilot: { health: () => o.health } }),
  };
  return autopilotHealthOver(() => createRouterTransport((r) => registerStatusServices(r, ctx)));
}

describe("autopilot health over the Operator service", () => {
  test("the leader's judgement arrives whole: unknown contact and StableSince stay unknown", async () => {
    const health: AutopilotClusterHealth = {
      healthy: false,
      failureTolerance: 0,
      servers: [
        { id: "a", name: "s-a", address: "10.0.0.1:8300", serfStatus: "alive", version: "0.1.0", leader: true, voter: true, healthy: true, lastContactMs: 0, lastTerm: 2, lastIndex: 9, stableSinceMs: 1_700_000_000_123 },
        { id: "b", name: "", address: "", serfStatus: "none", version: "", leader: false, voter: true, healthy: false, lastContactMs: undefined, lastTerm: 0, lastIndex: 0, stableSinceMs: undefined },
        { id: "c", name: "s-c", address: "10.0.0.3:8300", serfStatus: "alive", version: "0.1.0", leader: false, voter: false, healthy: true, lastContactMs: 12.345, lastTerm: 2, lastIndex: 8, stableSinceMs: 1_700_000_001_000 },
      ],
    };
    expect(await over({ role: "Leader", health }).serverHealth(undefined)).toEqual(health);
  });

  test("before the first computation: empty and unhealthy, as Consul's zero OperatorHealthReply", async () => {
    expect(await over({ role: "Leader" }).serverHealth(undefined)).toEqual({ healthy: false, failureTolerance: 0, servers: [] });
  });

  test("a server without autopilot answers Unavailable", async () => {
    await expect(over({ role: "Leader", autopilot: false }).serverHealth(undefined)).rejects.toThrow("autopilot is not running on this server");
  });
});
