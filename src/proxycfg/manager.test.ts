/**
 * The proxycfg manager over a fake agent cache and a fake local agent: proxies start and stop with the
 * agent's services, watches follow the machines' commands, snapshots are published when valid and
 * coalesced, and a deregistered proxy is removed.
 */
import { describe, expect, test } from "bun:test";
import type { AgentService } from "../agent/index.ts";
import { silentLogger } from "../platform/index.ts";
import { simClock } from "../../test/harness/sim_clock.ts";
import { COALESCE_MS, createProxyManager } from "./manager.ts";
import { agentWith, fakeCache, fakeTypes, flush } from "./manager_kit.test.ts";
import { chain, LEAF, node, registration } from "./sidecar_state_kit.test.ts";
import type { SidecarSnapshot } from "./snapshot.ts";

const types = fakeTypes;

const reg = registration([{ DestinationName: "db", LocalBindPort: 9191 }]);
const SIDECAR: AgentService = {
  Kind: "connect-proxy", ID: reg.ProxyID, Service: reg.Service, Tags: [], Meta: {}, Port: reg.Port, Address: "", Weights: { Passing: 1, Warning: 1 }, EnableTagOverride: false, Proxy: reg.Proxy,
};
const WEB: AgentService = { ID: "web", Service: "web", Tags: [], Meta: {}, Port: 8080, Address: "", Weights: { Passing: 1, Warning: 1 }, EnableTagOverride: false };

function setup() {
  const clock = simClock();
  const fc = fakeCache();
  const local = agentWith({ web: WEB, [SIDECAR.ID]: SIDECAR });
  const published: { id: string; snap: SidecarSnapshot }[] = [];
  const removed: string[] = [];
  const manager = createProxyManager({
    context: { datacenter: "dc1", nodeName: "node1", advertiseAddrLan: "10.0.0.9", intentionDefaultAllow: true },
    cache: fc.cache, types, services: local.agent, clock, logger: silentLogger(),
    publish: (id, snap) => published.push({ id, snap: snap as SidecarSnapshot }),
    remove: (id) => removed.push(id),
  });
  /** Answers everything a sidecar needs to be valid, with a db chain and one healthy db instance. */
  const feed = async () => {
    fc.answer("configEntry", null);
    fc.answer("roots", { roots: [], trustDomain: "td.consul", activeRootId: "r1" });
    fc.answer("leaf", LEAF);
    fc.answer("intentions", []);
    fc.answer("chain", chain("db"));
    fc.answer("health", [node("n1", "db")]);
    await flush();
  };
  return { clock, fc, local, manager, published, removed, feed };
}

