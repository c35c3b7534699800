import { describe, expect, test } from "bun:test";
import { buildConfig, defaultConfig, parseConfigJson } from "./config.ts";
import { debugConfig } from "./debug_config.ts";

const base = { ...defaultConfig("h"), dataDir: "/d" };

describe("telemetry settings", () => {
  test("Consul's defaults: prefix consul, hostname in gauges, filter_default true, Prometheus off", () => {
    expect(buildConfig(base, []).telemetry).toEqual({ disableHostname: false, prometheusRetentionMs: 0, metricsPrefix: "consul", filterDefault: true, prefixFilter: [] });
  });

  test("the block's keys are read; a later source's keys win one by one; DebugConfig shows them as Consul does", () => {
    const cfg = buildConfig(base, [
      parseConfigJson("a.json", { telemetry: { prometheus_retention_time: "60s", prefix_filter: ["+consul.raft.apply", "-consul.http"] } }),
      parseConfigJson("b.json", { telemetry: { disable_hostname: true, metrics_prefix: "causeway", filter_default: false } }),
    ]);
    expect(cfg.telemetry).toEqual({ disableHostname: true, prometheusRetentionMs: 60_000, metricsPrefix: "causeway", filterDefault: false, prefixFilter: ["+consul.raft.apply", "-consul.http"] });
    expect(debugConfig(cfg, { dataDir: "/d", nodeId: "n", advertiseAddr: "10.0.0.1", addresses: {} }).Telemetry).toEqual({
      AllowedPrefixes: ["consul.raft.apply"], BlockedPrefixes: ["consul.http"], DisableHostname: true, FilterDefault: false, MetricsPrefix: "causeway", PrometheusRetentionTime: "1m0s",
    });
  });

  test("bad values and unknown keys name the file and the key; sinks Causeway lacks are refused with the alternative", () => {
    const bad = (telemetry: unknown) => () => parseConfigJson("t.json", { telemetry });
    expect(bad([])).toThrow('t.json: "telemetry" must be an object');
    expect(bad({ disable_hostname: "yes" })).toThrow('t.json: telemetry.disable_hostname must be true or false, got "yes"');
    expect(bad({ prometheus_retention_time: 60 })).toThrow('t.json: telemetry.prometheus_retention_time must be a duration such as "60s", got 60');
    expect(bad({ prefix_filter: ["consul.raft"] })).toThrow(`t.json: telemetry.prefix_filter: rule "consul.raft" must begin with either '+' or '-'`);
    expect(bad({ prefix_filter: "+consul" })).toThrow('t.json: telemetry.prefix_filter must be a list of strings, got "+consul"');
    expect(bad({ metrics_prefix: "a b" })).toThrow("t.json: telemetry.metrics_prefix must be a string of letters");
    expect(bad({ statsd_address: "127.0.0.1:8125" })).toThrow("t.json: telemetry.statsd_address: Causeway has no statsd sink; scrape /v1/agent/metrics?format=prometheus instead");
    expect(bad({ retention: "1s" })).toThrow("t.json: invalid config key telemetry.retention");
  });
});
