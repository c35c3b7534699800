/**
 * The sidecar state machine as a pure function of typed events: transcripts of the watch commands it
 * emits and the snapshots it produces.
 */
import { describe, expect, test } from "bun:test";
import { chain, DB, driver, GEO, intention, LEAF, node, noConfigEntries, registration, ROOTS, entry } from "./sidecar_state_kit.test.ts";
import type { WatchRequest } from "./watches.ts";

const FAILOVER = [{ Kind: "service-resolver", Name: "db", Failover: { "*": { Datacenters: ["dc2"] } } }];

/** A driver past the config entries, with roots, leaf and intentions in. */
function ready() {
  const d = driver();
  d.start();
  noConfigEntries(d);
  d.send({ kind: "roots", watchId: "roots", value: ROOTS });
  d.send({ kind: "leaf", watchId: "leaf", value: LEAF });
  d.send({ kind: "intentions", watchId: "intentions", value: [] });
  return d;
}

describe("sidecar state machine", () => {
  test("watches roots, leaf, intentions and config entries first; upstreams once the config is resolved", () => {
    const d = driver();
    expect(d.start()).toEqual([
      "watch config-entry:proxy-defaults:global",
      "watch config-entry:service-defaults:db",
      "watch config-entry:service-defaults:web",
      "watch intentions",
      "watch leaf",
      "watch roots",
    ]);
    expect(d.held.get("leaf")).toEqual({ kind: "leaf", service: "web" });
    expect(d.held.get("intentions")).toEqual({ kind: "intentions", service: "web" });
    expect(d.send({ kind: "config-entry", watchId: "config-entry:proxy-defaults:global", value: null })).toEqual([]);
    // The prepared query needs no service-defaults; db waits for its own.
    expect(d.send({ kind: "config-entry", watchId: "config-entry:service-defaults:web", value: null })).toEqual(["watch upstream:prepared_query:geo"]);
    expect(d.send({ kind: "config-entry", watchId: "config-entry:service-defaults:db", value: null })).toEqual(["watch discovery-chain:db"]);
    expect(d.held.get("discovery-chain:db")).toEqual({
      kind: "chain", upstream: "db",
      chain: { name: "db", evaluateInDatacenter: "dc1", evaluateInNamespace: "default", overrideMeshGatewayMode: "", overrideProtocol: "", overrideConnectTimeoutMs: 0 },
    });
    expect(d.held.get("upstream:prepared_query:geo")).toEqual({ kind: "prepared-query", upstream: "prepared_query:geo", name: "geo", datacenter: "dc1" });
  });

  test("valid only with roots, leaf and intentions; health of each chain target fills the snapshot", () => {
    const d = driver();
    d.start();
    noConfigEntries(d);
    d.send({ kind: "roots", watchId: "roots", value: ROOTS });
    d.send({ kind: "leaf", watchId: "leaf", value: LEAF });
    expect(d.machine.snapshot()).toBeUndefined();
    d.send({ kind: "intentions", watchId: "intentions", value: [intention("api")] });
    const first = d.machine.snapshot()!;
    expect(first.ConnectProxy.Intentions.map((i) => i.SourceName)).toEqual(["api"]);
    expect(first.ConnectProxy.DiscoveryChain).toEqual({});
    expect(first.Roots.TrustDomain).toBe(ROOTS.TrustDomain);
    expect(first).toMatchObject({ ProxyID: "web-sidecar-proxy", Datacenter: "dc1", AdvertiseAddrLAN: "10.0.0.9", Port: 21000 });
    expect(d.machine.snapshot()).toBe(first);

    expect(d.send({ kind: "chain", watchId: "discovery-chain:db", value: chain("db") })).toEqual(["watch upstream-target:db.default.dc1:db"]);
    expect(d.held.get("upstream-target:db.default.dc1:db")).toEqual({ kind: "health", upstream: "db", targetId: "db.default.dc1", service: "db", datacenter: "dc1", filter: "" });
    const withChain = d.machine.snapshot()!;
    expect(withChain).not.toBe(first);
    expect(Object.keys(withChain.ConnectProxy.DiscoveryChain)).toEqual(["db"]);
    expect(withChain.ConnectProxy.WatchedUpstreamEndpoints).toEqual({});

    d.send({ kind: "health", watchId: "upstream-target:db.default.dc1:db", value: [node("n1", "db")] });
    d.send({ kind: "prepared-query", watchId: "upstream:prepared_query:geo", value: [node("n2", "geo")] });
    const full = d.machine.snapshot()!;
    expect(full.ConnectProxy.WatchedUpstreamEndpoints["db"]!["db.default.dc1"]!.map((n) => n.Node.Node)).toEqual(["n1"]);
    expect(full.ConnectProxy.PreparedQueryEndpoints["prepared_query:geo"]!.map((n) => n.Node.Node)).toEqual(["n2"]);
    // The same chain again changes nothing.
    expect(d.send({ kind: "chain", watchId: "discovery-chain:db", value: chain("db") })).toEqual([]);
    expect(d.machine.snapshot()).toBe(full);
  });

  test("a chain that fails over through remote gateways adds the target and the gateway watch; going back cancels them", () => {
    const d = ready();
    d.send({ kind: "chain", watchId: "discovery-chain:db", value: chain("db") });
    d.send({ kind: "health", watchId: "upstream-target:db.default.dc1:db", value: [node("n1", "db")] });
    expect(d.send({ kind: "chain", watchId: "discovery-chain:db", value: chain("db", FAILOVER, { meshGateway: "remote" }) })).toEqual([
      "watch mesh-gateway:dc2:db",
      "watch upstream-target:db.default.dc2:db",
    ]);
    // The unchanged target kept its watch and its endpoints.
    expect(d.machine.snapshot()!.ConnectProxy.WatchedUpstreamEndpoints["db"]!["db.default.dc1"]).toHaveLength(1);
    d.send({ kind: "health", watchId: "upstream-target:db.default.dc2:db", value: [node("m1", "db", "dc2")] });
    d.send({ kind: "mesh-gateways", watchId: "mesh-gateway:dc2:db", value: [node("gw", "mesh-gateway", "dc2")] });
    const snap = d.machine.snapshot()!;
    expect(Object.keys(snap.ConnectProxy.WatchedUpstreamEndpoints["db"]!).sort()).toEqual(["db.default.dc1", "db.default.dc2"]);
    expect(Object.keys(snap.ConnectProxy.WatchedGatewayEndpoints["db"]!)).toEqual(["dc2"]);

    expect(d.send({ kind: "chain", watchId: "discovery-chain:db", value: chain("db") })).toEqual([
      "cancel mesh-gateway:dc2:db",
      "cancel upstream-target:db.default.dc2:db",
    ]);
    const back = d.machine.snapshot()!;
    expect(Object.keys(back.ConnectProxy.WatchedUpstreamEndpoints["db"]!)).toEqual(["db.default.dc1"]);
    expect(back.ConnectProxy.WatchedGatewayEndpoints).toEqual({});
    // A late update of a cancelled watch is ignored.
    expect(d.send({ kind: "health", watchId: "upstream-target:db.default.dc2:db", value: [] })).toEqual([]);
    expect(d.machine.snapshot()).toBe(back);
  });

  test("a subset's filter travels with the target's health watch", () => {
    const d = ready();
    const subsets = [{ Kind: "service-resolver", Name: "db", DefaultSubset: "v2", Subsets: { v2: { Filter: "Service.Meta.version == v2", OnlyPassing: true } } }];
    expect(d.send({ kind: "chain", watchId: "discovery-chain:db", value: chain("db", subsets) })).toEqual(["watch upstream-target:v2.db.default.dc1:db"]);
    expect(d.held.get("upstream-target:v2.db.default.dc1:db")).toMatchObject({ service: "db", filter: "Service.Meta.version == v2" });
  });

  test("a registration without an upstream cancels its chain, targets and service-defaults; the snapshot loses it", () => {
    const d = ready();
    d.send({ kind: "chain", watchId: "discovery-chain:db", value: chain("db") });
    d.send({ kind: "health", watchId: "upstream-target:db.default.dc1:db", value: [node("n1", "db")] });
    expect(d.send({ kind: "registration", registration: registration([GEO]) })).toEqual([
      "cancel config-entry:service-defaults:db",
      "cancel discovery-chain:db",
      "cancel upstream-target:db.default.dc1:db",
    ]);
    const snap = d.machine.snapshot()!;
    expect(snap.ConnectProxy.DiscoveryChain).toEqual({});
    expect(snap.ConnectProxy.WatchedUpstreamEndpoints).toEqual({});
    expect(snap.Proxy.Upstreams).toEqual([GEO]);
    // Adding it back waits for its service-defaults before the chain is watched again.
    expect(d.send({ kind: "registration", registration: registration([GEO, DB]) })).toEqual(["watch config-entry:service-defaults:db"]);
    expect(d.send({ kind: "config-entry", watchId: "config-entry:service-defaults:db", value: null })).toEqual(["watch discovery-chain:db"]);
    // The same registration again is no event.
    expect(d.send({ kind: "registration", registration: registration([GEO, DB]) })).toEqual([]);
  });

  test("a changed destination restarts the leaf, intentions and config watches", () => {
    const d = ready();
    const reg = registration();
    const moved = { ...reg, Proxy: { ...reg.Proxy, DestinationServiceName: "web2" } };
    // Until the new destination's service-defaults are in, the upstreams are unresolved too (Consul
    // discards the whole state on any registration change).
    expect(d.send({ kind: "registration", registration: moved })).toEqual([
      "cancel config-entry:service-defaults:web",
      "cancel discovery-chain:db",
      "cancel intentions",
      "cancel leaf",
      "cancel upstream:prepared_query:geo",
      "watch config-entry:service-defaults:web2",
      "watch intentions",
      "watch leaf",
    ]);
    expect(d.held.get("leaf")).toEqual({ kind: "leaf", service: "web2" });
    // Not valid until the new leaf, intentions and config entry are in.
    expect(d.machine.snapshot()).toBeUndefined();
  });

  test("central config: protocols and the gateway mode from proxy-defaults and service-defaults", () => {
    const d = driver();
    d.start();
    d.send({ kind: "config-entry", watchId: "config-entry:proxy-defaults:global", value: entry({ Kind: "proxy-defaults", Name: "global", Config: { protocol: "http", extra: 1 }, MeshGateway: { Mode: "local" } }) });
    d.send({ kind: "config-entry", watchId: "config-entry:service-defaults:web", value: entry({ Kind: "service-defaults", Name: "web", Protocol: "grpc" }) });
    expect(d.send({ kind: "config-entry", watchId: "config-entry:service-defaults:db", value: null })).toEqual(["watch discovery-chain:db"]);
    // db has no service-defaults: the global protocol; the proxy's gateway mode from proxy-defaults.
    expect((d.held.get("discovery-chain:db") as WatchRequest & { kind: "chain" }).chain).toMatchObject({ overrideProtocol: "http", overrideMeshGatewayMode: "local" });
    expect(d.send({ kind: "config-entry", watchId: "config-entry:service-defaults:db", value: entry({ Kind: "service-defaults", Name: "db", Protocol: "http2" }) })).toEqual([
      "cancel discovery-chain:db",
      "watch discovery-chain:db",
    ]);
    expect((d.held.get("discovery-chain:db") as WatchRequest & { kind: "chain" }).chain.overrideProtocol).toBe("http2");
    d.send({ kind: "roots", watchId: "roots", value: ROOTS });
    d.send({ kind: "leaf", watchId: "leaf", value: LEAF });
    d.send({ kind: "intentions", watchId: "intentions", value: [] });
    const snap = d.machine.snapshot()!;
    // The service's protocol wins over the global one; other keys are filled in; the registration's stay.
    expect(snap.Proxy.Config).toEqual({ protocol: "grpc", extra: 1 });
    expect(snap.Proxy.MeshGateway.Mode).toBe("local");
    expect(snap.Proxy.Upstreams![0]).toMatchObject({ DestinationName: "db", Config: { protocol: "http2" }, MeshGateway: { Mode: "local" } });
    // Prepared-query upstreams take no service defaults.
    expect(snap.Proxy.Upstreams![1]).toEqual(GEO);
  });

  test("mesh gateway mode precedence: upstream, then the registered proxy, then service-defaults, then proxy-defaults", () => {
    type Mode = "" | "none" | "local" | "remote";
    const cases: { name: string; global: Mode; service: Mode; proxy: Mode; upstream: Mode; want: Mode }[] = [
      { name: "nothing set", global: "", service: "", proxy: "", upstream: "", want: "" },
      { name: "proxy-defaults only", global: "local", service: "", proxy: "", upstream: "", want: "local" },
      { name: "the destination's service-defaults over proxy-defaults", global: "local", service: "remote", proxy: "", upstream: "", want: "remote" },
      { name: "the registered proxy over central config", global: "local", service: "remote", proxy: "none", upstream: "", want: "none" },
      { name: "the upstream over everything", global: "local", service: "remote", proxy: "none", upstream: "local", want: "local" },
    ];
    for (const c of cases) {
      const reg = registration([{ ...DB, ...(c.upstream ? { MeshGateway: { Mode: c.upstream } } : {}) }]);
      const d = driver({ ...reg, Proxy: { ...reg.Proxy, MeshGateway: c.proxy ? { Mode: c.proxy } : {} } });
      d.start();
      const meshGateway = (m: Mode) => (m ? { MeshGateway: { Mode: m } } : {});
      d.send({ kind: "config-entry", watchId: "config-entry:proxy-defaults:global", value: entry({ Kind: "proxy-defaults", Name: "global", ...meshGateway(c.global) }) });
      d.send({ kind: "config-entry", watchId: "config-entry:service-defaults:web", value: entry({ Kind: "service-defaults", Name: "web", ...meshGateway(c.service) }) });
      d.send({ kind: "config-entry", watchId: "config-entry:service-defaults:db", value: null });
      const chain = (d.held.get("discovery-chain:db") as WatchRequest & { kind: "chain" }).chain;
      expect({ name: c.name, mode: chain.overrideMeshGatewayMode }).toEqual({ name: c.name, mode: c.want });
    }
  });

  test("a protocol set in the registration is not overridden by defaults", () => {
    const d = driver(registration([{ ...DB, Config: { protocol: "tcp", connect_timeout_ms: "2500" } }], { protocol: "tcp" }));
    d.start();
    d.send({ kind: "config-entry", watchId: "config-entry:proxy-defaults:global", value: entry({ Kind: "proxy-defaults", Name: "global", Config: { protocol: "http" } }) });
    d.send({ kind: "config-entry", watchId: "config-entry:service-defaults:web", value: entry({ Kind: "service-defaults", Name: "web", Protocol: "http" }) });
    d.send({ kind: "config-entry", watchId: "config-entry:service-defaults:db", value: entry({ Kind: "service-defaults", Name: "db", Protocol: "http" }) });
    expect((d.held.get("discovery-chain:db") as WatchRequest & { kind: "chain" }).chain).toMatchObject({ overrideProtocol: "tcp", overrideConnectTimeoutMs: 2500 });
  });

  test("close cancels every watch and ignores later events", () => {
    const d = ready();
    d.send({ kind: "chain", watchId: "discovery-chain:db", value: chain("db") });
    const all = d.ids();
    const cmds = d.machine.close();
    expect(cmds.map((c) => c.watchId)).toEqual(all);
    expect(cmds.every((c) => c.op === "cancel")).toBe(true);
    expect(d.machine.handle({ kind: "roots", watchId: "roots", value: ROOTS })).toEqual([]);
    expect(d.machine.snapshot()).toBeUndefined();
  });
});
