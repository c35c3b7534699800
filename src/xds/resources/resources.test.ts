/**
 * Unit tests of the pieces behind the goldens: intention folding into RBAC, endpoint health and weights,
 * weak config decoding, escape-hatch errors, failover choice, and the strict/PGV checker itself.
 */
import { describe, expect, test } from "bun:test";
import { create, toBinary } from "@bufbuild/protobuf";
import { anyPack } from "@bufbuild/protobuf/wkt";
import { ClusterSchema } from "../../gen/envoy/config/cluster/v3/cluster_pb.ts";
import { RBAC_Action } from "../../gen/envoy/config/rbac/v3/rbac_pb.ts";
import { ListenerSchema } from "../../gen/envoy/config/listener/v3/listener_pb.ts";
import { parseProxyConfig, parseUpstreamConfig } from "./config.ts";
import { endpointHealthAndWeight, firstHealthyTarget, HealthStatus } from "./health.ts";
import { makeRbacRules, spiffePattern } from "./rbac.ts";
import { ResourceGenerationError, sidecarResources, toResourceMap } from "./index.ts";
import { CLUSTER_TYPE, ENDPOINT_TYPE, LISTENER_TYPE, ROUTE_TYPE } from "../types.ts";
import { baseSnapshot, chain, dbInstances, instance, intention, withProxyConfig } from "./sidecar_kit.test.ts";
import { strictCheckAny } from "./strict_kit.test.ts";

function principals(rules: ReturnType<typeof makeRbacRules>): string[] {
  const show = (p: { identifier: { case?: string; value?: unknown } }): string => {
    const id = p.identifier;
    if (id.case === "authenticated") {
      const re = (id.value as { principalName: { matchPattern: { value: { regex: string } } } }).principalName.matchPattern.value.regex;
      return re.replace("^spiffe://[^/]+/ns/default/dc/[^/]+/svc/", "").replace("$", "").replace("[^/]+", "*");
    }
    if (id.case === "notId") return `!${show(id.value as never)}`;
    if (id.case === "andIds") return (id.value as { ids: never[] }).ids.map(show).join("&");
    return String(id.case);
  };
  return (rules.policies["consul-intentions"]?.principals ?? []).map(show as never);
}

describe("intentions as RBAC", () => {
  test("default allow with no intentions denies nobody; default deny with none allows nobody", () => {
    const allow = makeRbacRules([], true);
    expect(allow.action).toBe(RBAC_Action.DENY);
    expect(Object.keys(allow.policies)).toEqual([]);
    const deny = makeRbacRules([], false);
    expect(deny.action).toBe(RBAC_Action.ALLOW);
    expect(Object.keys(deny.policies)).toEqual([]);
  });

  test("default deny: allows stay, a higher deny is carved out of the wildcard allow below it", () => {
    const r = makeRbacRules([intention("web", "deny", 9), intention("api", "allow", 9), intention("*", "allow", 8)], false);
    expect(r.action).toBe(RBAC_Action.ALLOW);
    expect(principals(r)).toEqual(["api", "*&!web"]);
  });

  test("default allow: denies become the deny-list, a higher allow is carved out of the wildcard deny", () => {
    const r = makeRbacRules([intention("api", "allow", 9), intention("*", "deny", 8)], true);
    expect(r.action).toBe(RBAC_Action.DENY);
    expect(principals(r)).toEqual(["*&!api"]);
  });

  test("intentions with the default's action vanish; a repeated source keeps only its first (highest) entry", () => {
    expect(principals(makeRbacRules([intention("api", "allow", 9)], true))).toEqual([]);
    expect(principals(makeRbacRules([intention("api", "deny", 9), intention("api", "allow", 8)], true))).toEqual(["api"]);
  });

  test("source names are regex-escaped in the SPIFFE pattern", () => {
    expect(spiffePattern({ ns: "default", name: "a.b" })).toBe("^spiffe://[^/]+/ns/default/dc/[^/]+/svc/a\\.b$");
  });
});

describe("endpoint health and weight", () => {
  test("critical is unhealthy; warning only with OnlyPassing; weights capped and zero weights unhealthy", () => {
    const hw = (o: Parameters<typeof instance>[0], onlyPassing = false) => endpointHealthAndWeight(instance(o), onlyPassing);
    expect(hw({ node: "a", address: "1.1.1.1", status: "critical" })).toEqual({ health: HealthStatus.UNHEALTHY, weight: 1 });
    expect(hw({ node: "a", address: "1.1.1.1", status: "warning" })).toEqual({ health: HealthStatus.HEALTHY, weight: 1 });
    expect(hw({ node: "a", address: "1.1.1.1", status: "warning" }, true)).toEqual({ health: HealthStatus.UNHEALTHY, weight: 1 });
    expect(hw({ node: "a", address: "1.1.1.1", weights: { Passing: 1000, Warning: 1 } })).toEqual({ health: HealthStatus.HEALTHY, weight: 128 });
    expect(hw({ node: "a", address: "1.1.1.1", status: "warning", weights: { Passing: 5, Warning: 0 } })).toEqual({ health: HealthStatus.UNHEALTHY, weight: 1 });
  });

  test("first healthy target: primary while healthy, else the first healthy failover, else the primary", () => {
    const c = chain("db", { entries: [{ Kind: "service-resolver", Name: "db", Failover: { "*": { Datacenters: ["dc2", "dc3"] } } }] });
    const fo = ["db.default.dc2", "db.default.dc3"];
    const h = (s1: "passing" | "critical", s2: "passing" | "critical", s3: "passing" | "critical") => ({
      "db.default.dc1": dbInstances("dc1", s1),
      "db.default.dc2": dbInstances("dc2", s2),
      "db.default.dc3": dbInstances("dc3", s3),
    });
    expect(firstHealthyTarget(c, h("passing", "passing", "passing"), "db.default.dc1", fo)).toBe("db.default.dc1");
    expect(firstHealthyTarget(c, h("critical", "critical", "passing"), "db.default.dc1", fo)).toBe("db.default.dc3");
    expect(firstHealthyTarget(c, h("critical", "critical", "critical"), "db.default.dc1", fo)).toBe("db.default.dc1");
    expect(firstHealthyTarget(c, undefined, "db.default.dc1", fo)).toBe("db.default.dc1");
  });
});

