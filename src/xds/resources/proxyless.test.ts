/**
 * Proxyless gRPC resources: goldens per scenario (testdata/proxyless/, `UPDATE_GOLDEN=1` rewrites them),
 * strict decoding against Envoy's protos with their validate rules, determinism, every resource accepted
 * by @grpc/grpc-js-xds's own resource validators (the checks a real client applies before using them),
 * and the properties gRPC depends on spelled out.
 */
import { createRequire } from "node:module";
import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import type { DescMessage, Message } from "@bufbuild/protobuf";
import { anyPack, anyUnpack } from "@bufbuild/protobuf/wkt";
import { ClusterSchema } from "../../gen/envoy/config/cluster/v3/cluster_pb.ts";
import { HealthStatus } from "../../gen/envoy/config/core/v3/health_check_pb.ts";
import { ClusterLoadAssignmentSchema, type ClusterLoadAssignment } from "../../gen/envoy/config/endpoint/v3/endpoint_pb.ts";
import { ListenerSchema } from "../../gen/envoy/config/listener/v3/listener_pb.ts";
import { RouteConfigurationSchema } from "../../gen/envoy/config/route/v3/route_pb.ts";
import { HttpConnectionManagerSchema } from "../../gen/envoy/extensions/filters/network/http_connection_manager/v3/http_connection_manager_pb.ts";
import { proxylessResources } from "./index.ts";
import { PROXYLESS_SCENARIOS } from "./proxyless_kit.test.ts";
import { expectGolden, noStaleGoldens } from "./golden_kit.test.ts";

const dir = join(import.meta.dirname ?? ".", "testdata", "proxyless");

function render(name: string) {
  const res = proxylessResources(PROXYLESS_SCENARIOS[name]!());
  const wrap = (schema: DescMessage, items: readonly Message[]) => items.map((m) => anyPack(schema, m as never));
  return {
    listeners: wrap(ListenerSchema, res.listeners),
    routes: wrap(RouteConfigurationSchema, res.routes),
    clusters: wrap(ClusterSchema, res.clusters),
    endpoints: wrap(ClusterLoadAssignmentSchema, res.endpoints),
  };
}

/** grpc-js-xds's resource types, loaded from its build (they validate exactly what its client accepts). */
const require_ = createRequire(import.meta.url);
const xdsTypes = (() => {
  const base = "@grpc/grpc-js-xds/build/src/xds-resource-type/";
  type Decoder = { get(): { decode(ctx: unknown, any: { type_url: string; value: Buffer }): { name: string; error?: string } } };
  const load = (file: string, cls: string) => (require_(base + file) as Record<string, Decoder>)[cls]!.get();
  const listeners = load("listener-resource-type.js", "ListenerResourceType");
  // The router filter is known to a client once `register()` ran; register only that, not the resolver
  // (after the resource types, which load the protos it needs).
  (require_("@grpc/grpc-js-xds/build/src/http-filter/router-filter.js") as { setup(): void }).setup();
  return {
    listeners,
    routes: load("route-config-resource-type.js", "RouteConfigurationResourceType"),
    clusters: load("cluster-resource-type.js", "ClusterResourceType"),
    endpoints: load("endpoint-resource-type.js", "EndpointResourceType"),
  };
})();
const decodeContext = { server: { serverUri: "127.0.0.1:8502", channelCredentials: { type: "insecure" }, serverFeatures: [] }, bootstrap: { certificateProviders: {}, authorities: {}, servers: [], node: { id: "client" } } };

describe("proxyless gRPC resource goldens", () => {
  for (const name of Object.keys(PROXYLESS_SCENARIOS).sort()) {
    test(name, () => {
      const r = expectGolden(dir, name, () => render(name));
      const rejected: string[] = [];
      for (const [kind, list] of Object.entries(r) as [keyof typeof xdsTypes, typeof r.listeners][]) {
        for (const a of list) {
          const res = xdsTypes[kind].decode(decodeContext, { type_url: a.typeUrl, value: Buffer.from(a.value) });
          if (res.error) rejected.push(`${kind} ${res.name}: ${res.error}`);
        }
      }
      expect(rejected).toEqual([]);

    });
  }

  noStaleGoldens(dir, Object.keys(PROXYLESS_SCENARIOS));
});

