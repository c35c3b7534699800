/**
 * GET /v1/agent/metrics: the agent's metrics in go-metrics' InmemSink JSON (Consul's default), or with
 * `?format=prometheus` in the Prometheus text format 0.0.4, or OpenMetrics 1.0.0 text when the Accept
 * header prefers it (as a Prometheus server's scrape does). The Prometheus form is served only with a
 * positive `telemetry.prometheus_retention_time`, as in Consul; series not updated within the retention
 * time are dropped before each exposition.
 */
import type { Hono } from "hono";
import { OPENMETRICS_TEXT_TYPE, openMetricsText, PROMETHEUS_TEXT_TYPE, prometheusText, wantsOpenMetrics } from "../telemetry/index.ts";
import type { MetricsApi } from "./deps.ts";
import { query } from "./request.ts";
import { jsonResponse } from "./respond.ts";

/** Consul's answer (415, no trailing newline) to `?format=prometheus` when the retention time is not positive. */
export const PROMETHEUS_DISABLED = "Prometheus is not enabled since its retention time is not positive";

export function mountAgentMetrics(app: Hono, metrics: MetricsApi | undefined): void {
  app.get("/v1/agent/metrics", (c) => {
    if (!metrics) return c.body("metrics are not available on this agent\n", 500, { "Content-Type": "text/plain; charset=utf-8" });
    if (query(c, "format") !== "prometheus") return jsonResponse(c, metrics.registry.summary());
    if (metrics.prometheusRetentionMs <= 0) return c.body(PROMETHEUS_DISABLED, 415, { "Content-Type": "text/plain; charset=utf-8" });
    const now = metrics.registry.now();
    metrics.registry.expire(now - metrics.prometheusRetentionMs);
    return wantsOpenMetrics(c.req.header("accept"))
      ? c.body(openMetricsText(metrics.registry, now), 200, { "Content-Type": OPENMETRICS_TEXT_TYPE })
      : c.body(prometheusText(metrics.registry, now), 200, { "Content-Type": PROMETHEUS_TEXT_TYPE });
  });
}
