import { describe, expect, test } from "bun:test";
import { apiWith, fakeAgent, put, realAgent, refusal } from "./agent_local_kit.test.ts";

const check = (id: string, serviceId: string, status: string) => ({
  Node: "node-1", CheckID: id, Name: id, Status: status, Notes: "", Output: "", ServiceID: serviceId, ServiceName: serviceId,
  ServiceTags: [], Type: "ttl", Definition: {}, CreateIndex: 0, ModifyIndex: 0,
});

describe("GET /v1/agent/checks", () => {
  test("answers the agent's checks by ID; ?filter keeps the matching ones; a bad filter is a 400", async () => {
    const checks = { a: check("a", "web", "passing"), b: check("b", "", "critical") };
    const app = apiWith(fakeAgent({ agentChecks: () => checks }).api);
    const res = await app.request("/v1/agent/checks");
    expect([res.status, res.headers.get("content-type")]).toEqual([200, "application/json"]);
    expect(await res.json()).toEqual(checks);
    const critical = await app.request(`/v1/agent/checks?filter=${encodeURIComponent("Status == critical")}`);
    expect(await critical.json()).toEqual({ b: checks.b });
    const bad = await app.request(`/v1/agent/checks?filter=${encodeURIComponent("Definition.HTTP == x")}`);
    expect(bad.status).toBe(400);
    expect(await bad.text()).toStartWith("Failed to create boolean expression evaluator: ");
  });
});

describe("PUT /v1/agent/check/register", () => {
  test("decodes the body, registers it and answers an empty 200", async () => {
    const { api, calls } = fakeAgent();
    const res = await put(apiWith(api), "/v1/agent/check/register", '{"Name":"mem","TTL":"10s"}');
    expect([res.status, await res.text()]).toEqual([200, ""]);
    expect(calls).toEqual([
      { op: "parseCheckRegistration", args: [{ Name: "mem", TTL: "10s" }] },
      { op: "registerCheck", args: [{ parsed: { Name: "mem", TTL: "10s" } }, { token: "" }] },
    ]);
  });

  test("decode failures and refusals", async () => {
    const app = apiWith(fakeAgent({ parseCheckRegistration: () => { throw refusal("bad-request", "Missing check name"); } }).api);
    const bad = await put(app, "/v1/agent/check/register", "[1,");
    expect([bad.status, await bad.text()]).toEqual([400, "Request decode failed: unexpected EOF"]);
    const refused = await put(app, "/v1/agent/check/register", "{}");
    expect([refused.status, await refused.text()]).toEqual([400, "Missing check name"]);
  });

  test("with the real agent: an unknown ServiceID is the agent's 400 in Consul's words", async () => {
    const { api } = realAgent();
    const res = await put(apiWith(api), "/v1/agent/check/register", '{"Name":"x","ServiceID":"gone","TTL":"5s"}');
    expect([res.status, await res.text()]).toEqual([400, 'ServiceID "gone" does not exist']);
  });
});

describe("PUT /v1/agent/check/deregister/:id", () => {
  test("deregisters the decoded ID; unknown is 404; GET is 405", async () => {
    const { api, calls } = fakeAgent();
    const app = apiWith(api);
    expect((await put(app, "/v1/agent/check/deregister/service%3Aweb")).status).toBe(200);
    expect(calls).toEqual([{ op: "deregisterCheck", args: ["service:web"] }]);
    const missing = apiWith(fakeAgent({ deregisterCheck: () => { throw refusal("not-found", "Unknown check ID"); } }).api);
    const res = await put(missing, "/v1/agent/check/deregister/x");
    expect([res.status, await res.text()]).toEqual([404, "Unknown check ID"]);
    expect((await app.request("/v1/agent/check/deregister/x")).status).toBe(405);
  });
});

describe("PUT /v1/agent/check/pass|warn|fail/:id", () => {
  test("sets the status with ?note as the output", async () => {
    const { api, calls } = fakeAgent();
    const app = apiWith(api);
    for (const path of ["/v1/agent/check/pass/a?note=fine", "/v1/agent/check/warn/b", "/v1/agent/check/fail/c%2Fd?note=down"]) {
      const res = await put(app, path);
      expect([res.status, await res.text()]).toEqual([200, ""]);
    }
    expect(calls).toEqual([
      { op: "updateTTL", args: ["a", "passing", "fine"] },
      { op: "updateTTL", args: ["b", "warning", ""] },
      { op: "updateTTL", args: ["c/d", "critical", "down"] },
    ]);
    expect((await app.request("/v1/agent/check/pass/a")).status).toBe(405);
  });

  test("with the real agent: the check's output changes; a non-TTL check is 400, an unknown one 404", async () => {
    const { api, agent } = realAgent();
    const app = apiWith(api);
    expect((await put(app, "/v1/agent/check/register", '{"Name":"ttl","TTL":"30s"}')).status).toBe(200);
    expect((await put(app, "/v1/agent/check/register", '{"Name":"tcp","TCP":"127.0.0.1:1","Interval":"10s"}')).status).toBe(200);
    expect((await put(app, "/v1/agent/check/warn/ttl?note=slow")).status).toBe(200);
    expect([agent.check("ttl")?.Status, agent.check("ttl")?.Output]).toEqual(["warning", "slow"]);
    const notTtl = await put(app, "/v1/agent/check/pass/tcp");
    expect([notTtl.status, await notTtl.text()]).toEqual([400, 'CheckID "tcp" does not have associated TTL']);
    const unknown = await put(app, "/v1/agent/check/pass/nope");
    expect(unknown.status).toBe(404);
    agent.stop();
  });
});

describe("PUT /v1/agent/check/update/:id", () => {
  test("sets Status and Output from the body", async () => {
    const { api, calls } = fakeAgent();
    const res = await put(apiWith(api), "/v1/agent/check/update/a", '{"status":"critical","Output":"disk full"}');
    expect([res.status, await res.text()]).toEqual([200, ""]);
    expect(calls).toEqual([{ op: "updateTTL", args: ["a", "critical", "disk full"] }]);
  });

  test("a missing or unknown status is 400 \"Invalid check status: '<status>'\", before the check is looked at", async () => {
    const { api, calls } = fakeAgent();
    const app = apiWith(api);
    const missing = await put(app, "/v1/agent/check/update/a", '{"Output":"x"}');
    expect([missing.status, await missing.text()]).toEqual([400, "Invalid check status: ''"]);
    const unknown = await put(app, "/v1/agent/check/update/a", '{"Status":"maintenance"}');
    expect([unknown.status, await unknown.text()]).toEqual([400, "Invalid check status: 'maintenance'"]);
    expect(calls).toEqual([]);
  });

  test("decode failures use Go's wording", async () => {
    const app = apiWith(fakeAgent().api);
    const cases = [
      ["", "Request decode failed: EOF"],
      ['{"Status":1}', "Request decode failed: json: cannot unmarshal number into Go struct field checkUpdate.Status of type string"],
      ["[]", "Request decode failed: json: cannot unmarshal array into Go value of type agent.checkUpdate"],
    ] as const;
    for (const [body, text] of cases) {
      const res = await put(app, "/v1/agent/check/update/a", body);
      expect([body, res.status, await res.text()]).toEqual([body, 400, text]);
    }
  });

  test("the agent's refusal for an unknown check is a 404", async () => {
    const { api } = realAgent();
    const res = await put(apiWith(api), "/v1/agent/check/update/nope", '{"Status":"passing"}');
    expect([res.status, await res.text()]).toEqual([404, 'Unknown check ID "nope". Ensure that the check ID is passed, not the check name.']);
  });
});
