/**
 * `/v1/txn` with Node, Service and Check operations against a real `causeway agent -dev` process, through
 * the npm `consul` client: a mixed KV + catalog write commits in one Raft entry (one index), a failing
 * op leaves the catalog and KV untouched, CAS verbs compare ModifyIndex, and catalog gets alone take
 * the read path.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import Consul from "consul";
import { poll, startAgentProcess, type AgentProcess } from "../harness/agent_process.ts";
import { CLI } from "../harness/server_cluster.ts";

let agent: AgentProcess;
let consul: InstanceType<typeof Consul>;
let base: string;
const b64 = (s: string) => Buffer.from(s).toString("base64");
const ID = "8f3c7c2e-5a9b-4c1d-9e2f-0a1b2c3d4e5f";

beforeAll(async () => {
  agent = await startAgentProcess(process.execPath, [
    CLI, "agent", "-dev", "-node", "txn-e2e", "-http-port", "0", "-dns-port", "-1", "-grpc-port", "-1", "-serf-lan-port", "0", "-serf-wan-port", "0", "-server-port", "0",
  ]);
  base = agent.httpUrl;
  const url = new URL(base);
  consul = new Consul({ host: url.hostname, port: Number(url.port) });
  await poll(() => consul.catalog.node.list(), (nodes: any) => Array.isArray(nodes) && nodes.some((n: any) => n.Node === "txn-e2e"), 20_000, "the node in the catalog");
}, 30_000);
afterAll(async () => {
  consul?.destroy();
  await agent?.stop("SIGKILL");
});

/** PUT /v1/txn with fetch, for the status code and body of a 409 the client turns into an error. */
async function txn(ops: unknown[]): Promise<{ status: number; body: any }> {
  const res = await fetch(`${base}/v1/txn`, { method: "PUT", body: JSON.stringify(ops) });
  const text = await res.text();
  return { status: res.status, body: res.headers.get("content-type")?.includes("json") ? JSON.parse(text) : text };
}