describe("opaque config decoding", () => {
  test("weak types and defaults like mapstructure.WeakDecode", () => {
    const p = parseProxyConfig({ protocol: "HTTP", local_connect_timeout_ms: "1500", bind_port: 8443.7 });
    expect(p.config).toMatchObject({ protocol: "http", localConnectTimeoutMs: 1500, bindPort: 8443 });
    expect(parseProxyConfig(undefined).config).toMatchObject({ protocol: "tcp", localConnectTimeoutMs: 5000 });
    const u = parseUpstreamConfig({ limits: [{ max_connections: "7" }], passive_health_check: { interval: "10s", max_failures: 3 } }, "db");
    expect(u.config.limits).toEqual({ maxConnections: 7 });
    expect(u.config.passiveHealthCheck).toEqual({ intervalMs: 10_000, maxFailures: 3 });
    expect(parseUpstreamConfig({ passive_health_check: { interval: 2_000_000_000 } }, "db").config.passiveHealthCheck.intervalMs).toBe(2000);
  });

  test("an undecodable value is a warning and the default is kept", () => {
    const p = parseProxyConfig({ local_connect_timeout_ms: "soon" });
    expect(p.config.localConnectTimeoutMs).toBe(5000);
    expect(p.warnings).toEqual([`Proxy.Config: 'local_connect_timeout_ms' expected an integer, got "soon"`]);
  });
});

describe("escape hatches", () => {
  const bad = (json: string) => () => sidecarResources(withProxyConfig(baseSnapshot(), { envoy_public_listener_json: json }));
  test("invalid JSON, unknown fields and a foreign @type are generation errors naming the key", () => {
    expect(bad("{")).toThrow(ResourceGenerationError);
    expect(bad("{")).toThrow(/^envoy_public_listener_json: invalid JSON/);
    expect(bad(JSON.stringify({ name: "x", bogus: 1 }))).toThrow(/envoy_public_listener_json: .*bogus/);
    expect(bad(JSON.stringify({ "@type": "type.googleapis.com/envoy.api.v2.Listener", name: "x" }))).toThrow(
      /"@type" must be "type.googleapis.com\/envoy.config.listener.v3.Listener"/,
    );
  });
});

describe("the strict checker", () => {
  test("reports unknown fields, PGV violations and unresolvable Any types", () => {
    const cluster = create(ClusterSchema, { name: "", connectTimeout: { seconds: 0n, nanos: 0 } });
    const v = strictCheckAny("type.googleapis.com/envoy.config.cluster.v3.Cluster", toBinary(ClusterSchema, cluster));
    expect(v.some((x) => x.includes("connect_timeout: duration must be > 0ns"))).toBe(true);

    const withUnknown = new Uint8Array([...toBinary(ListenerSchema, create(ListenerSchema, { name: "l" })), 0xb8, 0x3e, 0x01]); // field 999, varint 1
    expect(strictCheckAny("type.googleapis.com/envoy.config.listener.v3.Listener", withUnknown)).toEqual([
      "$<envoy.config.listener.v3.Listener>: unknown fields 999 in envoy.config.listener.v3.Listener",
    ]);

    const listener = create(ListenerSchema, { name: "l", filterChains: [{ filters: [{ name: "" }] }] });
    expect(strictCheckAny("type.googleapis.com/envoy.config.listener.v3.Listener", toBinary(ListenerSchema, listener))).toContain(
      "$<envoy.config.listener.v3.Listener>.filter_chains[0].filters[0].name: min_len 1",
    );

    const any = anyPack(ListenerSchema, create(ListenerSchema, { name: "l" }));
    expect(strictCheckAny("type.googleapis.com/example.Unknown", any.value)).toEqual(["$: Any type type.googleapis.com/example.Unknown is not in the registry"]);
  });
});

describe("resource map for the cache", () => {
  test("keys every resource by type URL and name, all four types present", () => {
    const m = toResourceMap(sidecarResources(baseSnapshot()));
    expect([...m.keys()].sort()).toEqual([CLUSTER_TYPE, ENDPOINT_TYPE, LISTENER_TYPE, ROUTE_TYPE].sort());
    expect([...m.get(LISTENER_TYPE)!.keys()]).toEqual(["db:127.0.0.1:9191", "prepared_query:geo-cache:127.10.10.10:8181", "public_listener:0.0.0.0:9999"]);
    expect([...m.get(ENDPOINT_TYPE)!.keys()]).toEqual([
      "db.default.dc1.internal.11111111-2222-3333-4444-555555555555.consul",
      "geo-cache.default.dc1.query.11111111-2222-3333-4444-555555555555.consul",
    ]);
    expect(m.get(ROUTE_TYPE)!.size).toBe(0);
  });
});
