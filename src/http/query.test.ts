import { describe, expect, test } from "bun:test";
import type { PreparedQuery, PreparedQueryExecuteResult, ReadQuery } from "../model/index.ts";
import { fakeState } from "../../test/harness/fake_state.ts";
import { createHttpApi } from "./app.ts";
import type { AgentInfo, HttpApiDeps } from "./deps.ts";
import { preparedQueryOf } from "./query.ts";

const agent = { datacenter: "dc1", nodeName: "agent1", server: true } as AgentInfo;
const NEW = "0b0c0d0e-1111-2222-3333-444455556666";
const ID1 = "8f246b77-f3e1-ff88-5b48-8ec93abf3e05";

const stored: PreparedQuery = { ...preparedQueryOf(JSON.stringify({ ID: ID1, Name: "web", Service: { Service: "web", Failover: { NearestN: 1 } } })), CreateIndex: 5, ModifyIndex: 6 };
const node = (n: string) => ({ Node: { Node: n }, Service: { ID: "web", Service: "web" }, Checks: [] });
const result = (dc: string, nodes: string[]): PreparedQueryExecuteResult =>
  ({ Service: "web", Nodes: nodes.map(node) as never, DNS: { TTL: "" }, Datacenter: dc, Failovers: 0 });

function setup(extra: Partial<HttpApiDeps> = {}) {
  const state = fakeState();
  const app = createHttpApi({ agent, raft: { leader: () => "", peers: () => [] }, state, random: () => 0, newId: () => NEW, ...extra });
  const send = (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
    app.request(path, { method, headers, body: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body) });
  return { state, send };
}

describe("POST /v1/query", () => {
  test("creates with a new ID and Consul's zero values; answers {ID}", async () => {
    const { state, send } = setup();
    const res = await send("POST", "/v1/query?dc=dc2", { Name: "web", Service: { Service: "web", Tags: ["a"] }, DNS: { TTL: "10s" } });
    expect([res.status, await res.json()]).toEqual([200, { ID: NEW }]);
    expect(state.writes).toEqual([{
      datacenter: "dc2",
      command: {
        type: "prepared-query", op: "create",
        query: {
          ID: NEW, Name: "web", Session: "", Token: "", Template: { Type: "", Regexp: "", RemoveEmptyTags: false },
          Service: {
            Service: "web", Failover: { NearestN: 0, Datacenters: null }, OnlyPassing: false, IgnoreCheckIDs: null, Near: "",
            Tags: ["a"], NodeMeta: null, ServiceMeta: null, Connect: false,
          },
          DNS: { TTL: "10s" },
        },
      },
    }]);
  });

  test.each([
    ["{", "Request decode failed: unexpected EOF"],
    [{ Service: { Service: 5 } }, "Request decode failed: json: cannot unmarshal number into Go struct field PreparedQuery.Service.Service of type string"],
    [{ ID: ID1, Name: "x", Service: { Service: "web" } }, "ID must be empty when creating a new prepared query"],
    [{ Service: { Service: "web" } }, "Invalid prepared query: Must be bound to a session"],
    [{ Name: "x", Service: { Service: "" } }, "Invalid prepared query: Must provide a Service name to query"],
    [{ Name: "x", Template: { Type: "glob" }, Service: { Service: "s" } }, "failed compiling template: Bad Template.Type 'glob'"],
    [{ Name: "x", Template: { Type: "name_prefix_match", Regexp: "(" }, Service: { Service: "s" } }, "failed compiling template: Bad Regexp: error parsing regexp: missing closing ): `(`"],
  ])("refuses %j with 400 and writes nothing", async (body: unknown, msg: string) => {
    const { state, send } = setup();
    const res = await send("POST", "/v1/query", body);
    expect([res.status, await res.text()]).toEqual([400, msg + "\n"]);
    expect(state.writes).toEqual([]);
  });

  test("a refusal of the state store is 400 with its text", async () => {
    const { state, send } = setup();
    state.writeResult = { type: "error", error: "name 'web' aliases an existing query name" };
    const res = await send("POST", "/v1/query", { Name: "web", Service: { Service: "web" } });
    expect([res.status, await res.text()]).toEqual([400, "name 'web' aliases an existing query name\n"]);
  });
});

