/**
 * Request timings as Consul 1.8 records them: `api.http` with labels `method` and `path`, and the older
 * `http.<METHOD>.<path>`, where `path` is the route's pattern with its parameters as "_" and "/" as "."
 * (`GET /v1/kv/*` -> `v1.kv._`), so that keys, service names and IDs never become metric names.
 * Requests no route matched are not timed. Handles are made once per method and route, so a request
 * allocates nothing for its metrics after the first.
 */
import type { SampleHandle } from "../telemetry/index.ts";
import type { MetricsApi } from "./deps.ts";

/** Consul's path label of a route pattern: `/v1/catalog/service/:service` -> `v1.catalog.service._`. */
export function routeMetricPath(pattern: string): string {
  return pattern.replace(/^\//, "").split("/").map((part) => (part.startsWith(":") || part === "*" ? "_" : part)).join(".");
}

/** Returns `record(method, routePattern, startedMs)`, which observes the time since `startedMs` for that route. */
export function requestTimer(metrics: MetricsApi): (method: string, route: string, startedMs: number) => void {
  const byMethod = new Map<string, Map<string, readonly [SampleHandle, SampleHandle]>>();
  return (method, route, startedMs) => {
    if (route === "/*" || route === "*") return;
    let byRoute = byMethod.get(method);
    if (!byRoute) byMethod.set(method, (byRoute = new Map()));
    let handles = byRoute.get(route);
    if (!handles) {
      const path = routeMetricPath(route);
      handles = [metrics.registry.sample("api.http", [["method", method], ["path", path]]), metrics.registry.sample(`http.${method}.${path}`)];
      byRoute.set(route, handles);
    }
    const ms = metrics.monotonic() - startedMs;
    handles[0].observe(ms);
    handles[1].observe(ms);
  };
}