describe("transactions with catalog operations", () => {
  test("node, service, check and KV writes commit together at one index", async () => {
    const r = (await consul.transaction.create([
      { Node: { Verb: "set", Node: { ID, Node: "ext-1", Address: "192.0.2.10", Meta: { rack: "r1" } } } },
      { Service: { Verb: "set", Node: "ext-1", Service: { ID: "db-1", Service: "db", Port: 5432, Tags: ["primary"] } } },
      { Check: { Verb: "set", Check: { Node: "ext-1", CheckID: "db-alive", Name: "db alive", Status: "passing", ServiceID: "db-1", Definition: { TCP: "192.0.2.10:5432", Interval: "10s" } } } },
      { KV: { Verb: "set", Key: "txn-e2e/db", Value: b64("ext-1") } },
    ] as never)) as any;
    expect(r.Errors).toBeNull();
    expect(r.Results).toHaveLength(4);
    const [n, s, c, kv] = r.Results;
    expect(n.Node).toMatchObject({ ID, Node: "ext-1", Address: "192.0.2.10", Datacenter: "dc1", Meta: { rack: "r1" } });
    expect(s.Service).toMatchObject({ ID: "db-1", Service: "db", Port: 5432, Tags: ["primary"] });
    expect(c.Check).toMatchObject({ CheckID: "db-alive", Status: "passing", ServiceName: "db", Definition: { TCP: "192.0.2.10:5432", Interval: "10s" } });
    expect(kv.KV).toMatchObject({ Key: "txn-e2e/db", Value: null });
    const index = n.Node.ModifyIndex;
    expect([s.Service.ModifyIndex, c.Check.ModifyIndex, kv.KV.ModifyIndex]).toEqual([index, index, index]);
    const healthy = (await consul.health.service({ service: "db", passing: true })) as any[];
    expect(healthy.map((e) => [e.Node.Node, e.Service.ID])).toEqual([["ext-1", "db-1"]]);
  });

  test("a failing op rolls back every write of the transaction, with Consul's texts and positions", async () => {
    const before = await txn([{ Node: { Verb: "get", Node: { Node: "ext-1" } } }]);
    const r = await txn([
      { KV: { Verb: "set", Key: "txn-e2e/never", Value: b64("x") } },
      { Node: { Verb: "delete", Node: { Node: "ext-1" } } },
      { Service: { Verb: "set", Node: "nowhere", Service: { Service: "ghost" } } },
      { Check: { Verb: "cas", Check: { Node: "ext-1", CheckID: "db-alive", Status: "critical", ModifyIndex: 1 } } },
    ]);
    expect(r).toEqual({
      status: 409,
      body: {
        Results: null,
        Errors: [
          { OpIndex: 2, What: "Missing node registration" },
          { OpIndex: 3, What: 'failed to set check "db-alive" on node "ext-1", index is stale' },
        ],
      },
    });
    expect(await txn([{ Node: { Verb: "get", Node: { Node: "ext-1" } } }])).toEqual(before);
    expect(await consul.kv.get("txn-e2e/never")).toBeUndefined();
    expect(((await consul.catalog.node.services("ext-1")) as any).Services["db-1"]).toBeDefined();
  });

  test("reads alone take the read path (stale allowed) and see the catalog; cas and delete-cas compare ModifyIndex", async () => {
    const read = await fetch(`${base}/v1/txn?stale`, {
      method: "PUT",
      body: JSON.stringify([{ Node: { Verb: "get", Node: { ID } } }, { Service: { Verb: "get", Node: "ext-1", Service: { ID: "db-1" } } }, { Check: { Verb: "get", Check: { Node: "ext-1", CheckID: "db-alive" } } }]),
    });
    expect(read.status).toBe(200);
    expect(read.headers.get("X-Consul-KnownLeader")).toBe("true");
    const got = (await read.json()) as any;
    expect(got.Results.map((x: any) => Object.keys(x)[0])).toEqual(["Node", "Service", "Check"]);
    const svc = got.Results[1].Service;
    const stale = await txn([{ Service: { Verb: "cas", Node: "ext-1", Service: { ID: "db-1", Service: "db", Port: 6543, ModifyIndex: svc.ModifyIndex - 1 } } }]);
    expect(stale).toEqual({ status: 409, body: { Results: null, Errors: [{ OpIndex: 0, What: 'failed to set service "db-1" on node "ext-1", index is stale' }] } });
    const fresh = await txn([{ Service: { Verb: "cas", Node: "ext-1", Service: { ID: "db-1", Service: "db", Port: 6543, ModifyIndex: svc.ModifyIndex } } }]);
    expect(fresh.status).toBe(200);
    expect(fresh.body.Results[0].Service).toMatchObject({ Port: 6543, CreateIndex: svc.CreateIndex });
    const node = (await txn([{ Node: { Verb: "get", Node: { Node: "ext-1" } } }])).body.Results[0].Node;
    const gone = await txn([{ Node: { Verb: "delete-cas", Node: { Node: "ext-1", ModifyIndex: node.ModifyIndex } } }, { KV: { Verb: "delete", Key: "txn-e2e/db" } }]);
    expect(gone).toEqual({ status: 200, body: { Results: null, Errors: null } });
    expect(await consul.catalog.node.services("ext-1")).toBeFalsy();
    expect(await consul.health.service("db")).toEqual([]);
  });

  test("bad input: 400 for a body Go cannot decode, 409 for Consul's preCheck refusals; nothing written", async () => {
    const bad = await txn([{ Node: { Verb: "set", Node: { Node: "x", Meta: "nope" } } }]);
    expect(bad.status).toBe(400);
    expect(bad.body).toMatch(/^Failed to parse body: json: cannot unmarshal string into Go struct field .*Meta of type map\[string\]string/);
    const refused = await txn([{ Node: { Verb: "set", Node: { Node: "bad-id", ID: "xyz", Address: "192.0.2.1" } } }]);
    expect(refused).toEqual({ status: 409, body: { Results: null, Errors: [{ OpIndex: 0, What: "Bad node ID: uuid string is wrong length" }] } });
    expect(((await consul.catalog.node.list()) as any[]).map((n) => n.Node)).not.toContain("bad-id");
  });
});