describe("proxyless gRPC resources", () => {
  test("api_listener -> RDS over ADS -> router last; domains match the target; EDS over ADS with ROUND_ROBIN", () => {
    const res = proxylessResources(PROXYLESS_SCENARIOS["proxyless-default-chain"]!());
    expect(res.listeners.map((l) => l.name)).toEqual(["echo"]);
    const hcm = anyUnpack(res.listeners[0]!.apiListener!.apiListener!, HttpConnectionManagerSchema)!;
    expect(hcm.routeSpecifier.case).toBe("rds");
    expect(hcm.routeSpecifier.case === "rds" && hcm.routeSpecifier.value.routeConfigName).toBe("echo");
    expect(hcm.routeSpecifier.case === "rds" && hcm.routeSpecifier.value.configSource?.configSourceSpecifier.case).toBe("ads");
    const last = hcm.httpFilters.at(-1)!.configType;
    expect(last.case === "typedConfig" ? last.value.typeUrl : "").toBe("type.googleapis.com/envoy.extensions.filters.http.router.v3.Router");
    expect(res.routes[0]!.virtualHosts[0]!.domains).toEqual(["echo", "echo:*"]);
    const c = res.clusters[0]!;
    expect(c.clusterDiscoveryType).toEqual({ case: "type", value: 3 /* EDS */ });
    expect(c.edsClusterConfig?.edsConfig?.configSourceSpecifier.case).toBe("ads");
    const cla = res.endpoints[0]!;
    expect(cla.clusterName).toBe(c.name);
    // The critical instance is sent UNHEALTHY; the host name is left out; the locality has a weight.
    expect(cla.endpoints[0]!.locality?.region).toBe("dc1");
    expect(cla.endpoints[0]!.loadBalancingWeight).toBe(1);
    const eps = cla.endpoints[0]!.lbEndpoints.map((e) => [e.hostIdentifier.case === "endpoint" && e.hostIdentifier.value.address?.address.case === "socketAddress" ? e.hostIdentifier.value.address.address.value.address : "", e.healthStatus, e.loadBalancingWeight]);
    expect(eps).toEqual([["10.10.1.1", HealthStatus.HEALTHY, 3], ["10.10.1.2", HealthStatus.UNHEALTHY, 1]]);
  });

  test("failover: one band per target in order, addresses already in an earlier band left out, WAN addresses in other datacenters", () => {
    const addresses = (cla: ClusterLoadAssignment) =>
      cla.endpoints.map((b) => [b.priority, b.locality?.region, b.lbEndpoints.map((e) => (e.hostIdentifier.case === "endpoint" && e.hostIdentifier.value.address?.address.case === "socketAddress" ? e.hostIdentifier.value.address.address.value.address : ""))]);
    const failover = proxylessResources(PROXYLESS_SCENARIOS["proxyless-failover"]!()).endpoints.find((e) => e.clusterName.startsWith("echo.default.dc1."))!;
    expect(addresses(failover)).toEqual([[0, "dc1", ["10.10.1.1"]], [1, "dc1", ["10.10.9.1"]]]);
    const remote = proxylessResources(PROXYLESS_SCENARIOS["proxyless-failover-datacenters-and-remote-upstream"]!()).endpoints;
    expect(remote.map((e) => e.clusterName.split(".").slice(0, 3).join("."))).toEqual(["echo.default.dc1", "echo.default.dc2"]);
    expect(addresses(remote[0]!)).toEqual([[0, "dc1", ["10.10.1.1"]], [1, "dc2", ["198.18.2.1"]]]);
    expect(addresses(remote[1]!)).toEqual([[0, "dc2", ["198.18.2.2"]]]);
  });

  test("a split gives weighted clusters over both subsets; zero weights are dropped", () => {
    const route = proxylessResources(PROXYLESS_SCENARIOS["proxyless-splitter-subsets"]!()).routes[0]!.virtualHosts[0]!.routes[0]!;
    const action = route.action.case === "route" ? route.action.value.clusterSpecifier : undefined;
    expect(action?.case).toBe("weightedClusters");
    const clusters = action?.case === "weightedClusters" ? action.value.clusters.map((c) => [c.name.split(".")[0], c.weight]) : [];
    expect(clusters).toEqual([["v1", 5000], ["v2", 5000]]);
  });
});
