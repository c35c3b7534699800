/**
 * The proxyless gRPC state machine as a pure function of typed events: watches follow the source and the
 * chains, values of cancelled watches are dropped, and the snapshot and completeness follow the values.
 */
import { describe, expect, test } from "bun:test";
import { ProxylessState, type ProxylessCommand } from "./proxyless_state.ts";
import { chain, node } from "./sidecar_state_kit.test.ts";

const lines = (cmds: readonly ProxylessCommand[]) => cmds.map((c) => `${c.op} ${c.watchId}`);
const SUBSETS = [{ Kind: "service-defaults", Name: "db", Protocol: "grpc" }, { Kind: "service-resolver", Name: "db", Subsets: { v1: { Filter: "Service.Meta.v == 1" } } }];
const SPLIT = { Kind: "service-splitter", Name: "db", Splits: [{ Weight: 50, ServiceSubset: "v1" }, { Weight: 50 }] };

describe("proxyless state", () => {
  test("catalog source: the catalog, then a chain per service (not consul), then each target's own instances", () => {
    const m = new ProxylessState({ datacenter: "dc1" }, "client", { kind: "catalog" });
    expect(lines(m.start())).toEqual(["watch catalog-services"]);
    expect(m.snapshot()).toBeUndefined();
    const cmds = m.handle({ kind: "catalog-services", watchId: "catalog-services", value: ["consul", "db", "web"] });
    expect(lines(cmds)).toEqual(["watch discovery-chain:db", "watch discovery-chain:web"]);
    expect(cmds[0]).toEqual({
      op: "watch", watchId: "discovery-chain:db",
      request: { kind: "chain", upstream: "db", chain: { name: "db", evaluateInDatacenter: "dc1", evaluateInNamespace: "default", overrideMeshGatewayMode: "", overrideProtocol: "", overrideConnectTimeoutMs: 0 } },
    });
    // Valid once the list is known; complete only when every chain and target is in.
    expect(m.snapshot()).toEqual({ Kind: "proxyless-grpc", NodeID: "client", Datacenter: "dc1", Upstreams: {} });
    expect(m.complete()).toBe(false);
    const t = m.handle({ kind: "chain", watchId: "discovery-chain:db", value: chain("db") });
    expect(t).toEqual([{ op: "watch", watchId: "proxyless-target:db.default.dc1:db", request: { kind: "instances", upstream: "db", targetId: "db.default.dc1", service: "db", datacenter: "dc1", filter: "" } }]);
    m.handle({ kind: "instances", watchId: "proxyless-target:db.default.dc1:db", value: [node("n1", "db")] });
    expect(Object.keys(m.snapshot()!.Upstreams)).toEqual(["db"]);
    expect(m.snapshot()!.Upstreams["db"]!.TargetEndpoints["db.default.dc1"]).toHaveLength(1);
    m.handle({ kind: "chain", watchId: "discovery-chain:web", value: chain("web") });
    expect(m.complete()).toBe(false);
    m.handle({ kind: "instances", watchId: "proxyless-target:web.default.dc1:web", value: [] });
    expect(m.complete()).toBe(true);
    // A service leaving the catalog loses its chain and targets.
    expect(lines(m.handle({ kind: "catalog-services", watchId: "catalog-services", value: ["consul", "db"] }))).toEqual([
      "cancel discovery-chain:web", "cancel proxyless-target:web.default.dc1:web",
    ]);
    expect(Object.keys(m.snapshot()!.Upstreams)).toEqual(["db"]);
  });

  test("a chain change swaps target watches, keeping unchanged ones and their values", () => {
    const m = new ProxylessState({ datacenter: "dc1" }, "web", { kind: "upstreams", upstreams: [{ DestinationName: "db", LocalBindPort: 9191, Config: { protocol: "grpc" } }] });
    expect(lines(m.start())).toEqual(["watch discovery-chain:db"]);
    expect(m.watches().get("discovery-chain:db")).toMatchObject({ chain: { overrideProtocol: "grpc" } });
    m.handle({ kind: "chain", watchId: "discovery-chain:db", value: chain("db") });
    m.handle({ kind: "instances", watchId: "proxyless-target:db.default.dc1:db", value: [node("n1", "db")] });
    const cmds = m.handle({ kind: "chain", watchId: "discovery-chain:db", value: chain("db", [...SUBSETS, SPLIT]) });
    expect(lines(cmds)).toEqual(["watch proxyless-target:v1.db.default.dc1:db"]);
    expect(m.watches().get("proxyless-target:v1.db.default.dc1:db")).toMatchObject({ filter: "Service.Meta.v == 1" });
    expect(m.snapshot()!.Upstreams["db"]!.TargetEndpoints).toEqual({ "db.default.dc1": [node("n1", "db")] });
    // Equal values change nothing (same snapshot object); stale updates are ignored.
    const s = m.snapshot();
    expect(m.handle({ kind: "chain", watchId: "discovery-chain:db", value: chain("db", [...SUBSETS, SPLIT]) })).toEqual([]);
    expect(m.handle({ kind: "instances", watchId: "proxyless-target:gone:db", value: [] })).toEqual([]);
    expect(m.snapshot()).toBe(s);
  });

  test("source changes: prepared queries skipped, catalog <-> upstreams, close cancels all", () => {
    const m = new ProxylessState({ datacenter: "dc1" }, "web", {
      kind: "upstreams",
      upstreams: [{ DestinationName: "db", LocalBindPort: 1, Datacenter: "dc2" }, { DestinationType: "prepared_query", DestinationName: "q", LocalBindPort: 2 }],
    });
    expect(lines(m.start())).toEqual(["watch discovery-chain:db?dc=dc2"]);
    expect(m.watches().get("discovery-chain:db?dc=dc2")).toMatchObject({ chain: { evaluateInDatacenter: "dc2" } });
    expect(lines(m.handle({ kind: "source", source: { kind: "catalog" } }))).toEqual(["cancel discovery-chain:db?dc=dc2", "watch catalog-services"]);
    expect(m.handle({ kind: "source", source: { kind: "catalog" } })).toEqual([]);
    expect(lines(m.close())).toEqual(["cancel catalog-services"]);
    expect(m.handle({ kind: "catalog-services", watchId: "catalog-services", value: ["db"] })).toEqual([]);
    expect(m.snapshot()).toBeUndefined();
  });
});
