/**
 * Goldens for the Envoy bootstrap: one JSON file per scenario under testdata/envoy/, as
 * `causeway connect envoy -bootstrap` prints it. `UPDATE_GOLDEN=1 bun test src/main/commands/connect`
 * rewrites them; review the diff. Every bootstrap is also decoded strictly (unknown fields are errors,
 * Any payloads resolved through the registry) as Envoy's v3 Bootstrap and checked against its
 * protoc-gen-validate rules.
 */
import { describe, expect, test } from "bun:test";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { createRegistry, fromJson, type JsonValue } from "@bufbuild/protobuf";
import { anyUnpack } from "@bufbuild/protobuf/wkt";
import { BootstrapSchema, file_envoy_config_bootstrap_v3_bootstrap } from "../../../gen/envoy/config/bootstrap/v3/bootstrap_pb.ts";
import { file_envoy_config_metrics_v3_stats } from "../../../gen/envoy/config/metrics/v3/stats_pb.ts";
import { envoyRegistry } from "../../../xds/index.ts";
import { strictCheckMessage } from "../../../xds/resources/strict_kit.test.ts";
import { buildEnvoyBootstrap, type EnvoyBootstrapSettings, type JsonObject } from "./envoy_bootstrap.ts";

const dir = join(dirname(fileURLToPath(import.meta.url)), "testdata", "envoy");
const update = process.env.UPDATE_GOLDEN === "1";

/** The registry for strict decoding: the xDS resource types plus the bootstrap's own and the stats sinks. */
const registry = createRegistry(envoyRegistry, file_envoy_config_bootstrap_v3_bootstrap, file_envoy_config_metrics_v3_stats);

const CA_PEM = "-----BEGIN CERTIFICATE-----\nMIIBfake0CA\n-----END CERTIFICATE-----\n";

const BASE: EnvoyBootstrapSettings = {
  proxyId: "web-sidecar-proxy",
  proxyCluster: "web",
  namespace: "",
  envoyVersion: "1.14.2",
  adminAccessLogPath: "/dev/null",
  adminAddress: "127.0.0.1",
  adminPort: 19000,
  agent: { kind: "ip", address: "127.0.0.1", port: 8502 },
  token: "",
  env: { STATSD_ADDR: "udp://10.1.2.3:8125" },
};

const ZIPKIN_CLUSTER = {
  name: "zipkin",
  type: "STRICT_DNS",
  connect_timeout: "5s",
  load_assignment: {
    cluster_name: "zipkin",
    endpoints: [{ lb_endpoints: [{ endpoint: { address: { socket_address: { address: "zipkin.service.consul", port_value: 9411 } } } }] }],
  },
};
const STATSD_CLUSTER = { ...ZIPKIN_CLUSTER, name: "statsd", load_assignment: { ...ZIPKIN_CLUSTER.load_assignment, cluster_name: "statsd" } };
const TCP_LISTENER = {
  name: "fake_listener",
  address: { socket_address: { address: "0.0.0.0", port_value: 9999 } },
  filter_chains: [
    {
      filters: [
        {
          name: "envoy.filters.network.tcp_proxy",
          typed_config: { "@type": "type.googleapis.com/envoy.extensions.filters.network.tcp_proxy.v3.TcpProxy", stat_prefix: "fake", cluster: "zipkin" },
        },
      ],
    },
  ],
};
const json = (v: unknown) => JSON.stringify(v);

