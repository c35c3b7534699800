import { describe, expect, test } from "bun:test";
import type { Any } from "@bufbuild/protobuf/wkt";
import { Cluster_DiscoveryType, Cluster_DnsLookupFamily, Cluster_LbPolicy } from "../gen/envoy/config/cluster/v3/cluster_pb.ts";
import { RoutingPriority } from "../gen/envoy/config/core/v3/base_pb.ts";
import { HealthStatus } from "../gen/envoy/config/core/v3/health_check_pb.ts";
import type { ClusterConfig, EndpointConfig } from "./config_types.ts";
import { createGatewayConfigStore } from "./xds_config.ts";
import { applyClusters, applyEndpoints, assignment, edsCluster, lbEndpoints, type EndpointSpec, type Override } from "./xds_config_kit.test.ts";

const NAME = "c";

/** Applies one cluster; its config, or the NACK reason. */
function cluster(override: Override): ClusterConfig | string {
  const s = createGatewayConfigStore();
  return applyClusters(s, [NAME, edsCluster(NAME, override)]) ?? s.current().clusters.get(NAME)!;
}
const outlierOf = (od: Override) => (cluster({ outlierDetection: od }) as ClusterConfig).outlier;
const dns = (type: Cluster_DiscoveryType, eps: EndpointSpec[], extra: Override = {}) =>
  cluster({
    clusterDiscoveryType: { case: "type", value: type },
    edsClusterConfig: undefined,
    loadAssignment: { clusterName: NAME, endpoints: [{ lbEndpoints: lbEndpoints(eps) }] },
    ...extra,
  });

/** Applies one assignment to an EDS cluster; its endpoints, or the NACK reason. */
function endpoints(any: Any): readonly EndpointConfig[] | string {
  const s = createGatewayConfigStore();
  applyClusters(s, [NAME, edsCluster(NAME)]);
  return applyEndpoints(s, [NAME, any]) ?? s.current().clusters.get(NAME)!.endpoints;
}

describe("clusters", () => {
  test("connect_timeout, default 5 s; zero is refused", () => {
    expect(cluster({ connectTimeout: { seconds: 1n, nanos: 500_000_000 } })).toMatchObject({ connectTimeoutMs: 1500 });
    expect(cluster({ connectTimeout: undefined })).toMatchObject({ connectTimeoutMs: 5000 });
    expect(cluster({ connectTimeout: {} })).toBe("Cluster c.connect_timeout: must be greater than 0");
  });

  test("LOGICAL_DNS and STRICT_DNS take host names from the inline assignment, with DNS settings", () => {
    const logical = dns(Cluster_DiscoveryType.LOGICAL_DNS, [{ address: "gw.example.com", port: 443 }], {
      dnsRefreshRate: { seconds: 10n },
      dnsLookupFamily: Cluster_DnsLookupFamily.V4_ONLY,
    });
    expect(logical).toMatchObject({ type: "LOGICAL_DNS", dns: { refreshMs: 10_000, family: "v4_only" }, endpoints: [{ address: "gw.example.com", port: 443, healthy: true }] });
    const strict = dns(Cluster_DiscoveryType.STRICT_DNS, [{ address: "a.example.com" }, { address: "b.example.com", health: HealthStatus.UNHEALTHY }]);
    expect(strict).toMatchObject({ type: "STRICT_DNS", dns: { refreshMs: 5000, family: "auto" } });
    expect((strict as ClusterConfig).endpoints.map((e) => e.healthy)).toEqual([true, false]);
    const s = createGatewayConfigStore();
    applyClusters(s, ["d", edsCluster("d")]);
    expect(s.endpointNames()).toEqual(["d"]);
  });

  test("LOGICAL_DNS takes exactly one endpoint; DNS clusters need an assignment", () => {
    expect(dns(Cluster_DiscoveryType.LOGICAL_DNS, [{ address: "a.x" }, { address: "b.x" }])).toBe(
      "Cluster c: LOGICAL_DNS clusters must have a single locality_lb_endpoint and a single lb_endpoint",
    );
    expect(cluster({ clusterDiscoveryType: { case: "type", value: Cluster_DiscoveryType.STRICT_DNS }, edsClusterConfig: undefined })).toBe(
      "Cluster c: a DNS cluster needs a load_assignment",
    );
  });

  test("other discovery types are refused", () => {
    expect(cluster({ clusterDiscoveryType: { case: "type", value: Cluster_DiscoveryType.STATIC } })).toBe(
      "Cluster c: type STATIC is not supported (EDS, LOGICAL_DNS or STRICT_DNS)",
    );
    expect(cluster({ clusterDiscoveryType: { case: "type", value: Cluster_DiscoveryType.ORIGINAL_DST } })).toContain("type ORIGINAL_DST is not supported");
    expect(cluster({ clusterDiscoveryType: { case: undefined } })).toContain("type STATIC is not supported");
  });

  test("EDS must come over ADS under the cluster's name, without inline endpoints", () => {
    expect(cluster({ edsClusterConfig: { edsConfig: { configSourceSpecifier: { case: "path", value: "/eds" } } } })).toBe(
      "Cluster c.eds_cluster_config.eds_config: path is not supported by the built-in gateway",
    );
    expect(cluster({ edsClusterConfig: {} })).toBe("Cluster c.eds_cluster_config: eds_config is required");
    expect(cluster({ edsClusterConfig: { serviceName: "other", edsConfig: { configSourceSpecifier: { case: "ads", value: {} } } } })).toContain(
      "service_name: only the cluster's own name is supported",
    );
    expect(cluster({ loadAssignment: { clusterName: NAME } })).toBe("Cluster c: load_assignment is not supported on an EDS cluster");
  });

  test("round robin and least request are served; hash and random policies are refused", () => {
    expect(cluster({ lbPolicy: Cluster_LbPolicy.LEAST_REQUEST })).toMatchObject({ type: "EDS" });
    expect(cluster({ lbPolicy: Cluster_LbPolicy.RING_HASH })).toBe("Cluster c: lb_policy RING_HASH is not supported (ROUND_ROBIN or LEAST_REQUEST)");
    expect(cluster({ lbPolicy: Cluster_LbPolicy.RANDOM })).toContain("lb_policy RANDOM");
  });

  test("the gateway never originates TLS", () => {
    expect(cluster({ transportSocket: { name: "envoy.transport_sockets.tls" } })).toBe(
      "Cluster c: transport_socket is not supported: the built-in gateway passes TLS through and never originates it",
    );
  });

  test("other features are refused by name", () => {
    expect(cluster({ healthChecks: [{}] })).toBe("Cluster c: health_checks is not supported by the built-in gateway");
    expect(cluster({ commonLbConfig: {} })).toBe("Cluster c: common_lb_config is not supported by the built-in gateway");
  });

  test("circuit breakers: the first default-priority max_connections", () => {
    const cb = (thresholds: Override[]) => cluster({ circuitBreakers: { thresholds } });
    expect(cb([{ priority: RoutingPriority.HIGH, maxConnections: 5 }, { maxConnections: 100 }, { maxConnections: 7 }])).toMatchObject({ maxConnections: 100 });
    expect(cb([{ trackRemaining: true }])).not.toHaveProperty("maxConnections");
    expect(cluster({})).not.toHaveProperty("maxConnections");
    expect(cb([{ maxRequests: 10 }])).toBe("Cluster c.circuit_breakers.thresholds[0]: max_requests is not supported by the built-in gateway");
  });
});

