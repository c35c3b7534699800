/** The admin handler as a pure function of the gateway's state. */
import { describe, expect, test } from "bun:test";
import type { GatewayConfig } from "./config_types.ts";
import { gatewayAdminHandler } from "./admin.ts";
import { GatewayStats } from "./stats.ts";

const config: GatewayConfig = {
  listeners: new Map(),
  clusters: new Map([["dc2.internal.td", {
    name: "dc2.internal.td", type: "EDS", connectTimeoutMs: 5000,
    endpoints: [{ address: "198.18.0.1", port: 443, healthy: true, weight: 1 }, { address: "198.18.0.2", port: 443, healthy: false, weight: 2 }],
  }]]),
};

function handler(ready: boolean) {
  const stats = new GatewayStats();
  stats.counter({ kind: "cluster", name: "dc2.internal.td" }, "upstream_cx_total").add(3);
  stats.gauge({ kind: "server" }, "total_connections").add(2);
  return gatewayAdminHandler({
    stats, ready: () => ready, config: () => config, ejected: (_c, a) => a === "198.18.0.1", configDump: () => ({ configs: [] }),
  });
}

const get = async (h: (r: Request) => Response, path: string) => {
  const res = h(new Request(`http://admin${path}`));
  return { status: res.status, body: await res.text() };
};

describe("gateway admin", () => {
  test("/ready is LIVE only once configured", async () => {
    expect(await get(handler(false), "/ready")).toEqual({ status: 503, body: "PRE_INITIALIZING\n" });
    expect(await get(handler(true), "/ready")).toEqual({ status: 200, body: "LIVE\n" });
  });

  test("/stats in Envoy's text form and in Prometheus form", async () => {
    const h = handler(true);
    expect((await get(h, "/stats")).body).toBe("cluster.dc2.internal.td.upstream_cx_total: 3\nserver.total_connections: 2\n");
    const prom = (await get(h, "/stats?format=prometheus")).body;
    expect(prom).toContain('# TYPE envoy_cluster_upstream_cx_total counter\nenvoy_cluster_upstream_cx_total{envoy_cluster_name="dc2.internal.td"} 3\n');
    expect(prom).toContain("# TYPE envoy_server_total_connections gauge\nenvoy_server_total_connections 2\n");
    expect((await get(h, "/stats/prometheus")).body).toBe(prom);
  });

  test("/clusters shows health, ejection and weight per endpoint; /config_dump is JSON; unknown paths 404", async () => {
    const h = handler(true);
    const body = (await get(h, "/clusters")).body;
    expect(body).toContain("dc2.internal.td::198.18.0.1:443::health_flags::/failed_outlier_check\n");
    expect(body).toContain("dc2.internal.td::198.18.0.2:443::health_flags::/failed_eds_health\n");
    expect(body).toContain("dc2.internal.td::198.18.0.2:443::weight::2\n");
    expect(JSON.parse((await get(h, "/config_dump")).body)).toEqual({ configs: [] });
    expect((await get(h, "/nope")).status).toBe(404);
  });
});
