/**
 * Compatibility: the off-the-shelf `consul` client library from npm against a real `causeway agent
 * -dev` process, area by area (status, KV, sessions and locks, transactions, catalog, health, agent).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import Consul from "consul";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { poll, startAgentProcess, type AgentProcess } from "../harness/agent_process.ts";
import { CLI } from "../harness/server_cluster.ts";

let agent: AgentProcess;
let consul: InstanceType<typeof Consul>;
const work = mkdtempSync(join(tmpdir(), "causeway-compat-"));
beforeAll(async () => {
  // A service defined in a config file, as operators do.
  writeFileSync(join(work, "services.json"), JSON.stringify({ services: [{ name: "from-config", port: 7000, tags: ["file"] }] }));
  agent = await startAgentProcess(process.execPath, [
    CLI, "agent", "-dev", "-node", "compat", "-http-port", "0", "-dns-port", "-1", "-grpc-port", "-1", "-serf-lan-port", "0", "-serf-wan-port", "0", "-server-port", "0",
    "-config-file", join(work, "services.json"),
  ]);
  const url = new URL(agent.httpUrl);
  consul = new Consul({ host: url.hostname, port: Number(url.port) });
  // Ready once the leader has put this node in the catalog.
  await poll(() => consul.catalog.node.list(), (nodes: any) => Array.isArray(nodes) && nodes.some((n: any) => n.Node === "compat"), 20_000, "the node in the catalog");
}, 30_000);
afterAll(async () => {
  consul?.destroy();
  await agent?.stop("SIGKILL");
  rmSync(work, { recursive: true, force: true });
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

describe("sessions and locks", () => {
  test("create, info, node, list, lock a key, renew, destroy (which releases the lock)", async () => {
    const { ID } = (await consul.session.create({ name: "compat-lock", ttl: "30s" })) as { ID: string };
    expect(ID).toMatch(/^[0-9a-f-]{36}$/);
    const info = (await consul.session.info(ID)) as any;
    expect(info).toMatchObject({ ID, Name: "compat-lock", Node: "compat", TTL: "30s", Behavior: "release" });
    expect(((await consul.session.node("compat")) as any[]).map((s) => s.ID)).toContain(ID);
    expect(((await consul.session.list()) as any[]).map((s) => s.ID)).toContain(ID);
    expect(await consul.kv.set({ key: "compat/lock", value: "me", acquire: ID })).toBe(true);
    expect(((await consul.kv.get("compat/lock")) as any).Session).toBe(ID);
    const renewed = (await consul.session.renew(ID)) as any[];
    expect(renewed[0].ID).toBe(ID);
    await consul.session.destroy(ID);
    const lock = (await consul.kv.get("compat/lock")) as any;
    expect(lock.Session).toBeUndefined();
    expect(lock.LockIndex).toBe(1);
    expect(await consul.session.info(ID)).toBeUndefined();
    await consul.kv.del("compat/lock");
  });
});

describe("transactions", () => {
  test("KV operations apply atomically, and a failed check changes nothing", async () => {
    const ok = (await consul.transaction.create([
      { KV: { Verb: "set", Key: "compat/txn/a", Value: Buffer.from("1").toString("base64") } },
      { KV: { Verb: "set", Key: "compat/txn/b", Value: Buffer.from("2").toString("base64") } },
      { KV: { Verb: "get", Key: "compat/txn/a" } },
    ] as never)) as any;
    expect(ok.Errors).toBeNull();
    expect(ok.Results.map((r: any) => r.KV.Key)).toEqual(["compat/txn/a", "compat/txn/b", "compat/txn/a"]);
    const failed = await consul.transaction.create([
      { KV: { Verb: "set", Key: "compat/txn/c", Value: Buffer.from("3").toString("base64") } },
      { KV: { Verb: "check-not-exists", Key: "compat/txn/a" } },
    ] as never).then(() => "committed", (err: any) => err);
    expect(failed).not.toBe("committed");
    expect(await consul.kv.get("compat/txn/c")).toBeUndefined();
    await consul.kv.del({ key: "compat/txn/", recurse: true });
  });
});

describe("catalog and health", () => {
  test("register an external node with a service and check, read it back every way, deregister", async () => {
    await consul.catalog.register({
      node: "ext1",
      address: "10.1.2.3",
      service: { service: "db", id: "db1", tags: ["primary"], port: 5432 },
      check: { node: "ext1", checkid: "db-alive", name: "db alive", serviceid: "db1", status: "passing" },
    } as never);
    expect(((await consul.catalog.node.list()) as any[]).map((n) => n.Node)).toContain("ext1");
    expect(await consul.catalog.service.list()).toMatchObject({ db: ["primary"] });
    const nodes = (await consul.catalog.service.nodes("db")) as any[];
    expect(nodes[0]).toMatchObject({ Node: "ext1", Address: "10.1.2.3", ServiceID: "db1", ServiceName: "db", ServicePort: 5432, ServiceTags: ["primary"] });
    const services = (await consul.catalog.node.services("ext1")) as any;
    expect(services.Node.Node).toBe("ext1");
    expect(Object.keys(services.Services)).toEqual(["db1"]);
    const healthy = (await consul.health.service({ service: "db", passing: true })) as any[];
    expect(healthy.map((e) => [e.Node.Node, e.Service.ID, e.Checks.map((c: any) => c.Status)])).toEqual([["ext1", "db1", ["passing"]]]);
    expect(((await consul.health.node("ext1")) as any[]).map((c) => c.CheckID)).toEqual(["db-alive"]);
    expect(((await consul.health.checks("db")) as any[]).map((c) => c.CheckID)).toEqual(["db-alive"]);
    expect(((await consul.health.state("passing")) as any[]).map((c) => c.CheckID)).toContain("db-alive");
    await consul.catalog.deregister({ node: "ext1" } as never);
    expect(((await consul.catalog.node.list()) as any[]).map((n) => n.Node)).not.toContain("ext1");
  });

  test("the agent's own node carries a passing serfHealth check and the consul service", async () => {
    const checks = (await consul.health.node("compat")) as any[];
    expect(checks.find((c) => c.CheckID === "serfHealth")).toMatchObject({ Name: "Serf Health Status", Status: "passing" });
    expect(((await consul.catalog.service.nodes("consul")) as any[]).map((s) => s.Node)).toEqual(["compat"]);
  });
});

describe("agent", () => {
  test("members and self", async () => {
    const members = (await consul.agent.members()) as any[];
    expect(members.map((m) => [m.Name, m.Status])).toEqual([["compat", 1]]);
    const self = (await consul.agent.self()) as any;
    expect(self.Config.NodeName).toBe("compat");
    expect(self.Member).toEqual(members[0]);
    expect(self.Stats.consul).toMatchObject({ leader: "true", server: "true", bootstrap: "true", known_datacenters: "1" });
    expect(self.Stats.raft).toMatchObject({ state: "Leader", num_peers: "0", last_contact: "0" });
    expect(Number(self.Stats.raft.applied_index)).toBeGreaterThan(0);
    for (const pool of ["serf_lan", "serf_wan"]) {
      expect(self.Stats[pool]).toMatchObject({ members: "1", failed: "0", left: "0", health_score: "0", encrypted: "false" });
      expect(Number(self.Stats[pool].member_time)).toBeGreaterThan(0);
    }
  });

  test("a service with a TTL check registers locally, syncs to the catalog, and follows pass and fail", async () => {
    await consul.agent.service.register({ name: "api", id: "api1", port: 9000, tags: ["v2"], check: { ttl: "30s" } } as never);
    expect(Object.keys((await consul.agent.service.list()) as object)).toContain("api1");
    const checks = (await consul.agent.check.list()) as Record<string, any>;
    expect(checks["service:api1"]).toMatchObject({ ServiceID: "api1", Status: "critical" });
    await consul.agent.check.pass("service:api1");
    const synced = await poll(() => consul.health.service({ service: "api", passing: true }), (v: any) => Array.isArray(v) && v.length === 1, 10_000, "api passing in the catalog");
    expect((synced as any[])[0].Service).toMatchObject({ ID: "api1", Port: 9000, Tags: ["v2"] });
    await consul.agent.check.fail("service:api1");
    await poll(() => consul.health.service({ service: "api", passing: true }), (v: any) => Array.isArray(v) && v.length === 0, 10_000, "api failing in the catalog");
    await consul.agent.service.deregister("api1");
    await poll(() => consul.catalog.service.nodes("api"), (v: any) => Array.isArray(v) && v.length === 0, 10_000, "api gone from the catalog");
  });

  test("services from the agent's config files are registered and synced", async () => {
    expect(Object.keys((await consul.agent.service.list()) as object)).toContain("from-config");
    await poll(() => consul.catalog.service.list(), (v: any) => Array.isArray(v?.["from-config"]), 10_000, "from-config in the catalog");
    expect(((await consul.catalog.service.list()) as any)["from-config"]).toEqual(["file"]);
  });

  test("a registered check on the agent, then deregistered", async () => {
    await consul.agent.check.register({ name: "disk", id: "disk", ttl: "1m" } as never);
    await consul.agent.check.warn("disk");
    expect(((await consul.agent.check.list()) as Record<string, any>)["disk"]).toMatchObject({ Status: "warning" });
    await consul.agent.check.deregister("disk");
    expect(((await consul.agent.check.list()) as Record<string, any>)["disk"]).toBeUndefined();
  });
});
