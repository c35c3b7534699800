import { describe, expect, test } from "bun:test";
import type { Session } from "../model/index.ts";
import { fakeState } from "../../test/harness/fake_state.ts";
import { createHttpApi } from "./app.ts";
import type { AgentInfo, HttpApiDeps } from "./deps.ts";

const agent = { datacenter: "dc1", nodeName: "n1", server: true } as AgentInfo;
const SID = "adf4238a-882b-9ddc-4a9d-5b6758e4159e";

function setup(extra: Partial<HttpApiDeps> = {}) {
  const state = fakeState();
  state.writeResult = { type: "session", id: SID };
  const renewals: [string, string | undefined][] = [];
  let renewed: Session[] | undefined = [];
  const app = createHttpApi({
    agent, raft: { leader: () => "", peers: () => [] }, state, random: () => 0, newId: () => SID,
    sessionRenewal: {
      async renewSession(id, dc) {
        renewals.push([id, dc]);
        return renewed;
      },
    },
    ...extra,
  });
  const put = (path: string, body?: unknown) =>
    app.request(path, { method: "PUT", body: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body) });
  return { state, app, put, renewals, setRenewed: (s: Session[] | undefined) => (renewed = s) };
}

const session = (extra: Partial<Session> = {}): Session => ({
  ID: SID, Name: "", Node: "n1", LockDelay: 15e9, Behavior: "release", TTL: "", NodeChecks: ["serfHealth"], ServiceChecks: null,
  CreateIndex: 7, ModifyIndex: 7, ...extra,
});
const created = (state: ReturnType<typeof setup>["state"]) => (state.writes[0]!.command as { session: unknown }).session;

describe("PUT /v1/session/create", () => {
  test("a LockDelay number past int64 nanoseconds is a 400 and writes nothing (it was stored as Infinity, then refused as a 500)", async () => {
    const { state, put } = setup();
    for (const body of ['{"LockDelay": 1e400}', '{"LockDelay": 9223372036854775808}', '{"LockDelay": -1e19}', '{"LockDelay": -2147483649}', '{"LockDelay": 9007199254740993}']) {
      const res = await put("/v1/session/create", body);
      expect([body, res.status, await res.text()]).toEqual([body, 400, expect.stringContaining("LockDelay") as unknown as string]);
    }
    expect(state.writes).toEqual([]);
  });

  test("without a body: the agent's node, serfHealth, 15s lock delay, release; answers the new ID", async () => {
    const { state, put } = setup();
    const res = await put("/v1/session/create?dc=dc2");
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ ID: SID });
    expect(state.writes).toEqual([{
      datacenter: "dc2",
      command: {
        type: "session", op: "create",
        session: { ID: SID, Name: "", Node: "n1", LockDelay: 15e9, Behavior: "release", TTL: "", NodeChecks: ["serfHealth"], ServiceChecks: null },
      },
    }]);
  });

  test("the body overrides the defaults, field names case-insensitive", async () => {
    const { state, put } = setup();
    await put("/v1/session/create", { name: "lock", NODE: "n2", lockdelay: "30s", Behavior: "delete", TTL: "1m", ServiceChecks: [{ ID: "svc:web" }] });
    expect(created(state)).toEqual({
      ID: SID, Name: "lock", Node: "n2", LockDelay: 30e9, Behavior: "delete", TTL: "1m", NodeChecks: ["serfHealth"], ServiceChecks: [{ ID: "svc:web", Namespace: "" }],
    });
  });

  test("LockDelay: a number below 1000 is seconds, a larger one nanoseconds (Consul's lockDelayMinThreshold)", async () => {
    const delays: unknown[] = [];
    for (const LockDelay of [5, 2000, "1ms", "0s"]) {
      const { state, put } = setup();
      await put("/v1/session/create", { LockDelay });
      delays.push((created(state) as Session).LockDelay);
    }
    expect(delays).toEqual([5e9, 2000, 1e6, 0]);
  });

  test("Checks and NodeChecks follow Consul's fixupEmptySessionChecks", async () => {
    const cases: [unknown, string[]][] = [
      [{ NodeChecks: ["mem"] }, ["mem"]],
      [{ Checks: [] }, []],
      [{ Checks: null, NodeChecks: ["mem"] }, []],
      [{ Checks: ["serfHealth"], NodeChecks: [] }, []],
      [{ Checks: ["mem"] }, ["mem", "serfHealth"]],
      [{ Checks: ["mem"], NodeChecks: [] }, []],
      [{ Checks: ["mem"], NodeChecks: ["disk"] }, ["mem", "disk"]],
    ];
    for (const [body, want] of cases) {
      const { state, put } = setup();
      await put("/v1/session/create", body);
      expect([body, (created(state) as Session).NodeChecks]).toEqual([body, want]);
    }
  });

  const errors: [string, unknown, string][] = [
    ["malformed JSON", "{", "Request decode failed: unexpected EOF"],
    ["a wrong type", { TTL: 30 }, "Request decode failed: json: cannot unmarshal number into Go struct field Session.TTL of type string"],
    ["a bad lock delay", { LockDelay: "soon" }, "Request decode failed: time: invalid duration soon"],
    ["an empty node", { Node: "" }, "Must provide Node"],
    ["a bad behavior", { Behavior: "keep" }, "Invalid Behavior setting 'keep'"],
    ["a bad TTL", { TTL: "ten" }, "Session TTL 'ten' invalid: time: invalid duration ten"],
    ["a TTL under 10s", { TTL: "5s" }, "Invalid Session TTL '5000000000', must be between [10s=24h0m0s]"],
    ["a TTL over 24h", { TTL: "25h" }, "Invalid Session TTL '90000000000000', must be between [10s=24h0m0s]"],
  ];
  for (const [what, body, message] of errors) {
    test(`${what} answers 400 "${message}"`, async () => {
      const { state, put } = setup();
      const res = await put("/v1/session/create", body);
      expect([res.status, await res.text()]).toEqual([400, `${message}\n`]);
      expect(state.writes).toEqual([]);
    });
  }

  test("a zero TTL is allowed (Consul skips the range check for 0)", async () => {
    const { state, put } = setup();
    expect((await put("/v1/session/create", { TTL: "0s" })).status).toBe(200);
    expect((created(state) as Session).TTL).toBe("0s");
  });

  test("without an ID generator 500; a write the store refuses 400 with its message (Consul: 500)", async () => {
    const { put } = setup({ newId: undefined });
    const res = await put("/v1/session/create");
    expect([res.status, await res.text()]).toEqual([500, "Session IDs cannot be generated on this agent\n"]);
    const other = setup();
    other.state.writeResult = { type: "error", error: "Missing node registration" };
    const failed = await other.put("/v1/session/create");
    expect([failed.status, await failed.text()]).toEqual([400, "Missing node registration\n"]);
  });
});

