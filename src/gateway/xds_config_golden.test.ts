/**
 * Every mesh gateway configuration the control plane's golden files hold (src/xds/resources/testdata/
 * mesh_gateway) is accepted by the gateway's configuration store, whole, and decodes to what the
 * resources say. The goldens are read from disk as JSON with a registry built from src/gen here, so the
 * gateway layer stays independent of src/xds.
 */
import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { createRegistry, fromJson, type JsonValue } from "@bufbuild/protobuf";
import { AnySchema, type Any } from "@bufbuild/protobuf/wkt";
import { file_envoy_config_cluster_v3_cluster } from "../gen/envoy/config/cluster/v3/cluster_pb.ts";
import { file_envoy_config_endpoint_v3_endpoint } from "../gen/envoy/config/endpoint/v3/endpoint_pb.ts";
import { file_envoy_config_listener_v3_listener } from "../gen/envoy/config/listener/v3/listener_pb.ts";
import { file_envoy_extensions_filters_listener_tls_inspector_v3_tls_inspector } from "../gen/envoy/extensions/filters/listener/tls_inspector/v3/tls_inspector_pb.ts";
import { file_envoy_extensions_filters_network_sni_cluster_v3_sni_cluster } from "../gen/envoy/extensions/filters/network/sni_cluster/v3/sni_cluster_pb.ts";
import { file_envoy_extensions_filters_network_tcp_proxy_v3_tcp_proxy } from "../gen/envoy/extensions/filters/network/tcp_proxy/v3/tcp_proxy_pb.ts";
import { createGatewayConfigStore } from "./xds_config.ts";
import { GATEWAY_TYPE_URLS } from "./xds_sink.ts";

const DIR = fileURLToPath(new URL("../xds/resources/testdata/mesh_gateway", import.meta.url));
const registry = createRegistry(
  file_envoy_config_listener_v3_listener,
  file_envoy_config_cluster_v3_cluster,
  file_envoy_config_endpoint_v3_endpoint,
  file_envoy_extensions_filters_listener_tls_inspector_v3_tls_inspector,
  file_envoy_extensions_filters_network_sni_cluster_v3_sni_cluster,
  file_envoy_extensions_filters_network_tcp_proxy_v3_tcp_proxy,
);

interface Golden {
  readonly listeners: JsonValue[];
  readonly clusters: JsonValue[];
  readonly endpoints: JsonValue[];
}

/** name -> Any, named the way the xDS client names resources. */
function resources(list: JsonValue[], nameField: "name" | "clusterName"): Map<string, Any> {
  return new Map(list.map((j) => [(j as Record<string, string>)[nameField]!, fromJson(AnySchema, j, { registry })]));
}

const files = readdirSync(DIR).filter((f) => f.endsWith(".golden.json")).sort();

test("the golden directory is where this test expects it", () => {
  expect(files.length).toBeGreaterThanOrEqual(11);
});

