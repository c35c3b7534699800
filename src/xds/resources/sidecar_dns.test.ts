/**
 * DNS clusters for upstreams reached through mesh gateways addressed by host name: the host-name test,
 * Consul's choice of the one endpoint, and the properties of the sidecar's resources (a DNS cluster has no
 * assignment, no assignment carries a host name, everything but discovery is kept, the cluster turns back
 * into EDS, memoized clusters follow the gateways' addresses and `envoy_dns_discovery_type`).
 */
import { describe, expect, test } from "bun:test";
import { Cluster_DiscoveryType, type Cluster } from "../../gen/envoy/config/cluster/v3/cluster_pb.ts";
import type { CheckServiceNode, HealthStatus as CheckStatus } from "../../model/index.ts";
import type { SidecarSnapshot } from "../../proxycfg/index.ts";
import { dnsDiscoveryType, hostnameEndpoints, isHostname, pickDnsEndpoint } from "./dns_cluster.ts";
import { HealthStatus } from "./health.ts";
import { sidecarResources } from "./index.ts";
import { SCENARIOS } from "./scenarios.test.ts";
import { gatewayDnsEndpoint } from "./sidecar_dns.ts";
import { baseSnapshot, chain, dbInstances, DB, gateways, hostnameGateways, instance, withProxyConfig, withUpstream } from "./sidecar_kit.test.ts";

describe("isHostname", () => {
  const cases: readonly (readonly [string, boolean])[] = [
    ["10.0.0.1", false],
    ["0.0.0.0", false],
    ["255.255.255.255", false],
    ["::", false],
    ["::1", false],
    ["2001:db8::1", false],
    ["2001:DB8:0:0:8:800:200C:417A", false],
    ["fe80::", false],
    ["::ffff:10.0.0.1", false],
    ["64:ff9b::192.0.2.33", false],
    ["", false],
    ["gw.dc2.example.com", true],
    ["localhost", true],
    ["abc-123.elb.us-east-1.amazonaws.com", true],
    ["dead", true], // hex digits only, but no colon: a name
    ["beef.cafe", true],
    ["256.0.0.1", true],
    ["10.0.0", true],
    ["010.0.0.1", true], // leading zero: not an IP to Go (or to Envoy's inet_pton)
    ["1.2.3.4.5", true],
    ["[::1]", true], // brackets belong to URLs, not to addresses: Go's net.ParseIP rejects them too
    ["fe80::1%eth0", true], // zoned: net.ParseIP rejects it
    ["2001:db8::1::2", true],
    ["1:2:3:4:5:6:7:8:9", true],
  ];
  for (const [address, hostname] of cases) {
    test(`${JSON.stringify(address)} -> ${hostname ? "host name" : "IP literal or nothing"}`, () => expect(isHostname(address)).toBe(hostname));
  }
});

function gw(node: string, dc: string, lan: string, wan: string, status: CheckStatus = "passing"): CheckServiceNode {
  return instance({ node, address: lan, datacenter: dc, kind: "mesh-gateway", port: 8443, status, wan: { Address: wan, Port: 443 } });
}

