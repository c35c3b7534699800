/** The lock's KV and session calls over real HTTP, against a recording fake agent. */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startRecordingAgent, type RecordingAgent } from "../../../../test/harness/cli_http_fake.ts";
import { createAgentHttpClient } from "../support/http_client.ts";
import { createLockApi, DecodeError, type LockApi } from "./api.ts";

let agent: RecordingAgent;
let api: LockApi;
beforeAll(async () => {
  agent = await startRecordingAgent();
  api = createLockApi(createAgentHttpClient(agent.url, fetch, { datacenter: "dc2", token: "t0k" }));
});
afterAll(() => agent.close());

const RAW_PAIR = '[{"LockIndex":1,"Key":"a/.lock","Flags":16210313421097356768,"Value":"eyJMaW1pdCI6Mn0=","Session":"s1","CreateIndex":4,"ModifyIndex":9}]';

describe("the lock's API calls", () => {
  test("a blocking read: ?index= only when not 0, ?wait= in ms, ?consistent=; the pair with exact flags and X-Consul-Index", async () => {
    agent.reset({ "GET /v1/kv/a/.lock": { body: RAW_PAIR, headers: { "X-Consul-Index": "12", "Content-Type": "application/json" } } });
    const read = await api.get("a/.lock", { index: 9n, waitMs: 15_000, consistent: true });
    expect(read).toEqual({ value: { Key: "a/.lock", Flags: 16210313421097356768n, Value: new TextEncoder().encode('{"Limit":2}'), Session: "s1", ModifyIndex: 9n }, index: 12n });
    await api.get("a/.lock", { index: 0n });
    expect(agent.lines()).toEqual(["GET /v1/kv/a/.lock?consistent=&dc=dc2&index=9&wait=15000ms", "GET /v1/kv/a/.lock?dc=dc2"]);
    expect(agent.requests[0]!.headers.get("X-Consul-Token")).toBe("t0k");
  });

  test("404 is no key (with its index); a listing of nothing is []", async () => {
    agent.reset({ "GET /v1/kv/a/.lock": { status: 404, headers: { "X-Consul-Index": "3" } }, "GET /v1/kv/a": { status: 404, headers: { "X-Consul-Index": "3" } } });
    expect(await api.get("a/.lock")).toEqual({ value: undefined, index: 3n });
    expect(await api.list("a", { waitMs: 2_000 })).toEqual({ value: [], index: 3n });
    expect(agent.lines()[1]).toBe("GET /v1/kv/a?dc=dc2&recurse=&wait=2000ms");
  });

  test("acquire, release, CAS and delete send the flags and the agent's true/false comes back", async () => {
    agent.reset({ "PUT /v1/kv/a%20b/.lock": (req) => ({ body: req.query.includes("release") ? "false" : "true" }), "DELETE /v1/kv/a%20b/.lock": { body: "false" } });
    expect(await api.acquire("a b/.lock", "s1", 3304740253564472344n)).toBe(true);
    expect(await api.release("a b/.lock", "s1", 3304740253564472344n)).toBe(false);
    expect(await api.cas("a b/.lock", '{"Limit":2,"Holders":{}}', 0n, 0n)).toBe(true);
    expect(await api.deleteCas("a b/.lock", 7n)).toBe(false);
    expect(agent.lines()).toEqual([
      "PUT /v1/kv/a%20b/.lock?acquire=s1&dc=dc2&flags=3304740253564472344",
      "PUT /v1/kv/a%20b/.lock?dc=dc2&flags=3304740253564472344&release=s1",
      "PUT /v1/kv/a%20b/.lock?cas=0&dc=dc2",
      "DELETE /v1/kv/a%20b/.lock?cas=7&dc=dc2",
    ]);
    expect(agent.requests[2]!.text).toBe('{"Limit":2,"Holders":{}}');
  });

  test("sessions: create returns the ID, renew the TTL (undefined on 404), destroy; the node name from /v1/agent/self", async () => {
    agent.reset({
      "PUT /v1/session/create": { body: { ID: "s9" } },
      "PUT /v1/session/renew/s9": { body: [{ ID: "s9", TTL: "30s" }] },
      "PUT /v1/session/renew/gone": { status: 404, body: "Session id 'gone' not found" },
      "PUT /v1/session/destroy/s9": { body: "true" },
      "GET /v1/agent/self": { body: { Config: { NodeName: "n1" } } },
    });
    expect(await api.createSession({ Name: "x", TTL: "15s" })).toBe("s9");
    expect(await api.renewSession("s9")).toEqual({ TTL: "30s" });
    expect(await api.renewSession("gone")).toBeUndefined();
    await api.destroySession("s9");
    expect(await api.nodeName()).toBe("n1");
    expect(agent.requests[0]!.text).toBe('{"Name":"x","TTL":"15s"}');
  });

  test("an answer that is not JSON is a DecodeError; an error status is the client's error", async () => {
    agent.reset({ "GET /v1/kv/k": { body: "<html>" }, "GET /v1/kv/e": { status: 500, body: "boom" } });
    await expect(api.get("k")).rejects.toBeInstanceOf(DecodeError);
    await expect(api.get("e")).rejects.toThrow("Unexpected response code: 500 (boom)");
  });
});
