import { describe, expect, test } from "bun:test";
import type { Any } from "@bufbuild/protobuf/wkt";
import { HttpConnectionManagerSchema } from "../gen/envoy/extensions/filters/network/http_connection_manager/v3/http_connection_manager_pb.ts";
import { ListenerSchema } from "../gen/envoy/config/listener/v3/listener_pb.ts";
import type { GatewayConfig } from "./config_types.ts";
import { createGatewayConfigStore } from "./xds_config.ts";
import { applyClusters, applyEndpoints, applyListeners, assignment, chain, edsCluster, listener, pack, socketAddress, tcpProxyFilter, tlsInspector } from "./xds_config_kit.test.ts";
import { GATEWAY_TYPE_URLS } from "./xds_sink.ts";

const DC2 = "dc2.internal.example.consul";
const WEB = "web.default.dc1.internal.example.consul";

describe("applying sets", () => {
  test("a mesh gateway's listener, clusters and endpoints make one configuration", () => {
    const s = createGatewayConfigStore();
    expect(applyClusters(s, [DC2, edsCluster(DC2)], [WEB, edsCluster(WEB)])).toBeUndefined();
    expect(applyEndpoints(s, [DC2, assignment(DC2, [{ address: "198.18.2.1", port: 443 }])])).toBeUndefined();
    expect(applyListeners(s, ["default:127.0.0.1:8443", listener("default:127.0.0.1:8443", 8443)])).toBeUndefined();
    const cfg = s.current();
    expect(cfg.listeners.get("default:127.0.0.1:8443")).toEqual({
      name: "default:127.0.0.1:8443",
      address: "127.0.0.1",
      port: 8443,
      tlsInspector: true,
      chains: [
        { serverNames: [`*.${DC2}`], route: { kind: "cluster", cluster: DC2 }, statPrefix: `tcp_${DC2}` },
        { serverNames: [], route: { kind: "sni-cluster" }, statPrefix: "tcp_sni" },
      ],
    });
    expect(cfg.clusters.get(DC2)).toEqual({
      name: DC2,
      type: "EDS",
      connectTimeoutMs: 5000,
      outlier: { consecutiveFailures: 5, baseEjectionMs: 30_000, maxEjectionPercent: 10, intervalMs: 10_000, maxEjectionMs: 300_000 },
      endpoints: [{ address: "198.18.2.1", port: 443, healthy: true, weight: 1 }],
    });
    expect(cfg.clusters.get(WEB)?.endpoints).toEqual([]);
    expect(s.endpointNames()).toEqual([DC2, WEB]);
  });

  test("endpoints that arrive before their cluster are kept and used when it comes", () => {
    const s = createGatewayConfigStore();
    expect(applyEndpoints(s, [WEB, assignment(WEB, [{ address: "10.0.0.1" }, { address: "10.0.0.2", weight: 3 }])])).toBeUndefined();
    expect(s.current().clusters.size).toBe(0);
    applyClusters(s, [WEB, edsCluster(WEB)]);
    expect(s.current().clusters.get(WEB)?.endpoints.map((e) => `${e.address}/${e.weight}`)).toEqual(["10.0.0.1/1", "10.0.0.2/3"]);
    // A changed cluster keeps its endpoints without a resend of EDS.
    applyClusters(s, [WEB, edsCluster(WEB, { connectTimeout: { seconds: 1n } })]);
    expect(s.current().clusters.get(WEB)).toMatchObject({ connectTimeoutMs: 1000, endpoints: [{ address: "10.0.0.1" }, { address: "10.0.0.2" }] });
  });

  test("unchanged resources keep their objects; only changes notify", () => {
    const s = createGatewayConfigStore();
    const seen: GatewayConfig[] = [];
    const off = s.onChange((c) => seen.push(c));
    applyClusters(s, [DC2, edsCluster(DC2)], [WEB, edsCluster(WEB)]);
    applyListeners(s, ["l", listener("l", 8443)]);
    expect(seen.length).toBe(2);
    const before = s.current();
    applyListeners(s, ["l", listener("l", 8443)]);
    applyClusters(s, [DC2, edsCluster(DC2)], [WEB, edsCluster(WEB)]);
    expect(seen.length).toBe(2);
    expect(s.current()).toBe(before);
    applyEndpoints(s, [WEB, assignment(WEB, [{ address: "10.0.0.9" }])]);
    expect(seen.length).toBe(3);
    const after = s.current();
    expect(after.listeners.get("l")).toBe(before.listeners.get("l")!);
    expect(after.clusters.get(DC2)).toBe(before.clusters.get(DC2)!);
    expect(after.clusters.get(WEB)).not.toBe(before.clusters.get(WEB)!);
    off();
    expect(applyEndpoints(s)).toBeUndefined();
    expect(seen.length).toBe(3);
    expect(s.current().clusters.get(WEB)?.endpoints).toEqual([]);
  });

  test("a set replaces the previous one: resources left out are removed", () => {
    const s = createGatewayConfigStore();
    applyListeners(s, ["a", listener("a", 1001)], ["b", listener("b", 1002)]);
    applyListeners(s, ["b", listener("b", 1002)]);
    expect([...s.current().listeners.keys()]).toEqual(["b"]);
  });

  test("resources() returns the accepted Anys for /config_dump", () => {
    const s = createGatewayConfigStore();
    const any = listener("a", 1001);
    applyListeners(s, ["a", any]);
    expect([...s.resources(GATEWAY_TYPE_URLS.listener)]).toEqual([["a", any]]);
    expect(s.resources(GATEWAY_TYPE_URLS.cluster).size).toBe(0);
    expect(s.resources("type.googleapis.com/other").size).toBe(0);
  });
});