describe("choosing the one endpoint", () => {
  test("a gateway of another datacenter is judged by its WAN address, a local one by its LAN address", () => {
    const remote = gw("r", "dc2", "10.20.2.1", "gw.dc2.example.com");
    const remoteIp = gw("r-ip", "dc2", "gw-lan.dc2.example.com", "198.18.2.1");
    const local = gw("l", "dc1", "gw.dc1.lan.example.com", "198.18.1.1");
    const localIp = gw("l-ip", "dc1", "10.10.2.1", "gw.dc1.example.com");
    expect(hostnameEndpoints("dc1", [remote, remoteIp, local, localIp]).map((n) => n.Node.Node)).toEqual(["r", "l"]);
  });

  test("the first healthy host name, else the last unhealthy one; an override health replaces its own", () => {
    const a = gw("a", "dc2", "10.0.0.1", "a.example.com", "critical");
    const b = gw("b", "dc2", "10.0.0.2", "b.example.com", "passing");
    const c = gw("c", "dc2", "10.0.0.3", "c.example.com", "warning");
    const d = gw("d", "dc2", "10.0.0.4", "d.example.com", "critical");
    const wan = () => true;
    expect(pickDnsEndpoint([a, b, c], wan)).toEqual({ address: "b.example.com", port: 443, health: HealthStatus.HEALTHY, weight: 1 });
    expect(pickDnsEndpoint([a, c, b], wan).address).toBe("c.example.com"); // warning is healthy
    expect(pickDnsEndpoint([a, d], wan)).toEqual({ address: "d.example.com", port: 443, health: HealthStatus.UNHEALTHY, weight: 1 });
    expect(pickDnsEndpoint([a, d], wan, HealthStatus.HEALTHY).health).toBe(HealthStatus.HEALTHY);
    expect(pickDnsEndpoint([b], wan, HealthStatus.UNHEALTHY)).toEqual({ address: "b.example.com", port: 443, health: HealthStatus.UNHEALTHY, weight: 1 });
    expect(pickDnsEndpoint([b], () => false).address).toBe("10.0.0.2");
    expect(() => pickDnsEndpoint([], wan)).toThrow(RangeError);
  });

  test("envoy_dns_discovery_type: strict_dns in any case picks STRICT_DNS, anything else LOGICAL_DNS", () => {
    expect(dnsDiscoveryType("STRICT_DNS")).toBe(Cluster_DiscoveryType.STRICT_DNS);
    expect(dnsDiscoveryType("strict_dns")).toBe(Cluster_DiscoveryType.STRICT_DNS);
    for (const v of [undefined, "", "logical_dns", "STRICT", 1, true]) expect(dnsDiscoveryType(v)).toBe(Cluster_DiscoveryType.LOGICAL_DNS);
  });

  test("only gateway groups (those with an override health) become DNS clusters", () => {
    const named = hostnameGateways("dc2");
    expect(gatewayDnsEndpoint([{ endpoints: named, onlyPassing: false }], "dc1")).toBeUndefined();
    expect(gatewayDnsEndpoint([{ endpoints: gateways("dc2"), onlyPassing: false, overrideHealth: HealthStatus.HEALTHY }], "dc1")).toBeUndefined();
    expect(gatewayDnsEndpoint([{ endpoints: dbInstances("dc1"), onlyPassing: false }, { endpoints: named, onlyPassing: false, overrideHealth: HealthStatus.UNHEALTHY }], "dc1")).toEqual({
      address: "gw1.dc2.example.com",
      port: 443,
      health: HealthStatus.UNHEALTHY,
      weight: 1,
    });
  });
});

const DNS_TYPES = new Set([Cluster_DiscoveryType.LOGICAL_DNS, Cluster_DiscoveryType.STRICT_DNS]);
const typeOf = (c: Cluster) => (c.clusterDiscoveryType.case === "type" ? c.clusterDiscoveryType.value : undefined);
const DB_CLUSTER = "db.default.dc1.internal.11111111-2222-3333-4444-555555555555.consul";

function dbCluster(snap: SidecarSnapshot, name = DB_CLUSTER) {
  const res = sidecarResources(snap);
  return { cluster: res.clusters.find((c) => c.name === name)!, cla: res.endpoints.find((e) => e.clusterName === name) };
}

function socket(c: Cluster): string[] {
  return (c.loadAssignment?.endpoints ?? []).flatMap((l) =>
    l.lbEndpoints.map((e) => {
      const a = e.hostIdentifier.case === "endpoint" ? e.hostIdentifier.value.address?.address : undefined;
      return a?.case === "socketAddress" ? `${a.value.address}:${a.value.portSpecifier.value}` : "?";
    }),
  );
}

