import { describe, expect, test } from "bun:test";
import { Code, ConnectError, type Transport } from "@connectrpc/connect";
import type { ConsensusStatus } from "../consensus/index.ts";
import { MetricsRegistry } from "../telemetry/index.ts";
import { route, type RpcContext } from "./forward.ts";
import { RpcMetrics } from "./rpc_metrics.ts";

const totals = (r: MetricsRegistry) => Object.fromEntries(r.series().map((s) => [`${s.name}${s.labels.map(([k, v]) => `{${k}=${v}}`).join("")}`, s.kind === "gauge" ? s.value : s.total]));

describe("RPC metrics", () => {
  test("rpc.cross-dc counts forwards per datacenter; local and unknown ones are not counted", async () => {
    const registry = new MetricsRegistry({ now: () => 0 });
    const ctx: RpcContext = {
      datacenter: "dc1", node: "s1", datacenters: () => ["dc1", "dc2", "dc3"], metrics: new RpcMetrics(registry),
      pool: { transport: () => ({}) as Transport, connections: () => 0, retire: () => 0, targets: () => 0, close: () => {} },
      raft: { status: () => ({ role: "Leader", leader: "r1" }) as unknown as ConsensusStatus, changeMembership: () => Promise.reject(new Error("unused")) },
      servers: { lookup: () => undefined },
    };
    const call = (dc: string) => route(ctx, dc, "local", undefined, () => "here", async () => "remote").catch(() => "refused");
    expect(await Promise.all(["dc2", "dc2", "dc3", "dc1", "dc9"].map(call))).toEqual(["remote", "remote", "remote", "here", "refused"]);
    expect(totals(registry)).toEqual({ "consul.rpc.cross-dc{datacenter=dc2}": 2, "consul.rpc.cross-dc{datacenter=dc3}": 1, "consul.rpc.queries_blocking": 0, "consul.rpc.query": 0, "consul.rpc.request": 0, "consul.rpc.request_error": 0 });
  });

  test("the interceptor counts requests and the failed ones; the blocking gauge follows starts and ends", async () => {
    const registry = new MetricsRegistry({ now: () => 0 });
    const m = new RpcMetrics(registry);
    const ok = m.interceptor(async () => ({}) as never);
    const failing = m.interceptor(async () => {
      throw new ConnectError("no", Code.Unavailable);
    });
    await ok({} as never);
    await ok({} as never);
    await expect(failing({} as never)).rejects.toThrow("no");
    m.blockingQueries(1);
    m.blockingQueries(1);
    m.blockingQueries(-1);
    expect(totals(registry)).toMatchObject({ "consul.rpc.request": 3, "consul.rpc.request_error": 1, "consul.rpc.queries_blocking": 1 });
  });
});
