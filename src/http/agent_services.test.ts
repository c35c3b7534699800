import { describe, expect, test } from "bun:test";
import { LOCAL_AGENT_UNAVAILABLE } from "./agent_local.ts";
import { apiWith, fakeAgent, put, refusal } from "./agent_local_kit.test.ts";

const WEB = { ID: "web", Service: "web", Tags: ["v1"], Meta: {}, Port: 80, Address: "", Weights: { Passing: 1, Warning: 1 }, EnableTagOverride: false };
const DB = { ID: "db-1", Service: "db", Tags: [], Meta: { tier: "data" }, Port: 5432, Address: "", Weights: { Passing: 1, Warning: 1 }, EnableTagOverride: false };

describe("GET /v1/agent/services", () => {
  test("answers the agent's services by ID as JSON", async () => {
    const { api } = fakeAgent({ agentServices: () => ({ "db-1": DB, web: WEB }) });
    const res = await apiWith(api).request("/v1/agent/services");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/json");
    expect(await res.json()).toEqual({ "db-1": DB, web: WEB });
  });

  test("?filter keeps the matching services (bexpr over api.AgentService); a bad one is a 400", async () => {
    const app = apiWith(fakeAgent({ agentServices: () => ({ "db-1": DB, web: WEB }) }).api);
    const res = await app.request(`/v1/agent/services?filter=${encodeURIComponent('Meta.tier == "data"')}`);
    expect(await res.json()).toEqual({ "db-1": DB });
    const tagged = await app.request(`/v1/agent/services?filter=${encodeURIComponent('"v1" in Tags')}`);
    expect(Object.keys(await tagged.json() as object)).toEqual(["web"]);
    const bad = await app.request(`/v1/agent/services?filter=${encodeURIComponent("Nope == 1")}`);
    expect(bad.status).toBe(400);
    expect(await bad.text()).toStartWith("Failed to create boolean expression evaluator: ");
  });

  test("other methods are 405", async () => {
    const res = await apiWith(fakeAgent().api).request("/v1/agent/services", { method: "POST" });
    expect(res.status).toBe(405);
  });
});

describe("PUT /v1/agent/service/register", () => {
  test("decodes the body, registers it and answers an empty 200", async () => {
    const { api, calls } = fakeAgent();
    const res = await put(apiWith(api), "/v1/agent/service/register", '{"Name":"web","Port":80}');
    expect(res.status).toBe(200);
    expect(await res.text()).toBe("");
    expect(calls).toEqual([
      { op: "parseServiceRegistration", args: [{ Name: "web", Port: 80 }] },
      { op: "registerService", args: [{ parsed: { Name: "web", Port: 80 } }, { replaceExistingChecks: false, token: "" }] },
    ]);
  });

  test("the request's token goes with the registration (anti-entropy and the proxy's watches use it)", async () => {
    const { api, calls } = fakeAgent();
    const res = await apiWith(api).request("/v1/agent/service/register", { method: "PUT", body: '{"Name":"web"}', headers: { "X-Consul-Token": "web-secret" } });
    expect(res.status).toBe(200);
    expect(calls[1]).toEqual({ op: "registerService", args: [{ parsed: { Name: "web" } }, { replaceExistingChecks: false, token: "web-secret" }] });
  });

  test("?replace-existing-checks counts without a value or as \"true\", as in Consul", async () => {
    for (const [query, expected] of [["?replace-existing-checks", true], ["?replace-existing-checks=true", true], ["?replace-existing-checks=1", false], ["?replace-existing-checks=false", false], ["", false]] as const) {
      const { api, calls } = fakeAgent();
      await put(apiWith(api), `/v1/agent/service/register${query}`, "{}");
      expect([query, calls[1]!.args[1]]).toEqual([query, { replaceExistingChecks: expected, token: "" }]);
    }
  });

  test("bad JSON and an empty body are 400 \"Request decode failed\" with Go's messages; null reads as {}", async () => {
    const { api, calls } = fakeAgent();
    const app = apiWith(api);
    const bad = await put(app, "/v1/agent/service/register", "{nope");
    expect([bad.status, await bad.text()]).toEqual([400, "Request decode failed: invalid character 'n' looking for beginning of object key string"]);
    const empty = await put(app, "/v1/agent/service/register", "");
    expect([empty.status, await empty.text()]).toEqual([400, "Request decode failed: EOF"]);
    expect(calls).toEqual([]);
    await put(app, "/v1/agent/service/register", "null");
    expect(calls[0]).toEqual({ op: "parseServiceRegistration", args: [{}] });
  });

  test("refusals map to 400 / 404 with the agent's message; other errors are 500", async () => {
    const cases = [
      [fakeAgent({ parseServiceRegistration: () => { throw refusal("bad-request", "Missing service name"); } }).api, 400, "Missing service name"],
      [fakeAgent({ registerService: () => { throw refusal("not-found", "gone"); } }).api, 404, "gone"],
      [fakeAgent({ registerService: () => { throw new Error("boom"); } }).api, 500, "boom"],
    ] as const;
    for (const [api, status, text] of cases) {
      const res = await put(apiWith(api), "/v1/agent/service/register", "{}");
      expect([res.status, await res.text(), res.headers.get("content-type")]).toEqual([status, text, "text/plain; charset=utf-8"]);
    }
  });

  test("other methods are 405, not a lookup of a service called \"register\"", async () => {
    const { api, calls } = fakeAgent();
    const res = await apiWith(api).request("/v1/agent/service/register");
    expect(res.status).toBe(405);
    expect(calls).toEqual([]);
  });
});