describe("sidecar clusters reached through gateways addressed by host name", () => {
  test("in every scenario: a DNS cluster has one endpoint and no assignment; no assignment carries a host name", () => {
    let dnsClusters = 0;
    for (const [name, make] of Object.entries(SCENARIOS)) {
      const res = sidecarResources(make());
      const claNames = new Set(res.endpoints.map((e) => e.clusterName));
      for (const c of res.clusters) {
        const t = typeOf(c);
        if (t === undefined || !DNS_TYPES.has(t) || c.name === "local_app") continue;
        dnsClusters++;
        expect([name, claNames.has(c.name)]).toEqual([name, false]);
        expect([name, c.loadAssignment?.endpoints.length, c.loadAssignment?.endpoints[0]?.lbEndpoints.length]).toEqual([name, 1, 1]);
        expect(c.edsClusterConfig).toBeUndefined();
      }
      for (const cla of res.endpoints) {
        for (const l of cla.endpoints) {
          for (const e of l.lbEndpoints) {
            const a = e.hostIdentifier.case === "endpoint" ? e.hostIdentifier.value.address?.address : undefined;
            expect([name, a?.case === "socketAddress" && isHostname(a.value.address)]).toEqual([name, false]);
          }
        }
      }
    }
    expect(dnsClusters).toBeGreaterThanOrEqual(4);
  });

  test("the DNS cluster keeps name, SNI, TLS, timeout, outlier detection and limits: only discovery differs", () => {
    const config = { connect_timeout_ms: 2345, limits: { max_connections: 7 }, passive_health_check: { interval: "10s", max_failures: 5 } };
    const make = (gws: (dc: string) => CheckServiceNode[]) => {
      const entries = [
        { Kind: "proxy-defaults", Name: "global", MeshGateway: { Mode: "remote" } },
        { Kind: "service-resolver", Name: "db", ConnectTimeout: "7s", Failover: { "*": { Datacenters: ["dc2"] } } },
      ];
      const endpoints = { "db.default.dc1": dbInstances("dc1", "critical"), "db.default.dc2": dbInstances("dc2") };
      return withUpstream(baseSnapshot(), { ...DB, Config: config }, chain("db", { entries }), endpoints, { dc2: gws("dc2") });
    };
    const eds = dbCluster(make(gateways));
    const dns = dbCluster(make((dc) => hostnameGateways(dc)));
    expect(typeOf(eds.cluster)).toBe(Cluster_DiscoveryType.EDS);
    expect(eds.cla).toBeDefined();
    expect(typeOf(dns.cluster)).toBe(Cluster_DiscoveryType.LOGICAL_DNS);
    expect(dns.cla).toBeUndefined();
    expect(socket(dns.cluster)).toEqual(["gw1.dc2.example.com:443"]);
    const rest = (c: Cluster) => {
      const { clusterDiscoveryType: _t, edsClusterConfig: _e, dnsRefreshRate: _r, dnsLookupFamily: _f, loadAssignment: _l, ...others } = c;
      return others;
    };
    expect(rest(dns.cluster)).toEqual(rest(eds.cluster));
    expect(dns.cluster.connectTimeout?.seconds).toBe(7n);
    expect(dns.cluster.circuitBreakers?.thresholds[0]?.maxConnections).toBe(7);
    expect(dns.cluster.outlierDetection?.consecutive5xx).toBe(5);
    expect(dns.cluster.transportSocket).toBeDefined();
    expect(dns.cluster.dnsRefreshRate?.seconds).toBe(10n);
  });

  test("the cluster follows failover: DNS while it dials dc2's gateways, EDS again once dc1 is healthy", () => {
    const entries = [
      { Kind: "proxy-defaults", Name: "global", MeshGateway: { Mode: "local" } },
      { Kind: "service-resolver", Name: "db", Failover: { "*": { Datacenters: ["dc2"] } } },
    ];
    const c = chain("db", { entries });
    const snap = (dc1: CheckStatus, dc2: CheckStatus) =>
      withUpstream(baseSnapshot(), DB, c, { "db.default.dc1": dbInstances("dc1", dc1), "db.default.dc2": dbInstances("dc2", dc2) }, { dc1: hostnameGateways("dc1") });
    const healthy = dbCluster(snap("passing", "passing"));
    expect(typeOf(healthy.cluster)).toBe(Cluster_DiscoveryType.EDS);
    expect(healthy.cla?.endpoints[0]?.lbEndpoints.length).toBe(2);
    const failed = dbCluster(snap("critical", "passing"));
    expect(typeOf(failed.cluster)).toBe(Cluster_DiscoveryType.LOGICAL_DNS);
    expect(failed.cla).toBeUndefined();
    expect(socket(failed.cluster)).toEqual(["gw1.dc1.lan.example.com:8443"]);
    expect(failed.cluster.loadAssignment?.endpoints[0]?.lbEndpoints[0]?.healthStatus).toBe(HealthStatus.HEALTHY);
    // Everything down: the primary (local instances, IPs) is dialed again, over EDS.
    const down = dbCluster(snap("critical", "critical"));
    expect(typeOf(down.cluster)).toBe(Cluster_DiscoveryType.EDS);
    expect(down.cla?.endpoints[0]?.lbEndpoints.map((e) => e.healthStatus)).toEqual([HealthStatus.UNHEALTHY, HealthStatus.UNHEALTHY]);
    const back = dbCluster(snap("passing", "passing"));
    expect(back).toEqual(healthy);
  });

  test("memoized clusters follow the gateways' addresses, their health and envoy_dns_discovery_type", () => {
    // No failover (memoized path): the upstream lives in dc2, reached through dc2's gateways.
    const name = "cache.default.dc2.internal.11111111-2222-3333-4444-555555555555.consul";
    const u = { ...DB, DestinationName: "cache", Datacenter: "dc2", LocalBindPort: 9292 };
    const c = chain("cache", { datacenter: "dc2", entries: [{ Kind: "proxy-defaults", Name: "global", MeshGateway: { Mode: "remote" } }] });
    const base = withUpstream(baseSnapshot(), u, c, { "cache.default.dc2": dbInstances("dc2", "passing", "cache") }, { dc2: gateways("dc2") });
    const id = "cache?dc=dc2";
    const vary = (gws: CheckServiceNode[], status: CheckStatus = "passing", config: Record<string, unknown> = {}): SidecarSnapshot => {
      const s = withProxyConfig(base, config);
      const cp = s.ConnectProxy;
      return {
        ...s,
        ConnectProxy: {
          ...cp,
          WatchedUpstreamEndpoints: { ...cp.WatchedUpstreamEndpoints, [id]: { "cache.default.dc2": dbInstances("dc2", status, "cache") } },
          WatchedGatewayEndpoints: { ...cp.WatchedGatewayEndpoints, [id]: { dc2: gws } },
        },
      };
    };
    const ip = dbCluster(vary(gateways("dc2")), name);
    expect(typeOf(ip.cluster)).toBe(Cluster_DiscoveryType.EDS);
    expect(ip.cla).toBeDefined();
    const named = dbCluster(vary(hostnameGateways("dc2")), name);
    expect(typeOf(named.cluster)).toBe(Cluster_DiscoveryType.LOGICAL_DNS);
    expect(named.cla).toBeUndefined();
    expect(socket(named.cluster)).toEqual(["gw1.dc2.example.com:443"]);
    const other = dbCluster(vary(hostnameGateways("dc2", ["critical", "passing"])), name);
    expect(socket(other.cluster)).toEqual(["gw2.dc2.example.com:443"]);
    const down = dbCluster(vary(hostnameGateways("dc2"), "critical"), name);
    expect(down.cluster.loadAssignment?.endpoints[0]?.lbEndpoints[0]?.healthStatus).toBe(HealthStatus.UNHEALTHY);
    const strict = dbCluster(vary(hostnameGateways("dc2"), "passing", { envoy_dns_discovery_type: "strict_dns" }), name);
    expect(typeOf(strict.cluster)).toBe(Cluster_DiscoveryType.STRICT_DNS);
    expect(dbCluster(vary(gateways("dc2")), name)).toEqual(ip);
    // The IP-only cluster is still shared between proxies (memoized), and not with the DNS one.
    expect(dbCluster(vary(gateways("dc2")), name).cluster).toBe(ip.cluster);
  });
});
