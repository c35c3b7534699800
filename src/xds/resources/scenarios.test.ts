/**
 * Test kit: the golden scenarios (Consul agent/xds/testdata names where one exists, reference section 4.6),
 * each a snapshot built from the sidecar kit.
 */
import type { SidecarSnapshot } from "../../proxycfg/index.ts";
import type { CheckServiceNode, Upstream } from "../../model/index.ts";
import { baseSnapshot, chain, dbInstances, DB, gateways, hostnameGateways, instance, intention, withProxyConfig, withUpstream } from "./sidecar_kit.test.ts";

const HTTP_DEFAULTS = { Kind: "proxy-defaults", Name: "global", Config: { protocol: "http" } };

function dbWith(
  config: Record<string, unknown>,
  o: Parameters<typeof chain>[1] = {},
  endpoints: Readonly<Record<string, readonly CheckServiceNode[]>> = { "db.default.dc1": dbInstances() },
): SidecarSnapshot {
  const u: Upstream = { ...DB, Config: config };
  return withUpstream(baseSnapshot(), u, chain("db", o), endpoints);
}

interface GatewayOptions {
  /** The gateways of a datacenter (default: `gateways`, addressed by IP). */
  readonly gateways?: (dc: string) => CheckServiceNode[];
  /** The proxy's Proxy.Config. */
  readonly config?: Record<string, unknown>;
}

function failoverThroughGateway(mode: "local" | "remote", dcs: string[], triggered: boolean, o: GatewayOptions = {}): SidecarSnapshot {
  // The mode comes from proxy-defaults (as in Consul's fixtures), so the chain is not customized.
  const entries = [
    { Kind: "proxy-defaults", Name: "global", MeshGateway: { Mode: mode } },
    { Kind: "service-resolver", Name: "db", Failover: { "*": { Datacenters: dcs } } },
  ];
  const endpoints: Record<string, ReturnType<typeof dbInstances>> = { "db.default.dc1": dbInstances("dc1", triggered ? "critical" : "passing") };
  for (const [i, dc] of dcs.entries()) endpoints[`db.default.${dc}`] = dbInstances(dc, triggered && i < dcs.length - 1 ? "critical" : "passing");
  const gw = o.gateways ?? gateways;
  const gws: Record<string, CheckServiceNode[]> = mode === "local" ? { dc1: gw("dc1") } : Object.fromEntries(dcs.map((dc) => [dc, gw(dc)]));
  return withUpstream(withProxyConfig(baseSnapshot(), o.config ?? {}), DB, chain("db", { entries }), endpoints, gws);
}

/** Gateways addressed by host name, the first critical, plus a healthy one addressed by IP (the mix). */
const mixedHostnameGateways = (dc: string) => hostnameGateways(dc, ["critical", "passing"], true);

