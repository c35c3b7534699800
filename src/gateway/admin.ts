/**
 * The gateway's admin endpoint (Envoy's admin API, the parts an operator of a mesh gateway uses):
 * `/ready` (LIVE once the first configuration is applied), `/stats` in Envoy's text form or
 * `?format=prometheus` (also `/stats/prometheus`), `/clusters` (per cluster and endpoint: health,
 * weight, ejection) and `/config_dump` (the xDS resources the gateway holds, as JSON). A fetch handler;
 * the caller serves it (src/platform serveHttp) on `-admin-bind`.
 */
import type { GatewayConfig } from "./config_types.ts";
import type { GatewayStats } from "./stats.ts";

export interface GatewayAdminDeps {
  readonly stats: GatewayStats;
  /** Whether the first complete configuration (clusters and listeners) is applied. */
  ready(): boolean;
  config(): GatewayConfig;
  /** Whether an endpoint of a cluster is ejected by outlier detection now. */
  ejected(cluster: string, address: string, port: number): boolean;
  /** The xDS resources held and the client's state, JSON-ready. */
  configDump(): unknown;
}

const text = (body: string, status = 200) => new Response(body, { status, headers: { "content-type": "text/plain; charset=UTF-8" } });

/** Envoy's /clusters text: one `cluster::key::value` line per fact. */
export function clustersText(config: GatewayConfig, ejected: GatewayAdminDeps["ejected"]): string {
  let out = "";
  for (const name of [...config.clusters.keys()].sort()) {
    const c = config.clusters.get(name)!;
    out += `${name}::default_priority::max_connections::${c.maxConnections ?? 1024}\n`;
    out += `${name}::added_via_api::true\n`;
    for (const ep of c.endpoints) {
      const host = `${name}::${ep.address}:${ep.port}`;
      const flags = [!ep.healthy ? "/failed_eds_health" : "", ejected(name, ep.address, ep.port) ? "/failed_outlier_check" : ""].join("");
      out += `${host}::health_flags::${flags === "" ? "healthy" : flags}\n`;
      out += `${host}::weight::${ep.weight}\n`;
    }
  }
  return out;
}

/** The admin handler. Only GET (and HEAD) are served; unknown paths answer 404 as Envoy does. */
export function gatewayAdminHandler(d: GatewayAdminDeps): (req: Request) => Response {
  return (req) => {
    if (req.method !== "GET" && req.method !== "HEAD") return text("method not allowed\n", 405);
    const url = new URL(req.url);
    switch (url.pathname) {
      case "/ready":
        return d.ready() ? text("LIVE\n") : text("PRE_INITIALIZING\n", 503);
      case "/stats":
        return url.searchParams.get("format") === "prometheus" ? text(d.stats.prometheus()) : text(d.stats.text());
      case "/stats/prometheus":
        return text(d.stats.prometheus());
      case "/clusters":
        return text(clustersText(d.config(), d.ejected));
      case "/config_dump":
        return new Response(`${JSON.stringify(d.configDump(), null, 2)}\n`, { headers: { "content-type": "application/json" } });
      default:
        return text("invalid path. admin commands are: /clusters /config_dump /ready /stats /stats/prometheus\n", 404);
    }
  };
}