describe("mesh gateway goldens", () => {
  for (const file of files) {
    test(`${file} is accepted whole`, () => {
      const golden = JSON.parse(readFileSync(join(DIR, file), "utf8")) as Golden;
      const s = createGatewayConfigStore();
      // The order a client applies them in (clusters warm before listeners), then endpoints first too.
      expect(s.apply(GATEWAY_TYPE_URLS.cluster, resources(golden.clusters, "name"))).toBeUndefined();
      expect(s.apply(GATEWAY_TYPE_URLS.endpoint, resources(golden.endpoints, "clusterName"))).toBeUndefined();
      expect(s.apply(GATEWAY_TYPE_URLS.listener, resources(golden.listeners, "name"))).toBeUndefined();
      const cfg = s.current();
      expect(cfg.listeners.size).toBe(golden.listeners.length);
      expect(cfg.clusters.size).toBe(golden.clusters.length);

      const eds = golden.clusters.filter((c) => (c as { type: string }).type === "EDS").map((c) => (c as { name: string }).name);
      expect(s.endpointNames()).toEqual([...eds].sort());
      for (const cla of golden.endpoints as { clusterName: string; endpoints?: { lbEndpoints?: unknown[] }[] }[]) {
        const want = (cla.endpoints ?? []).reduce((n, l) => n + (l.lbEndpoints?.length ?? 0), 0);
        expect(cfg.clusters.get(cla.clusterName)?.endpoints.length).toBe(want);
      }
      for (const l of cfg.listeners.values()) {
        expect(l.tlsInspector).toBe(true);
        expect(l.chains.at(-1)).toMatchObject({ serverNames: [], route: { kind: "sni-cluster" } });
        for (const c of l.chains.slice(0, -1)) {
          expect(c.serverNames).toHaveLength(1);
          expect(c.route).toEqual({ kind: "cluster", cluster: c.serverNames[0]!.replace(/^\*\./, "") });
        }
      }
      for (const c of cfg.clusters.values()) expect(c.outlier).toEqual({ consecutiveFailures: 5, baseEjectionMs: 30_000, maxEjectionPercent: 10, intervalMs: 10_000, maxEjectionMs: 300_000 });

      // Applying the same sets again changes nothing.
      const before = s.current();
      expect(s.apply(GATEWAY_TYPE_URLS.listener, resources(golden.listeners, "name"))).toBeUndefined();
      expect(s.current()).toBe(before);
    });
  }
});

describe("golden specifics", () => {
  const load = (name: string) => {
    const golden = JSON.parse(readFileSync(join(DIR, `${name}.golden.json`), "utf8")) as Golden;
    const s = createGatewayConfigStore();
    s.apply(GATEWAY_TYPE_URLS.endpoint, resources(golden.endpoints, "clusterName"));
    s.apply(GATEWAY_TYPE_URLS.cluster, resources(golden.clusters, "name"));
    s.apply(GATEWAY_TYPE_URLS.listener, resources(golden.listeners, "name"));
    return s.current();
  };

  test("mesh-gateway: the remote datacenter by wildcard, local services by SNI", () => {
    const cfg = load("mesh-gateway");
    const l = cfg.listeners.get("default:10.10.0.1:8443")!;
    expect(l).toMatchObject({ address: "10.10.0.1", port: 8443 });
    expect(l.chains.map((c) => [c.serverNames, c.route, c.statPrefix])).toEqual([
      [["*.dc2.internal.11111111-2222-3333-4444-555555555555.consul"], { kind: "cluster", cluster: "dc2.internal.11111111-2222-3333-4444-555555555555.consul" }, "mesh_gateway_remote_default_dc2_tcp"],
      [[], { kind: "sni-cluster" }, "mesh_gateway_local_default_tcp"],
    ]);
    expect(cfg.clusters.get("dc2.internal.11111111-2222-3333-4444-555555555555.consul")).toMatchObject({
      type: "EDS",
      connectTimeoutMs: 5000,
      endpoints: [
        { address: "198.18.2.1", port: 443, healthy: true, weight: 1 },
        { address: "198.18.2.2", port: 443, healthy: true, weight: 1 },
      ],
    });
  });

  test("hostname gateways: LOGICAL_DNS, and STRICT_DNS when asked, refreshing every 10 s over IPv4", () => {
    const dc3 = "dc3.internal.11111111-2222-3333-4444-555555555555.consul";
    expect(load("mesh-gateway-hostname-gateways").clusters.get(dc3)).toMatchObject({
      type: "LOGICAL_DNS",
      dns: { refreshMs: 10_000, family: "v4_only" },
      endpoints: [{ address: "gw2.dc3.example.com", port: 443, healthy: true, weight: 1 }],
    });
    expect(load("mesh-gateway-hostname-gateways-strict-dns").clusters.get(dc3)).toMatchObject({ type: "STRICT_DNS" });
  });

  test("service timeouts reach the clusters", () => {
    const timeouts = [...load("mesh-gateway-service-timeouts").clusters.values()].map((c) => c.connectTimeoutMs);
    expect(new Set(timeouts).size).toBeGreaterThan(1);
  });
});
