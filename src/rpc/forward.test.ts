import { describe, expect, test } from "bun:test";
import { Code, ConnectError, type Transport } from "@connectrpc/connect";
import type { ConsensusStatus } from "../consensus/index.ts";
import { NO_PATH_TO_DATACENTER, route, type RpcContext } from "./forward.ts";
import type { RpcPool, RpcTarget } from "./pool.ts";

/** A context whose pool records the targets asked for (creating a pool entry each) and never connects. */
function context(datacenters?: () => readonly string[]) {
  const asked: RpcTarget[] = [];
  const pool: RpcPool = {
    transport: (t) => (asked.push(t), {} as Transport),
    connections: () => 0,
    retire: () => 0,
    targets: () => asked.length,
    close: () => {},
  };
  const ctx: RpcContext = {
    datacenter: "dc1", node: "s1", pool, datacenters,
    raft: { status: () => ({ role: "Leader", leader: "r1" }) as unknown as ConsensusStatus, changeMembership: () => Promise.reject(new Error("unused")) },
    servers: { lookup: () => undefined },
  };
  return { ctx, asked };
}

const call = (ctx: RpcContext, dc: string) =>
  route(ctx, dc, "local", undefined, () => "here", async () => "remote").catch((e: unknown) => ConnectError.from(e));

describe("route across datacenters", () => {
  test("a known datacenter goes through the pool", async () => {
    const { ctx, asked } = context(() => ["dc1", "dc2"]);
    expect(await call(ctx, "dc2")).toBe("remote");
    expect(await call(ctx, "dc1")).toBe("here");
    expect(asked).toEqual([{ datacenter: "dc2" }]);
  });

  test("an unknown datacenter is Consul's 'No path to datacenter', and the pool is never asked", async () => {
    const { ctx, asked } = context(() => ["dc1", "dc2"]);
    for (let i = 0; i < 100; i++) {
      const err = await call(ctx, `nope-${i}`);
      expect(err).toBeInstanceOf(ConnectError);
      expect([(err as ConnectError).code, (err as ConnectError).rawMessage]).toEqual([Code.NotFound, NO_PATH_TO_DATACENTER]);
    }
    // Names are compared exactly, as Consul's router does.
    expect(((await call(ctx, "DC2")) as ConnectError).rawMessage).toBe("No path to datacenter");
    expect(asked).toEqual([]);
  });

  test("while the datacenters cannot be told (the WAN pool is not up), no other datacenter is reachable", async () => {
    const { ctx, asked } = context(() => {
      throw new Error("The WAN pool is not running yet");
    });
    expect(((await call(ctx, "dc2")) as ConnectError).rawMessage).toBe(NO_PATH_TO_DATACENTER);
    expect(asked).toEqual([]);
  });
});
