/**
 * The agent's `telemetry` block: the subset of Consul 1.8's keys that applies to an agent without
 * statsd/dogstatsd/circonus sinks. config.ts parses the block with `parseTelemetryBlock`; this file holds
 * no I/O.
 */
import { nonNegativeDurationMs as durationMs } from "../lib/index.ts";
import { compilePrefixFilter } from "../telemetry/index.ts";

export interface TelemetrySettings {
  /** `disable_hostname`: no hostname inserted after the prefix in gauge names (Consul's default: false, inserted). */
  readonly disableHostname: boolean;
  /** `prometheus_retention_time`, ms: `?format=prometheus` is served when positive; series not updated for this long are dropped. */
  readonly prometheusRetentionMs: number;
  /** `metrics_prefix`: the first part of every name (default "consul", so that dashboards built for Consul work). */
  readonly metricsPrefix: string;
  /** `filter_default`: whether a metric no `prefix_filter` rule matches is kept (default true). */
  readonly filterDefault: boolean;
  /** `prefix_filter`: "+prefix" keeps, "-prefix" drops; the longest matching prefix decides, "-" wins a tie. */
  readonly prefixFilter: readonly string[];
}

export const DEFAULT_TELEMETRY: TelemetrySettings = {
  disableHostname: false, prometheusRetentionMs: 0, metricsPrefix: "consul", filterDefault: true, prefixFilter: [],
};

/** Keys Consul accepts in the block that name sinks Causeway does not have: refused with this reason. */
const UNSUPPORTED_SINKS = [
  "statsd_address", "statsite_address", "dogstatsd_addr", "dogstatsd_tags", "circonus_api_token", "circonus_submission_url", "circonus_api_url",
  "circonus_api_app", "circonus_submission_interval", "circonus_check_id", "circonus_check_force_metric_activation", "circonus_check_instance_id",
  "circonus_check_search_tag", "circonus_check_display_name", "circonus_check_tags", "circonus_broker_id", "circonus_broker_select_tag",
];

/**
 * The settings one `telemetry` block sets, or a message naming the key (with `telemetry.` in front) that
 * is unknown or has the wrong type. `prefix_filter` entries are checked here; a list replaces an earlier
 * source's list, as Consul's does.
 */
export function parseTelemetryBlock(block: Readonly<Record<string, unknown>>): Partial<TelemetrySettings> | string {
  const out: { -readonly [K in keyof TelemetrySettings]?: TelemetrySettings[K] } = {};
  for (const [key, v] of Object.entries(block)) {
    const name = `telemetry.${key}`;
    switch (key) {
      case "disable_hostname":
      case "filter_default":
        if (typeof v !== "boolean") return `${name} must be true or false, got ${JSON.stringify(v)}`;
        out[key === "disable_hostname" ? "disableHostname" : "filterDefault"] = v;
        break;
      case "metrics_prefix":
        if (typeof v !== "string" || !/^[A-Za-z0-9_.-]*$/.test(v)) return `${name} must be a string of letters, digits, '.', '_' or '-', got ${JSON.stringify(v)}`;
        out.metricsPrefix = v;
        break;
      case "prometheus_retention_time": {
        const ms = typeof v === "string" ? durationMs(v) : undefined;
        if (ms === undefined) return `${name} must be a duration such as "60s", got ${JSON.stringify(v)}`;
        out.prometheusRetentionMs = ms;
        break;
      }
      case "prefix_filter": {
        if (!Array.isArray(v) || !v.every((x) => typeof x === "string")) return `${name} must be a list of strings, got ${JSON.stringify(v)}`;
        try {
          compilePrefixFilter(true, v);
        } catch (err) {
          return `${name}: ${(err as Error).message}`;
        }
        out.prefixFilter = [...v];
        break;
      }
      default:
        return UNSUPPORTED_SINKS.includes(key)
          ? `${name}: Causeway has no ${key.split("_")[0]} sink; scrape /v1/agent/metrics?format=prometheus instead`
          : `invalid config key ${name}`;
    }
  }
  return out;
}
