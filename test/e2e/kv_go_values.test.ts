/**
 * KV values as Go clients read them, against a real agent: flags over the whole uint64 range (written
 * through /v1/kv and /v1/txn, read back byte-exact, kept through a snapshot save and restore), and
 * null values for empty bodies.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { poll, startAgentProcess, type AgentProcess } from "../harness/agent_process.ts";
import { CLI } from "../harness/server_cluster.ts";

const MAX = "18446744073709551615";
let agent: AgentProcess;
beforeAll(async () => {
  agent = await startAgentProcess(process.execPath, [
    CLI, "agent", "-dev", "-bind", "127.0.0.1", "-http-port", "0", "-dns-port", "-1", "-grpc-port", "-1", "-server-port", "0", "-serf-lan-port", "0", "-serf-wan-port", "0",
  ]);
  await poll(() => fetch(`${agent.httpUrl}/v1/status/leader`).then((r) => r.text()), (t) => t !== '""', 10_000, "a leader");
});
afterAll(async () => {
  await agent?.stop("SIGKILL").catch(() => {});
});

describe("uint64 KV flags on a real agent", () => {
  test("written by PUT and txn, read back exact, kept through snapshot and restore", async () => {
    const url = agent.httpUrl;
    expect(await (await fetch(`${url}/v1/kv/a?flags=${MAX}`, { method: "PUT", body: "1" })).text()).toBe("true");
    const txn = await fetch(`${url}/v1/txn`, { method: "PUT", body: `[{"KV":{"Verb":"set","Key":"b","Value":"Mg==","Flags":9007199254740993}}]` });
    expect(txn.status).toBe(200);
    expect(await txn.text()).toContain('"Flags":9007199254740993');
    const read = async () => await (await fetch(`${url}/v1/kv/?recurse`)).text();
    const before = await read();
    expect(before).toContain(`"Key":"a","Flags":${MAX}`);
    expect(before).toContain('"Key":"b","Flags":9007199254740993');
    const snapshot = new Uint8Array(await (await fetch(`${url}/v1/snapshot`)).arrayBuffer());
    await fetch(`${url}/v1/kv/?recurse`, { method: "DELETE" });
    expect((await fetch(`${url}/v1/snapshot`, { method: "PUT", body: snapshot })).status).toBe(200);
    expect((await read()).replace(/"(Create|Modify)Index":\d+/g, "")).toBe(before.replace(/"(Create|Modify)Index":\d+/g, ""));
  }, 60_000);

  test("an empty PUT stores no value: GET shows null, ?raw an empty body", async () => {
    const url = agent.httpUrl;
    expect(await (await fetch(`${url}/v1/kv/nothing`, { method: "PUT" })).text()).toBe("true");
    expect(await (await fetch(`${url}/v1/kv/nothing`)).text()).toContain('"Key":"nothing","Flags":0,"Value":null');
    const raw = await fetch(`${url}/v1/kv/nothing?raw`);
    expect([raw.status, await raw.text()]).toEqual([200, ""]);
  });
});