describe("rejected sets", () => {
  /** Applies a good listener, then `bad`; returns the reason after checking nothing changed. */
  function rejectListener(bad: Any, name = "bad"): string {
    const s = createGatewayConfigStore();
    applyListeners(s, ["good", listener("good", 8443)]);
    const before = s.current();
    let notified = false;
    s.onChange(() => (notified = true));
    const reason = applyListeners(s, ["good", listener("good", 8443)], [name, bad]);
    expect(reason).toBeString();
    expect(s.current()).toBe(before);
    expect([...s.resources(GATEWAY_TYPE_URLS.listener).keys()]).toEqual(["good"]);
    expect(notified).toBe(false);
    return reason!;
  }

  test("an HTTP listener is NACKed naming the filter: this data plane is TCP/SNI only", () => {
    const hcm = { name: "envoy.filters.network.http_connection_manager", configType: { case: "typedConfig", value: pack(HttpConnectionManagerSchema, { statPrefix: "http" }) } };
    const reason = rejectListener(listener("bad", 9000, { filterChains: [{ filters: [hcm] }] }));
    expect(reason).toBe(
      "Listener bad.filter_chains[0].filters[0]: network filter envoy.filters.network.http_connection_manager (type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager) is not supported: the built-in gateway is a TCP proxy routing by SNI (sni_cluster, tcp_proxy only)",
    );
  });

  test("match fields other than server_names", () => {
    const reason = rejectListener(listener("bad", 9000, { filterChains: [{ filterChainMatch: { destinationPort: 443 }, filters: [tcpProxyFilter("c")] }] }));
    expect(reason).toBe("Listener bad.filter_chains[0].filter_chain_match: destination_port is not supported by the built-in gateway");
  });

  test("server_names without tls_inspector", () => {
    expect(rejectListener(listener("bad", 9000, { listenerFilters: [] }))).toBe(
      "Listener bad: filter_chains[0] needs the SNI (server_names or sni_cluster) but the listener has no tls_inspector listener filter",
    );
  });

  test("a server name in two chains, and two catch-alls", () => {
    const dup = listener("bad", 9000, { filterChains: [...chain(["a.b"], "x"), ...chain(["A.B"], "y")] });
    expect(rejectListener(dup)).toContain('server name "a.b" appears in filter chains 0 and 1');
    const twoCatchAll = listener("bad", 9000, { filterChains: [...chain([], "x"), ...chain([], "y")] });
    expect(rejectListener(twoCatchAll)).toContain("filter chains 0 and 1 both have no server_names");
  });

  test("TLS termination on a chain", () => {
    const reason = rejectListener(listener("bad", 9000, { filterChains: [{ filters: [tcpProxyFilter("c")], transportSocket: { name: "tls" } }] }));
    expect(reason).toContain("Listener bad.filter_chains[0]: transport_socket is not supported");
  });

  test("other listener filters, filter orders and tcp_proxy features", () => {
    const proxyProtocol = [{ name: "envoy.filters.listener.proxy_protocol" }];
    expect(rejectListener(listener("bad", 9000, { listenerFilters: proxyProtocol }))).toContain("listener filter envoy.filters.listener.proxy_protocol is not supported");
    const reversed = listener("bad", 9000, { filterChains: [{ filters: [tcpProxyFilter(""), tcpProxyFilter("x")] }] });
    expect(rejectListener(reversed)).toContain("filters must be tcp_proxy, optionally preceded by sni_cluster (got [tcp_proxy,tcp_proxy])");
    expect(rejectListener(listener("bad", 9000, { filterChains: [{ filters: [] }] }))).toContain("(got none)");
    const noCluster = listener("bad", 9000, { filterChains: [{ filters: [tcpProxyFilter("")] }] });
    expect(rejectListener(noCluster)).toContain("tcp_proxy has an empty cluster and no sni_cluster filter before it");
    const retries = listener("bad", 9000, { filterChains: [{ filters: [tcpProxyFilter("c", { maxConnectAttempts: 3 })] }] });
    expect(rejectListener(retries)).toContain("max_connect_attempts is not supported");
  });

  test("a resource that is not what its type URL says, or misnamed, or undecodable", () => {
    expect(rejectListener(edsCluster("bad"))).toBe(
      "Listener bad: type type.googleapis.com/envoy.config.cluster.v3.Cluster where type.googleapis.com/envoy.config.listener.v3.Listener was expected",
    );
    expect(rejectListener(listener("other", 9000))).toBe('Listener bad: resource is named "other"');
    const garbage = { ...listener("bad", 9000), value: Uint8Array.from([0x0a, 0xff]) };
    expect(rejectListener(garbage)).toContain("Listener bad: envoy.config.listener.v3.Listener does not decode");
  });

  test("fields unknown to the proto are refused, not skipped", () => {
    const any = listener("bad", 9000);
    // Field 999, varint 1, appended to the encoded Listener.
    const withUnknown = { ...any, value: Uint8Array.from([...any.value, 0xb8, 0x3e, 0x01]) };
    expect(rejectListener(withUnknown)).toBe("Listener bad: unknown field 999 in envoy.config.listener.v3.Listener");
  });

  test("two listeners on one address", () => {
    expect(rejectListener(listener("bad", 8443))).toBe("Listener good: has duplicate address '127.0.0.1:8443' as existing listener bad");
  });

  test("unsupported listener features and addresses", () => {
    expect(rejectListener(listener("bad", 9000, { useOriginalDst: true }))).toBe("Listener bad: use_original_dst is not supported by the built-in gateway");
    const udp = { address: { case: "socketAddress", value: { protocol: 1, address: "0.0.0.0", portSpecifier: { case: "portValue", value: 53 } } } };
    expect(rejectListener(listener("bad", 9000, { address: udp }))).toBe("Listener bad.address.socket_address: only TCP is supported");
    expect(rejectListener(listener("bad", 9000, { address: undefined }))).toBe("Listener bad.address: address is required");
    expect(rejectListener(listener("bad", 9000, { address: socketAddress("", 1) }))).toBe("Listener bad.address.socket_address: address is empty");
    // Envoy binds only IP literals.
    expect(rejectListener(listener("bad", 9000, { address: socketAddress("gw.example.com", 8443) }))).toBe(
      "Listener bad.address.socket_address: malformed IP address: gw.example.com",
    );
  });

  test("every bad resource of a set is reported", () => {
    const s = createGatewayConfigStore();
    const reason = applyListeners(s, ["x", listener("x", 1, { listenerFilters: [] })], ["y", listener("z", 2)]);
    expect(reason?.split("\n")).toEqual([
      "Listener x: filter_chains[0] needs the SNI (server_names or sni_cluster) but the listener has no tls_inspector listener filter",
      'Listener y: resource is named "z"',
    ]);
  });

  test("an unknown resource type", () => {
    expect(createGatewayConfigStore().apply("type.googleapis.com/envoy.config.route.v3.RouteConfiguration", new Map())).toBe(
      "resource type type.googleapis.com/envoy.config.route.v3.RouteConfiguration is not supported by the built-in gateway",
    );
  });
});

