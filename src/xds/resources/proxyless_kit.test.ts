/**
 * Test kit for the proxyless gRPC resources: plain (non-Connect) service instances, snapshots built from
 * chains compiled by the real compiler (./sidecar_kit.test.ts `chain`), and the named scenarios the
 * goldens cover. Addresses: dc1 10.10.x.x, dc2 10.20.x.x (WAN 198.18.2.x).
 */
import type { CheckServiceNode, HealthStatus } from "../../model/index.ts";
import type { ProxylessSnapshot, ProxylessUpstream } from "../../proxycfg/index.ts";
import { chain, type ChainOptions } from "./sidecar_kit.test.ts";

/** An instance of `service` as /v1/health/service returns it: the service itself, with one check. */
export function plain(service: string, node: string, address: string, o: { port?: number; status?: HealthStatus; dc?: string; wan?: string; meta?: Record<string, string>; weight?: number } = {}): CheckServiceNode {
  const id = `${service}-${node}`;
  return {
    Node: { ID: "", Node: node, Address: address, Datacenter: o.dc ?? "dc1", TaggedAddresses: o.wan ? { wan: o.wan } : {}, Meta: {}, CreateIndex: 1, ModifyIndex: 1 },
    Service: {
      Kind: "", ID: id, Service: service, Tags: null, Address: "", Meta: o.meta ?? null, Port: o.port ?? 50051,
      Weights: { Passing: o.weight ?? 1, Warning: 1 }, EnableTagOverride: false, Proxy: { MeshGateway: {}, Expose: {} }, Connect: {}, CreateIndex: 1, ModifyIndex: 1,
    },
    Checks: [{
      Node: node, CheckID: `${id}-check`, Name: "check", Status: o.status ?? "passing", Notes: "", Output: "", ServiceID: id, ServiceName: service,
      ServiceTags: null, Type: "ttl", Definition: {}, CreateIndex: 1, ModifyIndex: 1,
    }],
  };
}

/** An upstream named `name` (default: the chain's service) with the given target instances. */
export function upstream(service: string, endpoints: Record<string, readonly CheckServiceNode[]>, o: ChainOptions & { name?: string } = {}): ProxylessUpstream {
  return { Name: o.name ?? service, Chain: chain(service, o), TargetEndpoints: endpoints };
}

export function snapshot(...ups: ProxylessUpstream[]): ProxylessSnapshot {
  return { Kind: "proxyless-grpc", NodeID: "client", Datacenter: "dc1", Upstreams: Object.fromEntries(ups.map((u) => [u.Name, u])) };
}

const GRPC = { Kind: "service-defaults", Name: "echo", Protocol: "grpc" };
const SUBSETS = {
  Kind: "service-resolver", Name: "echo",
  Subsets: { v1: { Filter: "Service.Meta.version == v1" }, v2: { Filter: "Service.Meta.version == v2" } },
};
const v1 = [plain("echo", "n1", "10.10.1.1", { meta: { version: "v1" } })];
const v2 = [plain("echo", "n2", "10.10.1.2", { meta: { version: "v2" } })];

/** Scenario name -> snapshot. */
export const PROXYLESS_SCENARIOS: Record<string, () => ProxylessSnapshot> = {
  "proxyless-empty": () => snapshot(),
  "proxyless-default-chain": () =>
    snapshot(upstream("echo", {
      "echo.default.dc1": [
        plain("echo", "n2", "10.10.1.2", { status: "critical" }),
        plain("echo", "n1", "10.10.1.1", { weight: 3 }),
        plain("echo", "n3", "echo-3.example.com"), // a host name: gRPC takes IP literals only
      ],
    })),
  "proxyless-splitter-subsets": () =>
    snapshot(upstream("echo", { "v1.echo.default.dc1": v1, "v2.echo.default.dc1": v2, "echo-canary.default.dc1": [] }, {
      entries: [GRPC, SUBSETS, { ...GRPC, Name: "echo-canary" }, { Kind: "service-splitter", Name: "echo", Splits: [{ Weight: 50, ServiceSubset: "v1" }, { Weight: 50, ServiceSubset: "v2" }, { Weight: 0, Service: "echo-canary" }] }],
    })),
  "proxyless-router": () =>
    snapshot(upstream("echo", { "v1.echo.default.dc1": v1, "v2.echo.default.dc1": v2, "echo.default.dc1": [...v1, ...v2] }, {
      entries: [GRPC, SUBSETS, {
        Kind: "service-router", Name: "echo",
        Routes: [
          { Match: { HTTP: { PathExact: "/echo.Echo/Ping" } }, Destination: { ServiceSubset: "v2", RequestTimeout: "2.5s", NumRetries: 3, RetryOnConnectFailure: true, RetryOnStatusCodes: [503, 429, 400, 404] } },
          { Match: { HTTP: { PathPrefix: "/echo.Echo/", Header: [{ Name: "x-canary", Exact: "1" }] } }, Destination: { ServiceSubset: "v2", PrefixRewrite: "/ignored/" } },
          { Match: { HTTP: { PathRegex: "/echo\\.Echo/S.*" } }, Destination: { ServiceSubset: "v1", NumRetries: 2 } },
        ],
      }],
    })),
  "proxyless-failover": () =>
    snapshot(upstream("echo", {
      "echo.default.dc1": [plain("echo", "n1", "10.10.1.1", { status: "critical" })],
      "echo-backup.default.dc1": [plain("echo-backup", "n9", "10.10.9.1"), plain("echo-backup", "n1", "10.10.1.1")], // n1's address is already in band 0
    }, {
      entries: [{ Kind: "service-resolver", Name: "echo", ConnectTimeout: "3s", Failover: { "*": { Service: "echo-backup" } } }],
    })),
  "proxyless-failover-datacenters-and-remote-upstream": () =>
    snapshot(
      upstream("echo", {
        "echo.default.dc1": [plain("echo", "n1", "10.10.1.1")],
        "echo.default.dc2": [plain("echo", "r1", "10.20.1.1", { dc: "dc2", wan: "198.18.2.1" })],
      }, { entries: [{ Kind: "service-resolver", Name: "echo", Failover: { "*": { Datacenters: ["dc2"] } } }] }),
      upstream("echo", { "echo.default.dc2": [plain("echo", "r2", "10.20.1.2", { dc: "dc2", wan: "198.18.2.2" })] }, { name: "echo?dc=dc2", datacenter: "dc2" }),
      // Chain known, instances not yet: the cluster is there, its assignment is not.
      upstream("pending", {}),
    ),
};
