/**
 * The proxyless manager over a fake agent cache and local agent: which node IDs are accepted and where
 * their upstreams come from, how node IDs are classified for the ADS resolver, a sidecar's proxyless view
 * under its own key, machines started by streams and stopped when idle, deregistered or when their key
 * changes owner, the first snapshot held until complete (bounded), later ones coalesced.
 */
import { describe, expect, test } from "bun:test";
import type { AgentService, CacheType } from "../agent/index.ts";
import { silentLogger } from "../platform/index.ts";
import { simClock } from "../../test/harness/sim_clock.ts";
import { COALESCE_MS } from "./manager.ts";
import { agentWith, fakeCache, flush } from "./manager_kit.test.ts";
import {
  createProxylessManager, localServiceSource, PROXYLESS_IDLE_MS, PROXYLESS_INITIAL_WAIT_MS, PROXYLESS_VIEW_PREFIX, proxylessViewKey, sidecarViewSource,
  type ProxylessCacheTypes,
} from "./proxyless_manager.ts";
import type { ProxylessSnapshot } from "./proxyless_snapshot.ts";
import { chain, node } from "./sidecar_state_kit.test.ts";

const types = Object.fromEntries((["chain", "health", "catalogServices"] as const).map((k) => [k, { name: k } as unknown as CacheType<unknown, unknown>])) as unknown as ProxylessCacheTypes;
const svc = (id: string, extra: Partial<AgentService> = {}): AgentService => ({
  ID: id, Service: id, Tags: [], Meta: {}, Port: 8080, Address: "", Weights: { Passing: 1, Warning: 1 }, EnableTagOverride: false, ...extra,
});
const SIDECAR = svc("web-sidecar-proxy", {
  Kind: "connect-proxy", Proxy: { DestinationServiceName: "web", DestinationServiceID: "web", Upstreams: [{ DestinationName: "db", LocalBindPort: 9191 }], MeshGateway: {}, Expose: {} },
});

function setup(services: Record<string, AgentService> = { web: svc("web"), api: svc("api"), [SIDECAR.ID]: SIDECAR }) {
  const clock = simClock();
  const fc = fakeCache();
  const local = agentWith(services);
  const published: { id: string; snap: ProxylessSnapshot }[] = [];
  const removed: string[] = [];
  const manager = createProxylessManager({
    datacenter: "dc1", cache: fc.cache, types, services: local.agent, identities: ["batch-job"], clock, logger: silentLogger(),
    publish: (id, snap) => published.push({ id, snap }),
    remove: (id) => removed.push(id),
  });
  return { clock, fc, local, manager, published, removed };
}

