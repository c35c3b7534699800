import { describe, expect, test } from "bun:test";
import { Code, ConnectError } from "@connectrpc/connect";
import { Hono } from "hono";
import { fakeState } from "../../test/harness/fake_state.ts";
import { createHttpApi } from "./app.ts";
import type { AgentInfo, HttpApiDeps, StateAccess } from "./deps.ts";
import { BadRequestError } from "./query_options.ts";
import { errorResponse, INTERNAL_ERROR, safeErrorMessage } from "./respond.ts";

/** What errorResponse answers for `err`: [status, body]. */
async function answer(err: unknown): Promise<[number, string]> {
  const app = new Hono();
  app.get("/", (c) => errorResponse(c, err));
  const res = await app.request("/");
  return [res.status, await res.text()];
}

class WithStatus extends Error {
  constructor(message: string, readonly statusCode: number) {
    super(message);
  }
}

describe("errorResponse", () => {
  test("an error's own statusCode in 400..499 is its answer, with its message", async () => {
    expect(await answer(new WithStatus("Raft entry too large: 20971520 bytes, more than 15728640", 413))).toEqual([413, "Raft entry too large: 20971520 bytes, more than 15728640\n"]);
    expect(await answer(new WithStatus("bad snapshot: not a tar archive", 400))).toEqual([400, "bad snapshot: not a tar archive\n"]);
    expect(await answer(Object.assign(new Error("conflict"), { statusCode: 409 }))).toEqual([409, "conflict\n"]);
  });

  test("a statusCode outside 400..499, not a number, or not the error's own is a 500", async () => {
    expect((await answer(new WithStatus("x", 503)))[0]).toBe(500);
    expect((await answer(new WithStatus("x", 302)))[0]).toBe(500);
    expect((await answer(Object.assign(new Error("x"), { statusCode: "400" })))[0]).toBe(500);
    const inherited = Object.create(Object.assign(new Error("x"), { statusCode: 400 })) as Error;
    expect((await answer(inherited))[0]).toBe(500);
  });

  test("an internal RPC's refusal with a request-fault code (InvalidArgument, NotFound, ...) is 400 in its own words", async () => {
    const rpc = (code: number, raw: string) => Object.assign(new Error(`[x] ${raw}`), { name: "ConnectError", code, rawMessage: raw });
    expect(await answer(rpc(Code.NotFound, `id "x" was not found in the Raft configuration`))).toEqual([400, `id "x" was not found in the Raft configuration\n`]);
    expect(await answer(rpc(Code.InvalidArgument, "Must specify the ID of the server to remove"))).toEqual([400, "Must specify the ID of the server to remove\n"]);
    expect(await answer(rpc(Code.Unavailable, "No cluster leader"))).toEqual([500, "No cluster leader\n"]);
    expect(await answer(new ConnectError("deadline exceeded", Code.DeadlineExceeded))).toEqual([500, "deadline exceeded\n"]);
    expect(await answer(new ConnectError("no such peer", Code.NotFound))).toEqual([400, "no such peer\n"]);
  });

  test("Consul's 'No path to datacenter' (a datacenter no server knows) is 400, however it arrives", async () => {
    expect(await answer(new Error("No path to datacenter"))).toEqual([400, "No path to datacenter\n"]);
    expect(await answer(new ConnectError("No path to datacenter", Code.NotFound))).toEqual([400, "No path to datacenter\n"]);
    expect(await answer(new ConnectError("No path to datacenter", Code.Unavailable))).toEqual([400, "No path to datacenter\n"]);
  });

  test("BadRequestError is 400; the agent's refusals 400 and 404", async () => {
    expect(await answer(new BadRequestError("Invalid wait time"))).toEqual([400, "Invalid wait time\n"]);
    expect(await answer(Object.assign(new Error("Missing service name"), { kind: "bad-request" }))).toEqual([400, "Missing service name\n"]);
    expect(await answer(Object.assign(new Error("unknown service ID: x"), { kind: "not-found" }))).toEqual([404, "unknown service ID: x\n"]);
  });

  test("a 500 says no internal URL, file path or stack, and never quotes a runtime error", async () => {
    expect(await answer(new Error("No cluster leader"))).toEqual([500, "No cluster leader\n"]);
    expect(await answer(Object.assign(new Error("[unavailable] No cluster leader"), { rawMessage: "No cluster leader" }))).toEqual([500, "No cluster leader\n"]);
    const [, withUrl] = await answer(new Error("fetch http://*.dc2/causeway.state.v1.State/Query failed: connect ECONNREFUSED 10.0.0.2:8300"));
    expect(withUrl).not.toContain("http://");
    expect(withUrl).not.toContain("causeway.state");
    const [, withPath] = await answer(new Error("ENOENT: no such file or directory, open '/var/lib/causeway/raft/log.db'"));
    expect(withPath).not.toContain("/var/lib");
    expect(withPath).toContain("ENOENT: no such file or directory");
    const stacked = new Error("boom\n    at route (/work/main/src/http/kv.ts:80:12)\n    at async dispatch (file:///x/node_modules/hono/dist/hono.js:1:1)");
    expect(await answer(stacked)).toEqual([500, "boom\n"]);
    for (const runtime of [new TypeError("Cannot read properties of undefined (reading 'Node')"), new RangeError("Invalid array length"), new SyntaxError("JSON Parse error")]) {
      expect(await answer(runtime)).toEqual([500, `${INTERNAL_ERROR}\n`]);
    }
    expect(safeErrorMessage(undefined)).toBe(INTERNAL_ERROR);
  });
});