describe("proxycfg manager", () => {
  test("manages only connect proxies; publishes the first valid snapshot at once, later ones coalesced", async () => {
    const { manager, fc, published, feed, clock } = setup();
    expect(manager.proxies()).toEqual(["web-sidecar-proxy"]);
    expect(manager.has("web")).toBe(false);
    expect(fc.watching()).toEqual([
      'configEntry {"kind":"proxy-defaults","name":"global"}',
      'configEntry {"kind":"service-defaults","name":"db"}',
      'configEntry {"kind":"service-defaults","name":"web"}',
      'intentions {"service":"web"}',
      'leaf {"service":"web"}',
      "roots {}",
    ]);
    await feed();
    expect(fc.watching()).toContain('health {"service":"db","connect":true}');
    // Valid as soon as the intentions were in: before the chain and its health.
    expect(published).toHaveLength(1);
    expect(published[0]!.snap.Roots).toEqual({ ActiveRootID: "r1", TrustDomain: "td.consul", Roots: [] });
    expect(published[0]!.snap.ConnectProxy.DiscoveryChain).toEqual({});
    clock.advance(COALESCE_MS);
    await flush();
    expect(published).toHaveLength(2);
    const snap = published[1]!.snap;
    expect(snap.ConnectProxy.WatchedUpstreamEndpoints["db"]!["db.default.dc1"]).toHaveLength(1);
    expect(manager.snapshot("web-sidecar-proxy")).toBe(snap);
    manager.close();
  });

  test("later changes are coalesced into one publication per window", async () => {
    const { manager, fc, published, feed, clock } = setup();
    await feed();
    clock.advance(COALESCE_MS);
    await flush();
    expect(published).toHaveLength(2);
    fc.answer("health", [node("n1", "db"), node("n2", "db")]);
    fc.answer("health", [node("n1", "db"), node("n2", "db"), node("n3", "db")]);
    await flush();
    expect(published).toHaveLength(2);
    clock.advance(COALESCE_MS - 1);
    await flush();
    expect(published).toHaveLength(2);
    clock.advance(1);
    await flush();
    expect(published).toHaveLength(3);
    expect(published[2]!.snap.ConnectProxy.WatchedUpstreamEndpoints["db"]!["db.default.dc1"]).toHaveLength(3);
    manager.close();
  });

  test("an upstream dropped from the registration loses its watches; deregistration cancels all and removes the proxy", async () => {
    const { manager, fc, published, removed, local, feed, clock } = setup();
    await feed();
    local.services[SIDECAR.ID] = { ...SIDECAR, Proxy: { ...SIDECAR.Proxy!, Upstreams: [] } };
    local.changed();
    expect(fc.watching().filter((w) => /^(chain|health)/.test(w))).toEqual([]);
    expect(fc.watching()).not.toContain('configEntry {"kind":"service-defaults","name":"db"}');
    clock.advance(COALESCE_MS);
    await flush();
    expect(published.at(-1)!.snap.ConnectProxy.DiscoveryChain).toEqual({});
    delete local.services[SIDECAR.ID];
    local.changed();
    expect(fc.watching()).toEqual([]);
    expect(removed).toEqual(["web-sidecar-proxy"]);
    expect(manager.has("web-sidecar-proxy")).toBe(false);
    // A late value for a cancelled watch publishes nothing.
    const before = published.length;
    clock.advance(COALESCE_MS);
    await flush();
    expect(published).toHaveLength(before);
    manager.close();
  });

  test("runs a mesh gateway's machine for a Kind mesh-gateway service; one that stops being a gateway is stopped and removed", async () => {
    const { manager, fc, local, published, removed, clock } = setup();
    const gateway: AgentService = {
      Kind: "mesh-gateway", ID: "mesh-gateway", Service: "mesh-gateway", Tags: [], Meta: {}, Port: 8443, Address: "10.0.0.5",
      Weights: { Passing: 1, Warning: 1 }, EnableTagOverride: false, Proxy: { MeshGateway: {}, Expose: {} },
    };
    local.services[gateway.ID] = gateway;
    local.changed();
    expect(manager.proxies()).toEqual(["mesh-gateway", "web-sidecar-proxy"]);
    expect(fc.watching()).toContain("catalogServices {}");
    expect(fc.watching()).toContain('configEntries {"kind":"service-resolver"}');
    fc.answer("roots", { roots: [], trustDomain: "td.consul", activeRootId: "r1" });
    fc.answer("configEntry", null);
    fc.answer("datacenters", ["dc1", "dc2"]);
    fc.answer("catalogServices", ["db"]);
    await flush();
    expect(fc.watching()).toContain('meshGateways {"datacenter":"dc2"}');
    expect(fc.watching()).toContain('health {"service":"db","connect":true}');
    fc.answer("health", [node("n1", "db")], (r) => r.service === "db");
    clock.advance(COALESCE_MS);
    await flush();
    const snap = manager.snapshot("mesh-gateway")!;
    expect(snap.Kind).toBe("mesh-gateway");
    expect(published.at(-1)!.id).toBe("mesh-gateway");
    expect(snap.Kind === "mesh-gateway" && Object.keys(snap.MeshGateway.ServiceGroups)).toEqual(["db"]);
    // The same ID registered as a plain service: the gateway stops and is removed.
    local.services[gateway.ID] = { ...gateway, Kind: undefined, Proxy: undefined } as unknown as AgentService;
    local.changed();
    expect(manager.has("mesh-gateway")).toBe(false);
    expect(removed).toEqual(["mesh-gateway"]);
    expect(fc.watching().some((w) => w.startsWith("catalogServices"))).toBe(false);
    manager.close();
  });
});

describe("proxycfg manager with ACL tokens", () => {
  test("a proxy's watches and its leaf use its registration token (CA roots need none); a new token restarts it", async () => {
    const { fc, local, manager, removed } = setup();
    expect(fc.tokens().every((t) => t.endsWith(" -"))).toBe(true); // registered without a token: the agent's default
    local.tokens[SIDECAR.ID] = "proxy-secret";
    local.changed();
    await flush();
    expect(removed).toEqual([SIDECAR.ID]);
    expect(manager.proxies()).toEqual([SIDECAR.ID]);
    expect(fc.tokens()).toEqual([
      "configEntry proxy-secret", "configEntry proxy-secret", "configEntry proxy-secret", "intentions proxy-secret", "leaf proxy-secret", "roots -",
    ]);
  });
});
