import { describe, expect, test } from "bun:test";
import { MetricsRegistry } from "../telemetry/index.ts";
import { createHttpApi } from "./app.ts";
import { PROMETHEUS_DISABLED } from "./agent_metrics.ts";
import type { AgentInfo, MetricsApi } from "./deps.ts";
import { routeMetricPath } from "./request_metrics.ts";

const agent: AgentInfo = {
  datacenter: "dc1", primaryDatacenter: "dc1", nodeName: "n1", nodeId: "id", server: true, version: "1.8.0", revision: "", advertiseAddr: "127.0.0.1",
  serfLanPort: 8301, serverPort: 8300, nodeMeta: {}, debugConfig: {}, stats: () => ({}),
};

/** An API over a registry on a hand-moved clock; each request takes `tick` ms of monotonic time. */
function api(retentionMs: number) {
  let now = 1_700_000_000_000;
  let mono = 0;
  const registry = new MetricsRegistry({ now: () => now });
  const metrics: MetricsApi = { registry, prometheusRetentionMs: retentionMs, monotonic: () => (mono += 5) };
  const app = createHttpApi({ agent, raft: { leader: () => "", peers: () => [] }, metrics });
  return { app, registry, advance: (ms: number) => void (now += ms) };
}

describe("GET /v1/agent/metrics", () => {
  test("Consul's JSON; request timings under api.http (method, path) and http.<METHOD>.<path>", async () => {
    const { app, advance } = api(0);
    await app.request("/v1/agent/self");
    await app.request("/v1/agent/self");
    await app.request("/v1/nowhere"); // no route: not timed
    advance(10_000);
    const res = await app.request("/v1/agent/metrics");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/json");
    const body = (await res.json()) as { Timestamp: string; Samples: { Name: string; Count: number; Mean: number; Labels: Record<string, string> }[]; Points: unknown[] };
    expect(body.Timestamp).toBe("2023-11-14 22:13:20 +0000 UTC");
    expect(body.Points).toEqual([]);
    expect(body.Samples.map((s) => [s.Name, s.Count, s.Mean, s.Labels])).toEqual([
      ["consul.api.http", 2, 5, { method: "GET", path: "v1.agent.self" }],
      ["consul.http.GET.v1.agent.self", 2, 5, {}],
    ]);
  });

  test("?format=prometheus: 415 with Consul's text unless the retention time is positive", async () => {
    const res = await api(0).app.request("/v1/agent/metrics?format=prometheus");
    expect(res.status).toBe(415);
    expect(await res.text()).toBe(PROMETHEUS_DISABLED);
  });

  test("?format=prometheus: text 0.0.4, or OpenMetrics when the Accept header prefers it; stale series expire", async () => {
    const { app, registry, advance } = api(60_000);
    registry.counter("raft.apply").add(3);
    const text = await app.request("/v1/agent/metrics?format=prometheus");
    expect(text.headers.get("content-type")).toBe("text/plain; version=0.0.4; charset=utf-8");
    expect(await text.text()).toContain("\nconsul_raft_apply 3\n");
    const open = await app.request("/v1/agent/metrics?format=prometheus", { headers: { accept: "application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5" } });
    expect(open.headers.get("content-type")).toBe("application/openmetrics-text; version=1.0.0; charset=utf-8");
    const openBody = await open.text();
    expect(openBody).toContain("\nconsul_raft_apply_total 3\n");
    expect(openBody.endsWith("# EOF\n")).toBe(true);
    advance(61_000);
    expect(await (await app.request("/v1/agent/metrics?format=prometheus")).text()).not.toContain("consul_raft_apply ");
  });

  test("route patterns become Consul's path labels", () => {
    expect(routeMetricPath("/v1/kv/*")).toBe("v1.kv._");
    expect(routeMetricPath("/v1/catalog/service/:service")).toBe("v1.catalog.service._");
    expect(routeMetricPath("/v1/agent/join/:address{.+}")).toBe("v1.agent.join._");
    expect(routeMetricPath("/v1/status/leader")).toBe("v1.status.leader");
  });
});