describe("outlier detection", () => {
  test("Consul's empty outlier_detection gets Envoy's defaults", () => {
    expect(outlierOf({})).toEqual({ consecutiveFailures: 5, baseEjectionMs: 30_000, maxEjectionPercent: 10, intervalMs: 10_000, maxEjectionMs: 300_000 });
    expect((cluster({ outlierDetection: undefined }) as ClusterConfig).outlier).toBeUndefined();
  });

  test("explicit settings", () => {
    const o = outlierOf({ consecutive5xx: 3, interval: { seconds: 1n }, baseEjectionTime: { seconds: 2n }, maxEjectionPercent: 50, maxEjectionTime: { seconds: 20n } });
    expect(o).toEqual({ consecutiveFailures: 3, baseEjectionMs: 2000, maxEjectionPercent: 50, intervalMs: 1000, maxEjectionMs: 20_000 });
    expect(outlierOf({ baseEjectionTime: { seconds: 400n } })?.maxEjectionMs).toBe(400_000);
  });

  test("the lowest threshold among the enforced consecutive detectors", () => {
    expect(outlierOf({ consecutiveGatewayFailure: 2 })?.consecutiveFailures).toBe(5); // not enforced by default
    expect(outlierOf({ consecutiveGatewayFailure: 2, enforcingConsecutiveGatewayFailure: 100 })?.consecutiveFailures).toBe(2);
    expect(outlierOf({ enforcingConsecutive5xx: 0, enforcingConsecutiveGatewayFailure: 100, consecutiveGatewayFailure: 7 })?.consecutiveFailures).toBe(7);
    expect(outlierOf({ enforcingConsecutive5xx: 0 })).toBeUndefined();
    expect(outlierOf({ consecutive5xx: 0 })).toBeUndefined();
  });

  test("split_external_local_origin_errors: connect failures feed consecutive_local_origin_failure", () => {
    expect(outlierOf({ splitExternalLocalOriginErrors: true, consecutive5xx: 1, consecutiveLocalOriginFailure: 4 })?.consecutiveFailures).toBe(4);
    expect(outlierOf({ splitExternalLocalOriginErrors: true, enforcingConsecutiveLocalOriginFailure: 0 })).toBeUndefined();
  });

  test("refused: partial enforcement, statistical detectors, inconsistent times", () => {
    expect(cluster({ outlierDetection: { enforcingConsecutive5xx: 50 } })).toBe(
      "Cluster c.outlier_detection.enforcing_consecutive_5xx: 50% enforcement is not supported (only 0 or 100)",
    );
    expect(cluster({ outlierDetection: { enforcingSuccessRate: 100 } })).toContain("enforcing_success_rate: statistical outlier detection is not supported");
    expect(cluster({ outlierDetection: { enforcingSuccessRate: 0 } })).toMatchObject({ outlier: { consecutiveFailures: 5 } });
    expect(cluster({ outlierDetection: { successRateMinimumHosts: 3 } })).toBe("Cluster c.outlier_detection: success_rate_minimum_hosts is not supported by the built-in gateway");
    expect(cluster({ outlierDetection: { baseEjectionTime: { seconds: 10n }, maxEjectionTime: { seconds: 5n } } })).toBe(
      "Cluster c.outlier_detection: outlier detector's max_ejection_time cannot be smaller than base_ejection_time",
    );
    expect(cluster({ outlierDetection: { maxEjectionPercent: 101 } })).toContain("max_ejection_percent: must be at most 100");
    expect(cluster({ outlierDetection: { interval: {} } })).toContain("interval: must be greater than 0");
  });
});