const ROUTER = {
  Kind: "service-router",
  Name: "db",
  Routes: [
    { Match: { HTTP: { PathPrefix: "/prefix" } }, Destination: { Service: "prefix" } },
    { Match: { HTTP: { PathExact: "/exact" } }, Destination: { Service: "exact" } },
    { Match: { HTTP: { PathRegex: "/regex/[0-9]+" } }, Destination: { Service: "regex" } },
    { Match: { HTTP: { Header: [{ Name: "x-debug", Present: true }] } }, Destination: { Service: "hdr-present" } },
    { Match: { HTTP: { Header: [{ Name: "x-debug", Present: true, Invert: true }] } }, Destination: { Service: "hdr-not-present" } },
    { Match: { HTTP: { Header: [{ Name: "x-debug", Exact: "exact" }] } }, Destination: { Service: "hdr-exact" } },
    { Match: { HTTP: { Header: [{ Name: "x-debug", Prefix: "prefix" }] } }, Destination: { Service: "hdr-prefix" } },
    { Match: { HTTP: { Header: [{ Name: "x-debug", Suffix: "suffix" }] } }, Destination: { Service: "hdr-suffix" } },
    { Match: { HTTP: { Header: [{ Name: "x-debug", Regex: "regex" }] } }, Destination: { Service: "hdr-regex" } },
    { Match: { HTTP: { Methods: ["GET", "PUT"] } }, Destination: { Service: "just-methods" } },
    { Match: { HTTP: { Header: [{ Name: "x-debug", Exact: "exact" }], Methods: ["GET", "PUT"] } }, Destination: { Service: "hdr-exact-with-method" } },
    { Match: { HTTP: { QueryParam: [{ Name: "secretparam1", Exact: "exact" }] } }, Destination: { Service: "prm-exact" } },
    { Match: { HTTP: { QueryParam: [{ Name: "secretparam2", Regex: "regex" }] } }, Destination: { Service: "prm-regex" } },
    { Match: { HTTP: { QueryParam: [{ Name: "secretparam3", Present: true }] } }, Destination: { Service: "prm-present" } },
    { Match: { HTTP: { PathPrefix: "/nil-match" } }, Destination: { Service: "nil-match" } },
    { Match: { HTTP: { PathPrefix: "/prefix-rewrite" } }, Destination: { Service: "prefix-rewrite-1", PrefixRewrite: "/" } },
    { Match: { HTTP: { PathPrefix: "/timeout" } }, Destination: { Service: "req-timeout", RequestTimeout: "33s" } },
    { Match: { HTTP: { PathPrefix: "/retry-connect" } }, Destination: { Service: "retry-connect", NumRetries: 15, RetryOnConnectFailure: true } },
    { Match: { HTTP: { PathPrefix: "/retry-codes" } }, Destination: { Service: "retry-codes", NumRetries: 15, RetryOnStatusCodes: [401, 409, 451] } },
    { Match: { HTTP: { PathPrefix: "/retry-both" } }, Destination: { Service: "retry-both", RetryOnConnectFailure: true, RetryOnStatusCodes: [401, 409, 451] } },
    { Match: { HTTP: { PathPrefix: "/split-3-ways" } }, Destination: { Service: "split-3-ways" } },
  ],
};

const SPLIT_3_WAYS = {
  Kind: "service-splitter",
  Name: "split-3-ways",
  Splits: [
    { Weight: 95.5, Service: "big-side" },
    { Weight: 4, Service: "goldilocks-side" },
    { Weight: 0.5, Service: "lil-bit-side" },
  ],
};