describe("accepted listener variants", () => {
  test("idle_timeout: unset, zero (none) and set; plain tcp_proxy without tls_inspector on a catch-all", () => {
    const s = createGatewayConfigStore();
    const l = pack(ListenerSchema, {
      name: "plain",
      address: socketAddress("::1", 0),
      filterChains: [{ filters: [tcpProxyFilter("c", { idleTimeout: { seconds: 90n } })] }],
    });
    const z = listener("z", 9000, { filterChains: [{ filterChainMatch: { serverNames: ["a.b"] }, filters: [tcpProxyFilter("c", { idleTimeout: {} })] }] });
    expect(applyListeners(s, ["plain", l], ["z", z])).toBeUndefined();
    expect(s.current().listeners.get("plain")).toEqual({
      name: "plain",
      address: "::1",
      port: 0,
      tlsInspector: false,
      chains: [{ serverNames: [], route: { kind: "cluster", cluster: "c" }, statPrefix: "tcp_c", idleTimeoutMs: 90_000 }],
    });
    expect(s.current().listeners.get("z")?.chains[0]?.idleTimeoutMs).toBe(0);
  });

  test("tls_inspector named the legacy way without a typed_config", () => {
    const s = createGatewayConfigStore();
    const l = listener("l", 9000, { listenerFilters: [{ name: "envoy.listener.tls_inspector" }] });
    expect(applyListeners(s, ["l", l])).toBeUndefined();
    expect(s.current().listeners.get("l")?.tlsInspector).toBe(true);
    expect(tlsInspector()).toHaveLength(1);
  });
});