/** Scenario name -> settings and Proxy.Config. */
const SCENARIOS: Record<string, { settings: EnvoyBootstrapSettings; config?: Record<string, unknown> }> = {
  plain: { settings: BASE },
  "grpc-tls": { settings: { ...BASE, agentTls: { caPem: CA_PEM } } },
  "grpc-tls-no-ca": { settings: { ...BASE, agentTls: {} } },
  "grpc-dns": { settings: { ...BASE, agent: { kind: "dns", host: "consul-agent.internal", port: 8502 } } },
  "unix-socket": { settings: { ...BASE, agent: { kind: "unix", path: "/var/run/causeway/grpc.sock" } } },
  "unix-socket-tls": { settings: { ...BASE, agent: { kind: "unix", path: "/var/run/causeway/grpc.sock" }, agentTls: { caPem: CA_PEM } } },
  token: { settings: { ...BASE, token: "c9a52720-bf6c-4aa6-b8bc-66881a5ade95", adminAddress: "0.0.0.0", adminPort: 19005, adminAccessLogPath: "/tmp/admin.log" } },
  "extra-clusters": {
    settings: BASE,
    config: {
      envoy_extra_static_clusters_json: `${json(ZIPKIN_CLUSTER)},\n${json(STATSD_CLUSTER)}`,
      envoy_extra_static_listeners_json: json(TCP_LISTENER),
    },
  },
  "stats-sinks": {
    settings: BASE,
    config: {
      envoy_statsd_url: "$STATSD_ADDR",
      envoy_dogstatsd_url: "unix:///var/run/dogstatsd.sock",
      envoy_extra_stats_sinks_json: json({
        name: "envoy.stat_sinks.statsd",
        typed_config: { "@type": "type.googleapis.com/envoy.config.metrics.v3.StatsdSink", tcp_cluster_name: "statsd", prefix: "envoy" },
      }),
      envoy_stats_tags: ["canary", "Version=v2", "local_cluster=web-canary"],
      envoy_stats_flush_interval: "5s",
    },
  },
  "prometheus-and-stats-listeners": {
    settings: BASE,
    config: { envoy_prometheus_bind_addr: "0.0.0.0:9102", envoy_stats_bind_addr: "0.0.0.0:9103", envoy_stats_tags: "team=payments" },
  },
  "tracing-and-stats-config": {
    settings: BASE,
    config: {
      envoy_extra_static_clusters_json: json(ZIPKIN_CLUSTER),
      envoy_tracing_json: json({ http: { name: "envoy.tracers.zipkin" } }),
      envoy_stats_config_json: json({ use_all_default_tags: false, stats_tags: [{ tag_name: "service", fixed_value: "web" }] }),
    },
  },
  "ready-listener": { settings: { ...BASE, proxyId: "ingress-gateway", proxyCluster: "ingress-gateway", readyBindAddr: "127.0.0.1:21000" } },
  // A registered mesh gateway (also what `connect envoy -gateway=mesh -register -bootstrap` prints: see
  // envoy_gateway.test.ts): node id and cluster are the gateway's; its bind options are not bootstrap keys.
  "mesh-gateway": {
    settings: { ...BASE, proxyId: "mesh-gateway", proxyCluster: "mesh-gateway" },
    config: { envoy_gateway_no_default_bind: true, envoy_gateway_bind_tagged_addresses: true },
  },
};

/** Strict decode against Envoy's v3 Bootstrap plus its PGV rules; returns the violations. */
function strictViolations(doc: JsonObject): string[] {
  const msg = fromJson(BootstrapSchema, doc as JsonValue, { registry, ignoreUnknownFields: false });
  const violations = strictCheckMessage(BootstrapSchema, msg);
  // The PGV kit resolves Anys through the xDS registry, which has no stats sinks; check those here.
  const sinkTypes = /Any type type\.googleapis\.com\/envoy\.config\.metrics\.v3\.(Dog)?StatsdSink is not in the registry$/;
  for (const [i, sink] of msg.statsSinks.entries()) {
    if (sink.configType.case !== "typedConfig") continue;
    const inner = anyUnpack(sink.configType.value, registry);
    if (!inner) violations.push(`stats_sinks[${i}]: does not unpack`);
    else violations.push(...strictCheckMessage(registry.getMessage(inner.$typeName)!, inner, `stats_sinks[${i}]`));
  }
  return violations.filter((v) => !sinkTypes.test(v));
}

describe("envoy bootstrap goldens", () => {
  for (const name of Object.keys(SCENARIOS).sort()) {
    test(name, () => {
      const { settings, config } = SCENARIOS[name]!;
      const doc = buildEnvoyBootstrap(settings, config);
      const text = `${JSON.stringify(doc, null, 2)}\n`;
      const file = join(dir, `${name}.golden.json`);
      if (update) writeFileSync(file, text);
      expect(existsSync(file)).toBe(true);
      expect(text).toBe(readFileSync(file, "utf8"));
      expect(strictViolations(doc)).toEqual([]);
    });
  }
});

