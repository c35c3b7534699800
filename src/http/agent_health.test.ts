import { describe, expect, test } from "bun:test";
import { parseCheckRegistration, parseServiceRegistration } from "../agent/index.ts";
import { aggregatedStatus, healthCode } from "./agent_health.ts";
import { apiWith, realAgent } from "./agent_local_kit.test.ts";

function setup() {
  const kit = realAgent();
  const reg = (body: Record<string, unknown>) => kit.agent.registerService(parseServiceRegistration(body));
  reg({ Name: "web", ID: "web-1", Port: 80, Check: { CheckID: "web-1-ttl", TTL: "30s" } });
  reg({ Name: "web", ID: "web-2", Port: 81, Check: { CheckID: "web-2-ttl", TTL: "30s", Status: "passing" } });
  return { ...kit, app: apiWith(kit.api) };
}

describe("aggregatedStatus (api.HealthChecks.AggregatedStatus)", () => {
  const c = (CheckID: string, Status: string) => ({ CheckID, Status });
  test("maintenance beats critical beats warning beats passing; no checks is passing; an unknown status is \"\"", () => {
    expect(aggregatedStatus([])).toBe("passing");
    expect(aggregatedStatus([c("a", "passing"), c("b", "warning")])).toBe("warning");
    expect(aggregatedStatus([c("a", "critical"), c("b", "warning")])).toBe("critical");
    expect(aggregatedStatus([c("a", "passing"), c("_node_maintenance", "critical")])).toBe("maintenance");
    expect(aggregatedStatus([c("_service_maintenance:web", "critical")])).toBe("maintenance");
    expect(aggregatedStatus([c("a", "bogus")])).toBe("");
    expect(["passing", "warning", "critical", "maintenance", ""].map(healthCode)).toEqual([200, 429, 503, 503, 503]);
  });
});

describe("GET /v1/agent/health/service/id/:id", () => {
  test("answers the service, its checks and the node's, with the aggregate as code and X-Consul-Reason", async () => {
    const { app, agent } = setup();
    agent.registerCheck(parseCheckRegistration({ Name: "node-ttl", TTL: "30s", Status: "passing" }));
    const res = await app.request("/v1/agent/health/service/id/web-1");
    expect([res.status, res.headers.get("x-consul-reason"), res.headers.get("content-type")]).toEqual([503, "critical", "application/json"]);
    const body = (await res.json()) as { AggregatedStatus: string; Service: { ID: string }; Checks: { CheckID: string; Type: string; Definition: unknown }[] };
    expect(body.AggregatedStatus).toBe("critical");
    expect(body.Service).toEqual((agent.agentServices() as Record<string, unknown>)["web-1"]!);
    expect(body.Checks.map((ch) => ch.CheckID)).toEqual(["node-ttl", "web-1-ttl"]);
    expect(body.Checks[1]).toMatchObject({ Node: "node-1", Status: "critical", ServiceID: "web-1", ServiceName: "web", Type: "" });
    expect(body.Checks[1]!.Definition).toEqual({
      Interval: "0s", Timeout: "0s", DeregisterCriticalServiceAfter: "0s", HTTP: "", Header: null, Method: "", Body: "", TLSSkipVerify: false, TCP: "",
    });
    agent.stop();
  });

  test("200 passing, 429 warning, 503 maintenance; ?format=text and Accept: text/plain answer the bare status", async () => {
    const { app, agent } = setup();
    agent.updateTTL("web-1-ttl", "passing", "");
    expect((await app.request("/v1/agent/health/service/id/web-1")).status).toBe(200);
    agent.updateTTL("web-1-ttl", "warning", "");
    const text = await app.request("/v1/agent/health/service/id/web-1?format=text");
    expect([text.status, text.headers.get("content-type"), await text.text()]).toEqual([429, "text/plain", "warning"]);
    agent.enableServiceMaintenance("web-1", "");
    const accept = await app.request("/v1/agent/health/service/id/web-1", { headers: { Accept: "text/plain; q=1" } });
    expect([accept.status, accept.headers.get("x-consul-reason"), await accept.text()]).toEqual([503, "maintenance", "maintenance"]);
    agent.stop();
  });

  test("an unknown ID is 404 with a critical, empty body, or the reason as a JSON string when asked for text", async () => {
    const { app, agent } = setup();
    const res = await app.request("/v1/agent/health/service/id/nope");
    expect([res.status, res.headers.get("x-consul-reason")]).toEqual([404, "ServiceId nope not found"]);
    expect(await res.json()).toEqual({ AggregatedStatus: "critical", Service: null, Checks: null });
    const text = await app.request("/v1/agent/health/service/id/nope?format=text");
    expect([text.status, text.headers.get("content-type"), await text.text()]).toEqual([404, "application/json", '"ServiceId nope not found"']);
    const empty = await app.request("/v1/agent/health/service/id/");
    expect([empty.status, await empty.text()]).toEqual([400, "Missing serviceID"]);
    expect((await app.request("/v1/agent/health/service/id/web-1", { method: "PUT" })).status).toBe(405);
    agent.stop();
  });
});

describe("GET /v1/agent/health/service/name/:name", () => {
  test("lists every instance; the worst status sets the code", async () => {
    const { app, agent } = setup();
    const res = await app.request("/v1/agent/health/service/name/web");
    expect([res.status, res.headers.get("x-consul-reason")]).toEqual([503, "critical"]);
    const body = (await res.json()) as { AggregatedStatus: string; Service: { ID: string } }[];
    expect(body.map((b) => [b.Service.ID, b.AggregatedStatus])).toEqual([["web-1", "critical"], ["web-2", "passing"]]);
    agent.updateTTL("web-1-ttl", "warning", "");
    const text = await app.request("/v1/agent/health/service/name/web?format=text");
    expect([text.status, await text.text()]).toEqual([429, "warning"]);
    agent.updateTTL("web-1-ttl", "passing", "");
    expect((await app.request("/v1/agent/health/service/name/web")).status).toBe(200);
    agent.stop();
  });

  test("no instance is 404 with [] (or the reason as text); an empty name is 400", async () => {
    const { app, agent } = setup();
    const res = await app.request("/v1/agent/health/service/name/db");
    expect([res.status, res.headers.get("x-consul-reason"), await res.json()]).toEqual([404, "ServiceName db Not Found", []]);
    const text = await app.request("/v1/agent/health/service/name/db?format=text");
    expect([text.status, await text.text()]).toEqual([404, "ServiceName db Not Found"]);
    const empty = await app.request("/v1/agent/health/service/name/");
    expect([empty.status, await empty.text()]).toEqual([400, "Missing service Name"]);
    agent.stop();
  });
});