describe("proxyless manager", () => {
  test("accepts local non-proxy services and configured identities; upstreams from the sidecar, else the catalog", () => {
    const { manager } = setup();
    expect(["web", "api", "batch-job", "web-sidecar-proxy", "nope"].map((id) => manager.accepts(id))).toEqual([true, true, true, false, false]);
    const services = { web: svc("web"), api: svc("api"), [SIDECAR.ID]: SIDECAR };
    expect(localServiceSource(services, "web")).toEqual({ kind: "upstreams", upstreams: SIDECAR.Proxy!.Upstreams! });
    expect(localServiceSource(services, "api")).toEqual({ kind: "catalog" });
    expect(localServiceSource(services, "web-sidecar-proxy")).toBeUndefined();
    expect(localServiceSource({ gw: svc("gw", { Kind: "mesh-gateway" }) }, "gw")).toBeUndefined();
    manager.close();
    expect(manager.accepts("web")).toBe(false);
  });

  test("a stream starts the machine; the first snapshot waits until complete, later ones are coalesced", async () => {
    const { manager, fc, published, clock } = setup();
    expect(manager.nodes()).toEqual([]);
    const release = manager.acquire("web");
    expect(manager.nodes()).toEqual(["web"]);
    expect(fc.watching()).toEqual(['chain {"name":"db","evaluateInDatacenter":"dc1","evaluateInNamespace":"default","overrideMeshGatewayMode":"","overrideProtocol":"","overrideConnectTimeoutMs":0}']);
    fc.answer("chain", chain("db"));
    await flush();
    expect(fc.watching()).toContain('health {"service":"db","connect":false}');
    expect(published).toHaveLength(0); // valid, not complete: held back
    fc.answer("health", [node("n1", "db")]);
    await flush();
    expect(published).toHaveLength(1);
    expect(published[0]!.snap.Upstreams["db"]!.TargetEndpoints["db.default.dc1"]).toHaveLength(1);
    fc.answer("health", [node("n1", "db"), node("n2", "db")]);
    await flush();
    expect(published).toHaveLength(1);
    clock.advance(COALESCE_MS);
    await flush();
    expect(published).toHaveLength(2);
    expect(manager.snapshot("web")).toBe(published[1]!.snap);
    release();
    manager.close();
  });

  test("an incomplete first snapshot goes out after the initial wait", async () => {
    const { manager, fc, published, clock } = setup();
    manager.acquire("api");
    fc.answer("catalogServices", ["api", "consul", "db"]);
    await flush();
    expect(fc.watching().filter((w) => w.startsWith("chain"))).toHaveLength(2);
    clock.advance(PROXYLESS_INITIAL_WAIT_MS - 1);
    await flush();
    expect(published).toHaveLength(0);
    clock.advance(1);
    await flush();
    expect(published.map((p) => [p.id, Object.keys(p.snap.Upstreams)])).toEqual([["api", []]]);
    manager.close();
  });

  test("idle after the last stream: stopped and removed; a new stream in time keeps it", async () => {
    const { manager, fc, removed, clock } = setup();
    const r1 = manager.acquire("batch-job");
    const r2 = manager.acquire("batch-job");
    r1();
    r1(); // idempotent
    clock.advance(PROXYLESS_IDLE_MS);
    expect(manager.nodes()).toEqual(["batch-job"]);
    r2();
    clock.advance(PROXYLESS_IDLE_MS - 1);
    const r3 = manager.acquire("batch-job");
    clock.advance(PROXYLESS_IDLE_MS);
    expect(manager.nodes()).toEqual(["batch-job"]);
    r3();
    clock.advance(PROXYLESS_IDLE_MS);
    expect(manager.nodes()).toEqual([]);
    expect(removed).toEqual(["batch-job"]);
    expect(fc.watching()).toEqual([]);
    manager.close();
  });

  test("registration changes: a new sidecar switches the source; deregistration stops and removes", async () => {
    const { manager, fc, local, removed } = setup();
    manager.acquire("api");
    expect(fc.watching()).toEqual(["catalogServices {}"]);
    local.services["api-sidecar-proxy"] = svc("api-sidecar-proxy", {
      Kind: "connect-proxy", Proxy: { DestinationServiceName: "api", DestinationServiceID: "api", Upstreams: [{ DestinationName: "db", LocalBindPort: 1 }], MeshGateway: {}, Expose: {} },
    });
    local.changed();
    expect(fc.watching()).toEqual([expect.stringMatching(/^chain \{"name":"db"/)]);
    delete local.services["api"];
    local.changed();
    expect(manager.nodes()).toEqual([]);
    expect(removed).toEqual(["api"]);
    expect(fc.watching()).toEqual([]);
    expect(manager.acquire("api")).toBeFunction(); // refused quietly: nothing starts
    expect(manager.nodes()).toEqual([]);
    manager.close();
  });

  test("classify: connect proxies (with their view key), mesh gateways, proxyless clients, unknown", () => {
    const { manager } = setup({ web: svc("web"), [SIDECAR.ID]: SIDECAR, gw: svc("gw", { Kind: "mesh-gateway" }), tgw: svc("tgw", { Kind: "terminating-gateway" }) });
    const key = proxylessViewKey(SIDECAR.ID);
    expect(key).toBe(`${PROXYLESS_VIEW_PREFIX}web-sidecar-proxy`);
    expect(manager.classify(SIDECAR.ID)).toEqual({ kind: "connect-proxy", proxylessKey: key });
    expect(manager.classify("gw")).toEqual({ kind: "mesh-gateway" });
    expect(["web", "batch-job", key].map((id) => manager.classify(id))).toEqual([{ kind: "proxyless" }, { kind: "proxyless" }, { kind: "proxyless" }]);
    expect(["tgw", "nope", proxylessViewKey("web"), proxylessViewKey("gw")].map((id) => manager.classify(id))).toEqual([undefined, undefined, undefined, undefined]);
    expect([key, proxylessViewKey("gw"), proxylessViewKey("nope")].map((id) => manager.accepts(id))).toEqual([true, false, false]);
    expect(sidecarViewSource({ [SIDECAR.ID]: SIDECAR }, SIDECAR.ID)).toEqual({ kind: "upstreams", upstreams: SIDECAR.Proxy!.Upstreams! });
    manager.close();
    expect(manager.classify(SIDECAR.ID)).toBeUndefined();
  });

  test("a sidecar's proxyless view: the proxy's upstreams under the view key; follows the proxy; removed when it is deregistered", async () => {
    const { manager, fc, local, published, removed } = setup();
    const key = proxylessViewKey(SIDECAR.ID);
    const release = manager.acquire(key);
    expect(manager.nodes()).toEqual([key]);
    expect(fc.watching()).toEqual([expect.stringMatching(/^chain \{"name":"db"/)]);
    fc.answer("chain", chain("db"));
    await flush();
    fc.answer("health", [node("n1", "db")]);
    await flush();
    expect(published.map((p) => [p.id, p.snap.NodeID, Object.keys(p.snap.Upstreams)])).toEqual([[key, SIDECAR.ID, ["db"]]]);
    // The proxy's upstreams change: the view follows.
    local.services[SIDECAR.ID] = { ...SIDECAR, Proxy: { ...SIDECAR.Proxy!, Upstreams: [{ DestinationName: "cache", LocalBindPort: 9292 }] } };
    local.changed();
    expect(fc.watching()).toEqual([expect.stringMatching(/^chain \{"name":"cache"/)]);
    // No upstreams: a valid view in which nothing resolves.
    local.services[SIDECAR.ID] = { ...SIDECAR, Proxy: { ...SIDECAR.Proxy!, Upstreams: [] } };
    local.changed();
    expect(fc.watching()).toEqual([]);
    expect(manager.snapshot(key)?.Upstreams).toEqual({});
    // The proxy is deregistered: the view stops and its key is removed; the web service's own key is untouched.
    delete local.services[SIDECAR.ID];
    local.changed();
    expect(manager.nodes()).toEqual([]);
    expect(removed).toEqual([key]);
    expect(manager.accepts(key)).toBe(false);
    release();
    manager.close();
  });

  test("a view key owned by a service or identity belongs to it: the view is unavailable; a running view is stopped", () => {
    const key = proxylessViewKey(SIDECAR.ID);
    const { manager, local, removed } = setup();
    manager.acquire(key);
    // A plain service registered under the key: it owns the key; the running view stops and its entry goes.
    local.services[key] = svc(key);
    local.changed();
    expect(manager.classify(SIDECAR.ID)).toEqual({ kind: "connect-proxy", proxylessKey: undefined });
    expect(manager.nodes()).toEqual([]);
    expect(removed).toEqual([key]);
    manager.acquire(key); // now the service's own machine
    expect(manager.snapshot(key)).toBeUndefined();
    expect(manager.nodes()).toEqual([key]);
    manager.close();

    // A proxy registered under the key: the view stops but leaves the cache entry to the proxy.
    const again = setup();
    again.manager.acquire(key);
    again.local.services[key] = svc(key, { Kind: "connect-proxy", Proxy: { DestinationServiceName: "x", DestinationServiceID: "x", MeshGateway: {}, Expose: {} } });
    again.local.changed();
    expect(again.manager.nodes()).toEqual([]);
    expect(again.removed).toEqual([]);
    expect(again.manager.classify(SIDECAR.ID)).toEqual({ kind: "connect-proxy", proxylessKey: undefined });
    expect(again.manager.accepts(key)).toBe(false);
    again.manager.close();

    // A configured identity equal to the key: the view is unavailable from the start.
    const ident = createProxylessManager({
      datacenter: "dc1", cache: fakeCache().cache, types, services: agentWith({ [SIDECAR.ID]: SIDECAR }).agent, identities: [key], clock: simClock(), logger: silentLogger(),
      publish: () => {}, remove: () => {},
    });
    expect(ident.classify(SIDECAR.ID)).toEqual({ kind: "connect-proxy", proxylessKey: undefined });
    expect(ident.classify(key)).toEqual({ kind: "proxyless" });
    ident.close();
  });
});