describe("PUT /v1/session/destroy/:id", () => {
  test("writes a destroy command and answers true", async () => {
    const { state, put } = setup();
    state.writeResult = { type: "ok" };
    const res = await put(`/v1/session/destroy/${SID}?dc=dc3`);
    expect(await res.text()).toBe("true");
    expect(state.writes).toEqual([{ datacenter: "dc3", command: { type: "session", op: "destroy", id: SID } }]);
  });

  test("a missing ID answers 400 'Missing session'; GET answers 405", async () => {
    const { app, put } = setup();
    const res = await put("/v1/session/destroy/");
    expect([res.status, await res.text()]).toEqual([400, "Missing session\n"]);
    expect((await app.request(`/v1/session/destroy/${SID}`)).status).toBe(405);
  });
});

describe("GET /v1/session/info/:id, /node/:node, /list", () => {
  test("each read answers a list with the X-Consul headers", async () => {
    const { state, app } = setup();
    state.values["session-info"] = [session()];
    state.values["session-node"] = [];
    state.values["session-list"] = [session(), session({ ID: "other" })];
    const info = await app.request(`/v1/session/info/${SID}?index=9&wait=2s`);
    expect(info.headers.get("X-Consul-Index")).toBe("42");
    expect(await info.json()).toEqual([session()]);
    expect(await (await app.request("/v1/session/node/n1")).text()).toBe("[]");
    expect(((await (await app.request("/v1/session/list?stale")).json()) as Session[]).length).toBe(2);
    expect(state.reads).toEqual([
      { query: { type: "session-info", id: SID }, options: { datacenter: undefined, consistency: "default", minIndex: 9, maxWaitMs: 2000 } },
      { query: { type: "session-node", node: "n1" }, options: { datacenter: undefined, consistency: "default", minIndex: 0, maxWaitMs: 0 } },
      { query: { type: "session-list" }, options: { datacenter: undefined, consistency: "stale", minIndex: 0, maxWaitMs: 0 } },
    ]);
  });

  test("missing names answer 400", async () => {
    const { app } = setup();
    const a = await app.request("/v1/session/info/");
    expect([a.status, await a.text()]).toEqual([400, "Missing session\n"]);
    const b = await app.request("/v1/session/node/");
    expect([b.status, await b.text()]).toEqual([400, "Missing node name\n"]);
  });
});

describe("PUT /v1/session/renew/:id", () => {
  test("answers the renewed session, without X-Consul-Index; ?dc routes the renewal", async () => {
    const ctx = setup();
    ctx.setRenewed([session({ TTL: "30s" })]);
    const res = await ctx.put(`/v1/session/renew/${SID}?dc=dc2`);
    expect(res.status).toBe(200);
    expect(res.headers.get("X-Consul-Index")).toBeNull();
    expect(await res.json()).toEqual([session({ TTL: "30s" })]);
    expect(ctx.renewals).toEqual([[SID, "dc2"]]);
  });

  test("an unknown session answers 404 with Consul's message", async () => {
    const ctx = setup();
    ctx.setRenewed([]);
    const res = await ctx.put("/v1/session/renew/nope");
    expect([res.status, await res.text()]).toEqual([404, "Session id 'nope' not found\n"]);
    ctx.setRenewed(undefined);
    expect((await ctx.put("/v1/session/renew/nope")).status).toBe(404);
  });

  test("bad options and a missing ID answer 400; no renewal dep or a failure 500", async () => {
    const ctx = setup();
    const a = await ctx.put(`/v1/session/renew/${SID}?index=x`);
    expect([a.status, await a.text()]).toEqual([400, "Invalid index\n"]);
    const b = await ctx.put("/v1/session/renew/");
    expect([b.status, await b.text()]).toEqual([400, "Missing session\n"]);
    const bare = setup({ sessionRenewal: undefined });
    expect((await bare.put(`/v1/session/renew/${SID}`)).status).toBe(500);
    const failing = setup({ sessionRenewal: { renewSession: () => Promise.reject(new Error("No cluster leader")) } });
    const c = await failing.put(`/v1/session/renew/${SID}`);
    expect([c.status, await c.text()]).toEqual([500, "No cluster leader\n"]);
  });
});