describe("envoy bootstrap contents", () => {
  test("the token travels as x-consul-token metadata on the ADS stream to local_agent", () => {
    const doc = buildEnvoyBootstrap({ ...BASE, token: "secret" }, undefined) as { dynamic_resources: { ads_config: { grpc_services: unknown[] } } };
    expect(doc.dynamic_resources.ads_config.grpc_services).toEqual([{ initial_metadata: [{ key: "x-consul-token", value: "secret" }], envoy_grpc: { cluster_name: "local_agent" } }]);
  });

  test("self_admin is added once, and not when an extra cluster already has that name", () => {
    const names = (config: Record<string, unknown>) =>
      ((buildEnvoyBootstrap(BASE, config).static_resources as { clusters: { name: string }[] }).clusters).map((c) => c.name);
    expect(names({ envoy_prometheus_bind_addr: "0.0.0.0:9102", envoy_stats_bind_addr: "0.0.0.0:9103" })).toEqual(["local_agent", "self_admin"]);
    const own = json({ ...ZIPKIN_CLUSTER, name: "self_admin" });
    expect(names({ envoy_prometheus_bind_addr: "0.0.0.0:9102", envoy_extra_static_clusters_json: own })).toEqual(["local_agent", "self_admin"]);
  });

  test("weak decoding: numbers and booleans become strings, one tag becomes a list", () => {
    const doc = buildEnvoyBootstrap(BASE, { envoy_stats_flush_interval: 5, envoy_stats_tags: "canary" });
    expect(doc.stats_flush_interval).toBe("5");
    expect((doc.stats_config as { stats_tags: unknown[] }).stats_tags[0]).toEqual({ tag_name: "canary", fixed_value: "1" });
  });

  test("bad options fail with a message naming the key", () => {
    const bad = (config: Record<string, unknown>) => () => buildEnvoyBootstrap(BASE, config);
    expect(bad({ envoy_tracing_json: { http: {} } })).toThrow("failed parsing Proxy.Config: 1 error(s) decoding:\n\n* 'envoy_tracing_json' expected type 'string', got unconvertible type 'map[string]interface {}'");
    expect(bad({ envoy_extra_static_clusters_json: "{nope" })).toThrow("failed parsing envoy_extra_static_clusters_json:");
    expect(bad({ envoy_tracing_json: "[1]" })).toThrow("failed parsing envoy_tracing_json: not a JSON object");
    expect(bad({ envoy_statsd_url: "http://10.0.0.1:8125" })).toThrow('unsupported address protocol "http" for envoy.stat_sinks.statsd sink');
    expect(bad({ envoy_statsd_url: "udp://10.0.0.1" })).toThrow('failed to parse envoy.stat_sinks.statsd sink address "udp://10.0.0.1"');
    expect(bad({ envoy_prometheus_bind_addr: "0.0.0.0" })).toThrow("invalid envoy_prometheus_metrics bind address: address 0.0.0.0: missing port in address");
    expect(bad({ envoy_bootstrap_json_tpl: "{{ .ProxyID }}" })).toThrow("'envoy_bootstrap_json_tpl' is not supported");
  });

  test("strict decoding catches a field Envoy's v3 Bootstrap does not have", () => {
    const v2Cluster = json({ name: "legacy", connect_timeout: "1s", hosts: [{ socket_address: { address: "127.0.0.1", port_value: 1 } }] });
    expect(() => strictViolations(buildEnvoyBootstrap(BASE, { envoy_extra_static_clusters_json: v2Cluster }))).toThrow(/hosts/);
  });

  test("the PGV check reports rule violations, also inside a stats sink", () => {
    expect(strictViolations(buildEnvoyBootstrap({ ...BASE, adminPort: 70000 }, undefined)).join("\n")).toContain("port_value");
    const emptySink = json({ name: "envoy.stat_sinks.statsd", typed_config: { "@type": "type.googleapis.com/envoy.config.metrics.v3.StatsdSink" } });
    expect(strictViolations(buildEnvoyBootstrap(BASE, { envoy_extra_stats_sinks_json: emptySink })).join("\n")).toContain("stats_sinks[0]");
  });
});