/** Scenario name -> snapshot. */
export const SCENARIOS: Readonly<Record<string, () => SidecarSnapshot>> = {
  defaults: baseSnapshot,
  "connect-proxy-with-chain": () => dbWith({}, { entries: [{ Kind: "service-resolver", Name: "db", ConnectTimeout: "33s" }] }),
  "connect-proxy-with-chain-external-sni": () =>
    dbWith({}, { entries: [{ Kind: "service-defaults", Name: "db", ExternalSNI: "db.some.other.service.mesh" }] }),
  "connect-proxy-with-chain-and-overrides": () =>
    dbWith(
      { protocol: "grpc", connect_timeout_ms: 66000 },
      { protocol: "grpc", connectTimeoutMs: 66000, entries: [HTTP_DEFAULTS, { Kind: "service-resolver", Name: "db", ConnectTimeout: "33s" }] },
    ),
  "connect-proxy-with-default-chain-and-custom-cluster": () =>
    dbWith({
      envoy_cluster_json: JSON.stringify({
        "@type": "type.googleapis.com/envoy.config.cluster.v3.Cluster",
        name: "myservice",
        type: "EDS",
        edsClusterConfig: { edsConfig: { ads: {}, resourceApiVersion: "V3" } },
        connectTimeout: "22s",
      }),
    }),
  "custom-upstream": () =>
    dbWith({
      envoy_listener_json: JSON.stringify({
        "@type": "type.googleapis.com/envoy.config.listener.v3.Listener",
        name: "custom-upstream",
        address: { socketAddress: { address: "11.11.11.11", portValue: 11111 } },
        filterChains: [{ filters: [{ name: "envoy.filters.network.tcp_proxy", typedConfig: { "@type": "type.googleapis.com/envoy.extensions.filters.network.tcp_proxy.v3.TcpProxy", cluster: "random-cluster", statPrefix: "foo-stats" } }] }],
      }),
    }),
  "custom-public-listener": () =>
    withProxyConfig(baseSnapshot(), {
      envoy_public_listener_json: JSON.stringify({
        name: "custom-public-listen",
        address: { socketAddress: { address: "11.11.11.11", portValue: 11111 } },
        filterChains: [{ filters: [{ name: "envoy.filters.network.tcp_proxy", typedConfig: { "@type": "type.googleapis.com/envoy.extensions.filters.network.tcp_proxy.v3.TcpProxy", cluster: "random-cluster", statPrefix: "foo-stats" } }] }],
      }),
    }),
  "custom-local-app": () =>
    withProxyConfig(baseSnapshot(), {
      envoy_local_cluster_json: JSON.stringify({
        "@type": "type.googleapis.com/envoy.config.cluster.v3.Cluster",
        name: "mylocal",
        type: "STATIC",
        connectTimeout: "5s",
        loadAssignment: { clusterName: "mylocal", endpoints: [{ lbEndpoints: [{ endpoint: { address: { socketAddress: { address: "127.0.0.1", portValue: 8080 } } } }] }] },
      }),
    }),
  "custom-timeouts": () => {
    const s = dbWith({ connect_timeout_ms: 2345 }, { connectTimeoutMs: 2345 });
    return withProxyConfig(s, { local_connect_timeout_ms: 1234 });
  },
  "custom-limits": () => dbWith({ limits: { max_connections: 500, max_pending_requests: 600, max_concurrent_requests: 700 } }),
  "custom-limits-max-connections-only": () => dbWith({ limits: { max_connections: 500 } }),
  "custom-limits-set-to-zero": () => dbWith({ limits: { max_connections: 0, max_pending_requests: 0, max_concurrent_requests: 0 } }),
  "custom-passive-healthcheck": () => dbWith({ passive_health_check: { interval: "10s", max_failures: 5 } }),
  "listener-bind-address-port": () => withProxyConfig(baseSnapshot(), { bind_address: "127.0.0.2", bind_port: 8888 }),
  "http-public-listener": () => {
    const s = withProxyConfig(baseSnapshot(), { protocol: "http" });
    return { ...s, ConnectProxy: { ...s.ConnectProxy, Intentions: [intention("api", "allow", 9), intention("*", "deny", 8)], IntentionDefaultAllow: true } };
  },
  "grpc-public-listener": () => withProxyConfig(baseSnapshot(), { protocol: "grpc" }),
  "intentions-default-deny": () => {
    const s = baseSnapshot();
    return { ...s, ConnectProxy: { ...s.ConnectProxy, Intentions: [intention("web", "deny", 9), intention("api", "allow", 9), intention("*", "allow", 8)], IntentionDefaultAllow: false } };
  },
  "intentions-default-deny-none": () => ({ ...baseSnapshot(), ConnectProxy: { ...baseSnapshot().ConnectProxy, IntentionDefaultAllow: false } }),
  "connect-proxy-with-http-chain": () => dbWith({ protocol: "http" }, { entries: [HTTP_DEFAULTS] }),
  "connect-proxy-with-http2-chain": () => dbWith({ protocol: "http2" }, { entries: [{ ...HTTP_DEFAULTS, Config: { protocol: "http2" } }] }),
  "connect-proxy-with-grpc-chain": () => dbWith({ protocol: "grpc" }, { entries: [{ ...HTTP_DEFAULTS, Config: { protocol: "grpc" } }] }),
  "connect-proxy-with-chain-and-failover": () =>
    dbWith({}, { entries: [{ Kind: "service-resolver", Name: "db", Failover: { "*": { Datacenters: ["dc2"] } } }] }, {
      "db.default.dc1": dbInstances("dc1"),
      "db.default.dc2": dbInstances("dc2"),
    }),
  "connect-proxy-with-tcp-chain-failover-through-remote-gateway": () => failoverThroughGateway("remote", ["dc2"], false),
  "connect-proxy-with-tcp-chain-failover-through-remote-gateway-triggered": () => failoverThroughGateway("remote", ["dc2"], true),
  "connect-proxy-with-tcp-chain-double-failover-through-remote-gateway": () => failoverThroughGateway("remote", ["dc2", "dc3"], false),
  "connect-proxy-with-tcp-chain-double-failover-through-remote-gateway-triggered": () => failoverThroughGateway("remote", ["dc2", "dc3"], true),
  "connect-proxy-with-tcp-chain-failover-through-local-gateway": () => failoverThroughGateway("local", ["dc2"], false),
  "connect-proxy-with-tcp-chain-failover-through-local-gateway-triggered": () => failoverThroughGateway("local", ["dc2"], true),
  "connect-proxy-with-tcp-chain-double-failover-through-local-gateway": () => failoverThroughGateway("local", ["dc2", "dc3"], false),
  "connect-proxy-with-tcp-chain-double-failover-through-local-gateway-triggered": () => failoverThroughGateway("local", ["dc2", "dc3"], true),
  // Gateways addressed by host name: the cluster is a DNS cluster while it dials them (no assignment), EDS
  // while it dials the local instances.
  "connect-proxy-with-tcp-chain-failover-through-remote-gateway-hostname": () =>
    failoverThroughGateway("remote", ["dc2"], false, { gateways: mixedHostnameGateways }),
  "connect-proxy-with-tcp-chain-failover-through-remote-gateway-hostname-triggered": () =>
    failoverThroughGateway("remote", ["dc2"], true, { gateways: mixedHostnameGateways }),
  "connect-proxy-with-tcp-chain-failover-through-remote-gateway-hostname-triggered-strict-dns": () =>
    failoverThroughGateway("remote", ["dc2"], true, { gateways: mixedHostnameGateways, config: { envoy_dns_discovery_type: "STRICT_DNS" } }),
  "connect-proxy-with-tcp-chain-failover-through-local-gateway-hostname": () =>
    failoverThroughGateway("local", ["dc2"], false, { gateways: mixedHostnameGateways }),
  "connect-proxy-with-tcp-chain-failover-through-local-gateway-hostname-triggered": () =>
    failoverThroughGateway("local", ["dc2"], true, { gateways: mixedHostnameGateways }),
  // dc2's gateways are host names but dc2 is down too: dc3's gateways (IPs) are dialed, over EDS.
  "connect-proxy-with-tcp-chain-double-failover-through-remote-gateway-hostname-triggered": () =>
    failoverThroughGateway("remote", ["dc2", "dc3"], true, { gateways: (dc) => (dc === "dc2" ? hostnameGateways(dc) : gateways(dc)) }),
  // No failover: an upstream in dc2 reached through dc2's gateways (mode remote), addressed by host name.
  "upstream-in-other-datacenter-through-remote-gateway-hostname": () => {
    const u: Upstream = { ...DB, DestinationName: "cache", Datacenter: "dc2", LocalBindPort: 9292 };
    const c = chain("cache", { datacenter: "dc2", entries: [{ Kind: "proxy-defaults", Name: "global", MeshGateway: { Mode: "remote" } }] });
    return withUpstream(baseSnapshot(), u, c, { "cache.default.dc2": dbInstances("dc2", "passing", "cache") }, { dc2: hostnameGateways("dc2") });
  },
  "connect-proxy-with-chain-and-splitter": () => {
    const entries = [HTTP_DEFAULTS, { ...SPLIT_3_WAYS, Name: "db" }];
    return dbWith({}, { entries }, {
      "big-side.default.dc1": dbInstances("dc1", "passing", "big-side"),
      "goldilocks-side.default.dc1": dbInstances("dc1", "passing", "goldilocks-side"),
      "lil-bit-side.default.dc1": dbInstances("dc1", "passing", "lil-bit-side"),
    });
  },
  "connect-proxy-with-chain-and-router": () => dbWith({}, { entries: [HTTP_DEFAULTS, ROUTER, SPLIT_3_WAYS] }),
  "connect-proxy-with-grpc-router": () =>
    dbWith({}, {
      entries: [
        { ...HTTP_DEFAULTS, Config: { protocol: "grpc" } },
        { Kind: "service-router", Name: "db", Routes: [{ Match: { HTTP: { PathExact: "/fgrpc.PingServer/Ping" } }, Destination: { Service: "prefix" } }] },
      ],
    }),
  "splitter-with-resolver-redirect": () =>
    dbWith({}, {
      entries: [
        HTTP_DEFAULTS,
        { Kind: "service-splitter", Name: "db", Splits: [{ Weight: 50, Service: "db" }, { Weight: 50, Service: "db-canary" }] },
        { Kind: "service-resolver", Name: "db-canary", Redirect: { Service: "db", Datacenter: "dc2" } },
      ],
    }, { "db.default.dc1": dbInstances("dc1"), "db.default.dc2": dbInstances("dc2") }),
  "subset-only-passing-and-weights": () =>
    dbWith({}, {
      entries: [{ Kind: "service-resolver", Name: "db", DefaultSubset: "v1", Subsets: { v1: { Filter: "Service.Meta.version == v1", OnlyPassing: true } } }],
    }, {
      "v1.db.default.dc1": [
        instance({ node: "n1", address: "10.10.1.1", weights: { Passing: 10, Warning: 2 } }),
        instance({ node: "n2", address: "10.10.1.2", status: "warning", weights: { Passing: 10, Warning: 2 } }),
        instance({ node: "n3", address: "10.10.1.3", status: ["passing", "critical"] }),
        instance({ node: "n4", address: "10.10.1.4", weights: { Passing: 500, Warning: 0 } }),
        instance({ node: "n5", address: "10.10.1.5", status: "warning", weights: { Passing: 3, Warning: 0 } }),
      ],
    }),
  "expose-paths-local-app-paths": () => {
    const s = baseSnapshot();
    return { ...s, Proxy: { ...s.Proxy, Expose: { Paths: [{ ListenerPort: 21500, Path: "/health1", LocalPathPort: 8080 }, { ListenerPort: 21501, Path: "/health2", LocalPathPort: 8080 }] } } };
  },
  "expose-paths-new-cluster-http2": () => {
    const s = baseSnapshot();
    return {
      ...s,
      Proxy: {
        ...s.Proxy,
        Expose: { Paths: [{ ListenerPort: 21500, Path: "/health", LocalPathPort: 8080 }, { ListenerPort: 21501, Path: "/grpc.health.v1.Health/Check", LocalPathPort: 8090, Protocol: "http2" }] },
      },
    };
  },
  "expose-checks": () => {
    const s = baseSnapshot();
    return {
      ...s,
      Proxy: { ...s.Proxy, Expose: { Checks: true } },
      ConnectProxy: { ...s.ConnectProxy, ExposedCheckPaths: [{ ListenerPort: 21500, Path: "/status", LocalPathPort: 8080, Protocol: "http", ParsedFromCheck: true }] },
    };
  },
  "upstream-in-other-datacenter-not-fetched": () => {
    const u: Upstream = { ...DB, DestinationName: "cache", Datacenter: "dc2", LocalBindPort: 9292 };
    const s = baseSnapshot();
    return { ...s, Proxy: { ...s.Proxy, Upstreams: [...(s.Proxy.Upstreams ?? []), u] }, ConnectProxy: { ...s.ConnectProxy, DiscoveryChain: { ...s.ConnectProxy.DiscoveryChain, "cache?dc=dc2": chain("cache", { datacenter: "dc2" }) } } };
  },
};
