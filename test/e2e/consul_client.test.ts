/**
 * Compatibility: the off-the-shelf `consul` client library from npm against a real `causeway agent
 * -dev` process, area by area (status, KV, sessions and locks, transactions, catalog, health, agent).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import Consul from "consul";
import { poll, startAgentProcess, type AgentProcess } from "../harness/agent_process.ts";
import { CLI } from "../harness/server_cluster.ts";

let agent: AgentProcess;
let consul: InstanceType<typeof Consul>;
beforeAll(async () => {
  agent = await startAgentProcess(process.execPath, [CLI, "agent", "-dev", "-node", "compat", "-http-port", "0", "-grpc-port", "-1", "-serf-lan-port", "0", "-serf-wan-port", "0", "-server-port", "0"]);
  const url = new URL(agent.httpUrl);
  consul = new Consul({ host: url.hostname, port: Number(url.port) });
  // Ready once the leader has put this node in the catalog.
  await poll(() => consul.catalog.node.list(), (nodes: any) => Array.isArray(nodes) && nodes.some((n: any) => n.Node === "compat"), 20_000, "the node in the catalog");
}, 30_000);
afterAll(async () => {
  consul?.destroy();
  await agent?.stop("SIGKILL");
});

describe("status", () => {
  test("leader and peers", async () => {
    const leader = await consul.status.leader();
    expect(leader).toMatch(/^127\.0\.0\.1:\d+$/);
    expect(await consul.status.peers()).toEqual([leader]);
  });
});

describe("kv", () => {
  test("set, get, keys, recurse, cas and delete", async () => {
    expect(await consul.kv.set("compat/a", "one")).toBe(true);
    expect(await consul.kv.set({ key: "compat/b/c", value: "two", flags: 7 })).toBe(true);
    const a = (await consul.kv.get("compat/a")) as any;
    expect(a).toMatchObject({ Key: "compat/a", Flags: 0, Value: "one" });
    expect(await consul.kv.keys({ key: "compat/", separator: "/" })).toEqual(["compat/a", "compat/b/"]);
    const all = (await consul.kv.get({ key: "compat/", recurse: true })) as any[];
    expect(all.map((e) => [e.Key, e.Value, e.Flags])).toEqual([["compat/a", "one", 0], ["compat/b/c", "two", 7]]);
    // The library hands a JSON `false` body back as undefined; either way the write did not happen.
    expect(await consul.kv.set({ key: "compat/a", value: "stale", cas: a.ModifyIndex - 1 })).toBeFalsy();
    expect(((await consul.kv.get("compat/a")) as any).Value).toBe("one");
    expect(await consul.kv.set({ key: "compat/a", value: "fresh", cas: a.ModifyIndex })).toBe(true);
    expect(((await consul.kv.get("compat/a")) as any).Value).toBe("fresh");
    await consul.kv.del({ key: "compat/", recurse: true });
    expect(await consul.kv.get("compat/a")).toBeUndefined();
  });
});