describe("the app's error handling", () => {
  const agent = { datacenter: "dc1", nodeName: "n1", server: true } as AgentInfo;
  const api = (state: StateAccess, logged: unknown[][] = []) =>
    createHttpApi({ agent, raft: { leader: () => "", peers: () => [] }, state, random: () => 0, logError: (...a) => void logged.push(a) } as HttpApiDeps);

  test("a server-side error with a client status passes through a route as that status (413 from the Raft layer)", async () => {
    const state = { ...fakeState(), write: () => Promise.reject(new WithStatus("Raft entry too large", 413)) };
    const res = await api(state).request("/v1/kv/k", { method: "PUT", body: "v" });
    expect([res.status, await res.text()]).toEqual([413, "Raft entry too large\n"]);
  });

  test("a command the state store refuses is 400 with its message; its own failure a 500 that quotes nothing", async () => {
    const state = fakeState();
    state.writeResult = { type: "error", error: "failed to set key \"k\", index is stale" };
    const refused = await api(state).request("/v1/kv/k?cas=3", { method: "PUT", body: "v" });
    expect([refused.status, await refused.text()]).toEqual([400, "failed to set key \"k\", index is stale\n"]);
    state.writeResult = { type: "error", error: "internal error: Cannot read properties of undefined (reading 'x')" };
    const broken = await api(state).request("/v1/kv/k", { method: "PUT", body: "v" });
    expect([broken.status, await broken.text()]).toEqual([500, `${INTERNAL_ERROR}\n`]);
  });

  test("removing a peer that is not one is 400 (Consul: 500)", async () => {
    const operator = (err: Error) => createHttpApi({ agent, raft: { leader: () => "", peers: () => [] }, operator: { raftConfiguration: () => Promise.reject(err), removePeer: () => Promise.reject(err) } });
    const byAddress = await operator(new Error(`address "10.0.0.9:8300" was not found in the Raft configuration`)).request("/v1/operator/raft/peer?address=10.0.0.9:8300", { method: "DELETE" });
    expect([byAddress.status, await byAddress.text()]).toEqual([400, `address "10.0.0.9:8300" was not found in the Raft configuration\n`]);
    const byId = await operator(new ConnectError(`id "x" was not found in the Raft configuration`, Code.NotFound)).request("/v1/operator/raft/peer?id=x", { method: "DELETE" });
    expect([byId.status, await byId.text()]).toEqual([400, `id "x" was not found in the Raft configuration\n`]);
  });

  test("a 500 a route answers with errorResponse is reported once too", async () => {
    const logged: unknown[][] = [];
    const state = { ...fakeState(), read: () => Promise.reject(new Error("proposal dropped")) };
    const res = await api(state, logged).request("/v1/kv/k");
    expect([res.status, await res.text()]).toEqual([500, "proposal dropped\n"]);
    expect(logged.map(([err, r]) => [(err as Error).message, r])).toEqual([["proposal dropped", { method: "GET", path: "/v1/kv/k" }]]);
    const client = await api({ ...fakeState(), read: () => Promise.reject(new BadRequestError("x")) }, logged).request("/v1/kv/k");
    expect(client.status).toBe(400);
    expect(logged.length).toBe(1);
  });

  test("an error a route does not answer itself is answered by errorResponse and, as a 500, reported once", async () => {
    const logged: unknown[][] = [];
    const broken = { ...agent, stats: () => { throw new TypeError("Cannot read properties of undefined (reading 'runtime')"); } } as AgentInfo;
    const app = createHttpApi({ agent: broken, raft: { leader: () => "", peers: () => [] }, logError: (...a) => void logged.push(a) });
    const res = await app.request("/v1/agent/self");
    expect([res.status, await res.text()]).toEqual([500, `${INTERNAL_ERROR}\n`]);
    expect(logged.length).toBe(1);
    expect(logged[0]![1]).toEqual({ method: "GET", path: "/v1/agent/self" });
    expect((logged[0]![0] as Error).message).toContain("reading 'runtime'");
  });
});