describe("load assignments", () => {
  test("health status and weights", () => {
    const eps = endpoints(
      assignment(NAME, [
        { address: "10.0.0.1", health: HealthStatus.HEALTHY },
        { address: "10.0.0.2", health: HealthStatus.UNKNOWN, weight: 5 },
        { address: "10.0.0.3", health: HealthStatus.UNHEALTHY },
        { address: "10.0.0.4", health: HealthStatus.DRAINING },
        { address: "10.0.0.5", health: HealthStatus.TIMEOUT },
        { address: "10.0.0.6", health: HealthStatus.DEGRADED },
        { address: "fd00::7", port: 1 },
      ]),
    );
    expect(eps).toEqual([
      { address: "10.0.0.1", port: 8443, healthy: true, weight: 1 },
      { address: "10.0.0.2", port: 8443, healthy: true, weight: 5 },
      { address: "10.0.0.3", port: 8443, healthy: false, weight: 1 },
      { address: "10.0.0.4", port: 8443, healthy: false, weight: 1 },
      { address: "10.0.0.5", port: 8443, healthy: false, weight: 1 },
      { address: "10.0.0.6", port: 8443, healthy: false, weight: 1 },
      { address: "fd00::7", port: 1, healthy: true, weight: 1 },
    ]);
  });

  test("localities are flattened; a repeated address keeps its first entry", () => {
    const any = assignment(NAME, [], {
      endpoints: [
        { locality: { zone: "a" }, loadBalancingWeight: 3, lbEndpoints: lbEndpoints([{ address: "10.0.0.1" }, { address: "10.0.0.2" }]) },
        { locality: { zone: "b" }, lbEndpoints: lbEndpoints([{ address: "10.0.0.1", weight: 9 }, { address: "10.0.0.3" }]) },
      ],
    });
    expect((endpoints(any) as EndpointConfig[]).map((e) => `${e.address}/${e.weight}`)).toEqual(["10.0.0.1/1", "10.0.0.2/1", "10.0.0.3/1"]);
  });

  test("refused: other priorities, host names, zero weights, ports, misnamed", () => {
    const p1 = assignment(NAME, [], { endpoints: [{ priority: 1, lbEndpoints: lbEndpoints([{ address: "10.0.0.1" }]) }] });
    expect(endpoints(p1)).toBe("ClusterLoadAssignment c.endpoints[0]: priority 1 is not supported (only priority 0; no failover between priorities)");
    expect(endpoints(assignment(NAME, [{ address: "db.example.com" }]))).toBe(
      "ClusterLoadAssignment c.endpoints[0].lb_endpoints[0]: malformed IP address: db.example.com",
    );
    expect(endpoints(assignment(NAME, [{ address: "10.0.0.1", weight: 0 }]))).toContain("load_balancing_weight must be at least 1");
    expect(endpoints(assignment(NAME, [{ address: "10.0.0.1", port: 0 }]))).toContain("socket_address: port_value 0 is out of range");
    expect(endpoints(assignment("other", [{ address: "10.0.0.1" }]))).toBe('ClusterLoadAssignment c: resource is named "other"');
    expect(endpoints(assignment(NAME, [], { policy: { overprovisioningFactor: 140 } }))).toBe("ClusterLoadAssignment c: policy is not supported by the built-in gateway");
  });

  test("a rejected assignment leaves the previous endpoints", () => {
    const s = createGatewayConfigStore();
    applyClusters(s, [NAME, edsCluster(NAME)]);
    applyEndpoints(s, [NAME, assignment(NAME, [{ address: "10.0.0.1" }])]);
    expect(applyEndpoints(s, [NAME, assignment(NAME, [{ address: "nope" }])])).toBeString();
    expect(s.current().clusters.get(NAME)?.endpoints.map((e) => e.address)).toEqual(["10.0.0.1"]);
  });
});