describe("PUT /v1/agent/service/deregister/:id", () => {
  test("deregisters the decoded ID (which may hold slashes) and answers an empty 200", async () => {
    const { api, calls } = fakeAgent();
    const app = apiWith(api);
    expect((await put(app, "/v1/agent/service/deregister/web")).status).toBe(200);
    await put(app, "/v1/agent/service/deregister/a/b%2Fc%20d");
    expect(calls).toEqual([{ op: "deregisterService", args: ["web"] }, { op: "deregisterService", args: ["a/b/c d"] }]);
  });

  test("an unknown ID is the agent's 404; GET is 405", async () => {
    const msg = `Unknown service ID "x". Ensure that the service ID is passed, not the service name.`;
    const app = apiWith(fakeAgent({ deregisterService: () => { throw refusal("not-found", msg); } }).api);
    const res = await put(app, "/v1/agent/service/deregister/x");
    expect([res.status, await res.text()]).toEqual([404, msg]);
    expect((await app.request("/v1/agent/service/deregister/x")).status).toBe(405);
  });
});

describe("GET /v1/agent/service/:id", () => {
  test("answers the service with X-Consul-ContentHash; 404 \"unknown service ID: <id>\" when absent", async () => {
    const svc = { ...WEB, ContentHash: "abc123" };
    const { api } = fakeAgent({ agentService: (id) => (id === "web" ? svc : undefined) });
    const app = apiWith(api);
    const res = await app.request("/v1/agent/service/web");
    expect(res.status).toBe(200);
    expect(res.headers.get("x-consul-contenthash")).toBe("abc123");
    expect(await res.json()).toEqual(svc);
    const missing = await app.request("/v1/agent/service/a%2Fb");
    expect([missing.status, await missing.text()]).toEqual([404, "unknown service ID: a/b"]);
    expect(missing.headers.get("x-consul-contenthash")).toBeNull();
  });

  test("bad ?wait and ?index are 400 as Consul's parseWait words them", async () => {
    const app = apiWith(fakeAgent().api);
    const wait = await app.request("/v1/agent/service/web?wait=5");
    expect([wait.status, await wait.text()]).toEqual([400, "Invalid wait time"]);
    const index = await app.request("/v1/agent/service/web?index=-1");
    expect([index.status, await index.text()]).toEqual([400, "Invalid index"]);
  });

  test("PUT is 405", async () => {
    expect((await put(apiWith(fakeAgent().api), "/v1/agent/service/web")).status).toBe(405);
  });
});

