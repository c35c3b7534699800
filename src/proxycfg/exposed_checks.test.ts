/**
 * Exposed checks reach the sidecar snapshot: the proxycfg manager over a real local agent (with a fake
 * agent cache) carries the agent's exposed check paths in `ConnectProxy.ExposedCheckPaths`, and follows
 * the agent when Expose.Checks is turned off and on again.
 */
import { describe, expect, test } from "bun:test";
import { createLocalAgent, createMemoryCatalog, parseServiceRegistration } from "../agent/index.ts";
import { seededRng, silentLogger } from "../platform/index.ts";
import { simClock } from "../../test/harness/sim_clock.ts";
import { COALESCE_MS, createProxyManager } from "./manager.ts";
import { fakeCache, fakeTypes, flush } from "./manager_kit.test.ts";
import { LEAF } from "./sidecar_state_kit.test.ts";
import type { SidecarSnapshot } from "./snapshot.ts";

const types = fakeTypes;

const web = (exposeChecks: boolean) => parseServiceRegistration({
  Name: "web", Port: 8080,
  Checks: [
    { CheckID: "web-http", Name: "http", HTTP: "http://127.0.0.1:8080/health", Interval: "10s" },
    { CheckID: "web-grpc", Name: "grpc", GRPC: "127.0.0.1:9090/web", Interval: "10s" },
    { CheckID: "web-tcp", Name: "tcp", TCP: "127.0.0.1:8080", Interval: "10s" },
  ],
  Connect: { SidecarService: { Address: "10.0.0.9", Proxy: { Expose: { Checks: exposeChecks } } } },
});

function setup() {
  const clock = simClock();
  const agent = createLocalAgent({
    nodeName: "node1", datacenter: "dc1", clock, rng: seededRng(7), logger: silentLogger(), catalog: createMemoryCatalog(),
    node: { nodeId: "11111111-2222-3333-4444-555555555555", address: "10.0.0.1", taggedAddresses: {}, meta: {} },
    probes: {
      http: async () => ({ status: 200, statusText: "OK", body: "" }),
      tcp: async () => {},
      grpc: async () => 1,
    },
  });
  const fc = fakeCache();
  const published: SidecarSnapshot[] = [];
  const manager = createProxyManager({
    context: { datacenter: "dc1", nodeName: "node1", advertiseAddrLan: "10.0.0.1", intentionDefaultAllow: true },
    cache: fc.cache, types, services: agent, clock, logger: silentLogger(),
    publish: (_id, snap) => published.push(snap),
    remove: () => {},
  });
  const feed = async () => {
    fc.answer("configEntry", null);
    fc.answer("roots", { roots: [], trustDomain: "td.consul", activeRootId: "r1" });
    fc.answer("leaf", LEAF);
    fc.answer("intentions", []);
    await flush();
  };
  const settle = async () => {
    clock.advance(COALESCE_MS);
    await flush();
  };
  return { agent, manager, published, feed, settle };
}

describe("exposed check paths in the sidecar snapshot", () => {
  test("the snapshot carries a path per HTTP and gRPC check of the destination, and follows Expose.Checks", async () => {
    const { agent, manager, published, feed, settle } = setup();
    agent.registerService(web(true));
    await feed();
    const paths = [
      { ListenerPort: 21500, Path: "/grpc.health.v1.Health/Check", LocalPathPort: 9090, Protocol: "http2", ParsedFromCheck: true },
      { ListenerPort: 21501, Path: "/health", LocalPathPort: 8080, Protocol: "http", ParsedFromCheck: true },
    ];
    expect(published.at(-1)!.Proxy.Expose.Checks).toBe(true);
    expect(published.at(-1)!.ConnectProxy.ExposedCheckPaths).toEqual(paths);

    agent.registerService(web(false));
    await settle();
    expect(published.at(-1)!.Proxy.Expose.Checks).toBeFalsy();
    expect(published.at(-1)!.ConnectProxy.ExposedCheckPaths).toEqual([]);

    agent.registerService(web(true));
    await settle();
    expect(published.at(-1)!.ConnectProxy.ExposedCheckPaths).toEqual(paths);
    expect(manager.snapshot("web-sidecar-proxy")).toBe(published.at(-1));
    manager.close();
    agent.stop();
  });
});