describe("list, read, update, delete", () => {
  test("GET /v1/query lists with X-Consul-Index and blocks with ?index", async () => {
    const { state, send } = setup();
    state.values["prepared-query-list"] = [stored];
    const res = await send("GET", "/v1/query?index=3");
    expect([res.status, res.headers.get("X-Consul-Index")]).toEqual([200, "42"]);
    expect(await res.json()).toEqual([JSON.parse(JSON.stringify(stored))]);
    expect(state.reads[0]!.options.minIndex).toBe(3);
    state.values["prepared-query-list"] = [];
    expect(await (await send("GET", "/v1/query")).text()).toBe("[]");
  });

  test("GET /v1/query/:id answers a one-element list, or 404 Query not found", async () => {
    const { state, send } = setup();
    state.values["prepared-query-get"] = stored;
    expect(await (await send("GET", `/v1/query/${ID1}`)).json()).toEqual([JSON.parse(JSON.stringify(stored))]);
    expect(state.reads[0]!.query).toEqual({ type: "prepared-query-get", id: ID1 });
    state.values["prepared-query-get"] = null;
    const missing = await send("GET", `/v1/query/${ID1}`);
    expect([missing.status, await missing.text()]).toEqual([404, "Query not found\n"]);
  });

  test("PUT takes the ID from the URL; DELETE deletes; both answer an empty 200", async () => {
    const { state, send } = setup();
    const put = await send("PUT", `/v1/query/${ID1}`, { ID: "ignored", Name: "web2", Service: { Service: "web" } });
    expect([put.status, await put.text()]).toEqual([200, ""]);
    expect(state.writes[0]!.command).toMatchObject({ type: "prepared-query", op: "update", query: { ID: ID1, Name: "web2" } });
    const del = await send("DELETE", `/v1/query/${ID1}`);
    expect([del.status, await del.text()]).toEqual([200, ""]);
    expect(state.writes[1]!.command).toEqual({ type: "prepared-query", op: "delete", id: ID1 });
    expect((await send("PUT", `/v1/query/${ID1}`, "")).status).toBe(400); // an empty body: not bound to anything
    expect((await send("POST", `/v1/query/${ID1}`)).status).toBe(405);
    expect((await send("PUT", `/v1/query/${ID1}/execute`)).status).toBe(405);
  });
});

describe("GET /v1/query/:id/execute and /explain", () => {
  test("execute: local results with QueryMeta in the body; ?near=_agent, ?limit, ?connect go to the read", async () => {
    const { state, send } = setup();
    state.values["prepared-query-execute"] = { type: "found", query: stored, value: result("dc1", ["a", "b"]) };
    const res = await send("GET", "/v1/query/web/execute?near=_agent&limit=2&connect&index=9", undefined, { "X-Forwarded-For": "10.1.2.3, 10.0.0.1" });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({
      Service: "web", Nodes: ["a", "b"].map(node), DNS: { TTL: "" }, Datacenter: "dc1", Failovers: 0,
      Index: 0, LastContact: 0, KnownLeader: true, ConsistencyLevel: "leader",
    });
    expect(state.reads[0]!.query).toEqual({
      type: "prepared-query-execute", idOrName: "web", limit: 2, connect: true,
      agent: { Datacenter: "dc1", Segment: "", Node: "agent1", Ip: "" },
      source: { Datacenter: "", Segment: "", Node: "agent1", Ip: "10.1.2.3" },
    });
    expect(state.reads[0]!.options.minIndex).toBe(0); // execute does not block
  });

  test("execute fails over through ?dc reads of the resolved query, in NearestN then Datacenters order", async () => {
    const state = fakeState();
    const failover = { ...stored, Service: { ...stored.Service, Failover: { NearestN: 1, Datacenters: ["dc3", "dcX"] } } };
    const asked: (string | undefined)[] = [];
    state.read = async (q: ReadQuery, options) => {
      if (q.type === "prepared-query-execute") return { value: { type: "found", query: failover, value: result("dc1", []) } as never, meta: state.meta };
      if (q.type !== "prepared-query-execute-remote") throw new Error(`unexpected read ${q.type}`);
      expect(q.query).toBe(failover);
      asked.push(options.datacenter);
      return { value: result(options.datacenter!, options.datacenter === "dc3" ? ["r"] : []) as never, meta: state.meta };
    };
    const { send } = setup({ state, catalog: { datacenters: () => ["dc1", "dc2", "dc3", "dc4"] } });
    const body = await (await send("GET", "/v1/query/web/execute")).json();
    expect(asked).toEqual(["dc2", "dc3"]);
    expect(body).toMatchObject({ Datacenter: "dc3", Failovers: 2, Nodes: [node("r")] });
  });

  test("unknown query 404; a template error 400; a bad limit 400", async () => {
    const { state, send } = setup();
    state.values["prepared-query-execute"] = { type: "not-found" };
    const missing = await send("GET", "/v1/query/nope/execute");
    expect([missing.status, await missing.text()]).toEqual([404, "Query not found\n"]);
    state.values["prepared-query-explain"] = { type: "error", error: "prepared query templates can only be resolved up by name, not by ID" };
    const byId = await send("GET", `/v1/query/${ID1}/explain`);
    expect([byId.status, await byId.text()]).toEqual([400, "prepared query templates can only be resolved up by name, not by ID\n"]);
    const limit = await send("GET", "/v1/query/web/execute?limit=x");
    expect([limit.status, await limit.text()]).toEqual([400, 'Bad limit: strconv.Atoi: parsing "x": invalid syntax\n']);
  });

  test("explain answers the rendered query", async () => {
    const { state, send } = setup();
    state.values["prepared-query-explain"] = { type: "found", query: stored, value: null };
    const res = await send("GET", "/v1/query/web-x/explain?stale");
    expect(await res.json()).toEqual({ Query: JSON.parse(JSON.stringify(stored)), Index: 0, LastContact: 0, KnownLeader: true, ConsistencyLevel: "stale" });
    expect(state.reads[0]!.query).toEqual({ type: "prepared-query-explain", idOrName: "web-x", agent: { Datacenter: "dc1", Segment: "", Node: "agent1", Ip: "" } });
  });
});