describe("PUT /v1/agent/maintenance", () => {
  test("?enable is required and parsed like Go's strconv.ParseBool", async () => {
    const { api, calls } = fakeAgent();
    const app = apiWith(api);
    const missing = await put(app, "/v1/agent/maintenance");
    expect([missing.status, await missing.text()]).toEqual([400, "Missing value for enable"]);
    const bad = await put(app, "/v1/agent/maintenance?enable=yes");
    expect([bad.status, await bad.text()]).toEqual([400, 'Invalid value for enable: "yes"']);
    const empty = await put(app, "/v1/agent/maintenance?enable");
    expect([empty.status, await empty.text()]).toEqual([400, 'Invalid value for enable: ""']);
    expect(calls).toEqual([]);
  });

  test("enables with ?reason (default empty) and disables", async () => {
    const { api, calls } = fakeAgent();
    const app = apiWith(api);
    for (const q of ["enable=true&reason=patching", "enable=1", "enable=T", "enable=false", "enable=0"]) {
      const res = await put(app, `/v1/agent/maintenance?${q}`);
      expect([res.status, await res.text()]).toEqual([200, ""]);
    }
    expect(calls).toEqual([
      { op: "enableNodeMaintenance", args: ["patching"] },
      { op: "enableNodeMaintenance", args: [""] },
      { op: "enableNodeMaintenance", args: [""] },
      { op: "disableNodeMaintenance", args: [] },
      { op: "disableNodeMaintenance", args: [] },
    ]);
  });
});

describe("PUT /v1/agent/service/maintenance/:id", () => {
  test("an empty ID is 400 \"Missing service ID\" before ?enable is looked at", async () => {
    const res = await put(apiWith(fakeAgent().api), "/v1/agent/service/maintenance/");
    expect([res.status, await res.text()]).toEqual([400, "Missing service ID"]);
  });

  test("?enable is required and parsed; enable passes ?reason, disable the ID", async () => {
    const { api, calls } = fakeAgent();
    const app = apiWith(api);
    const missing = await put(app, "/v1/agent/service/maintenance/web");
    expect([missing.status, await missing.text()]).toEqual([400, "Missing value for enable"]);
    const bad = await put(app, "/v1/agent/service/maintenance/web?enable=on");
    expect([bad.status, await bad.text()]).toEqual([400, 'Invalid value for enable: "on"']);
    expect((await put(app, "/v1/agent/service/maintenance/web?enable=true&reason=deploy")).status).toBe(200);
    expect((await put(app, "/v1/agent/service/maintenance/web?enable=false&reason=ignored")).status).toBe(200);
    expect(calls).toEqual([
      { op: "enableServiceMaintenance", args: ["web", "deploy"] },
      { op: "disableServiceMaintenance", args: ["web"] },
    ]);
  });

  test("any refusal from the agent is a 404 with its message (Consul writes 404 for every error here)", async () => {
    const app = apiWith(fakeAgent({
      enableServiceMaintenance: () => { throw refusal("not-found", 'No service registered with ID "x"'); },
      disableServiceMaintenance: () => { throw refusal("bad-request", "odd"); },
    }).api);
    const on = await put(app, "/v1/agent/service/maintenance/x?enable=true");
    expect([on.status, await on.text()]).toEqual([404, 'No service registered with ID "x"']);
    const off = await put(app, "/v1/agent/service/maintenance/x?enable=false");
    expect([off.status, await off.text()]).toEqual([404, "odd"]);
    expect((await app.request("/v1/agent/service/maintenance/x?enable=true")).status).toBe(405);
  });
});

describe("without a local agent", () => {
  test("every local-agent route answers 500 and /v1/agent/self still works", async () => {
    const app = apiWith(undefined);
    for (const [method, path] of [["GET", "/v1/agent/services"], ["GET", "/v1/agent/service/web"], ["PUT", "/v1/agent/service/register"], ["PUT", "/v1/agent/maintenance?enable=true"], ["GET", "/v1/agent/checks"], ["PUT", "/v1/agent/check/pass/x"], ["GET", "/v1/agent/health/service/id/web"]] as const) {
      const res = await app.request(path, { method });
      expect([path, res.status, await res.text()]).toEqual([path, 500, LOCAL_AGENT_UNAVAILABLE]);
    }
    expect((await app.request("/v1/agent/self")).status).toBe(200);
  });
});
