import { describe, expect, test } from "bun:test";
import type { Upstream } from "../../model/index.ts";
import type { SidecarSnapshot } from "../../proxycfg/index.ts";
import { createXdsCache } from "../cache/cache.ts";
import { HealthStatus } from "./health.ts";
import { sidecarResources, toResourceMap, type SidecarResources } from "./index.ts";
import { createMemo } from "./memo.ts";
import { baseSnapshot, chain, DB, dbInstances, withProxyConfig, withUpstream } from "./sidecar_kit.test.ts";

describe("memo", () => {
  test("builds once per (object identities, key); other objects or keys build again", () => {
    const memo = createMemo<{ n: number }>();
    let builds = 0;
    const build = () => ({ n: ++builds });
    const a = {};
    const b = {};
    const first = memo.get([a, b], "k", build);
    expect(memo.get([a, b], "k", build)).toBe(first);
    expect(builds).toBe(1);
    expect(memo.get([a, b], "other", build)).not.toBe(first);
    expect(memo.get([b, a], "k", build)).not.toBe(first); // order matters
    expect(memo.get([a, {}], "k", build)).not.toBe(first); // an equal but different object is a miss
    expect(memo.get([a], "k", build)).not.toBe(first);
    expect(builds).toBe(5);
    expect(memo.get([a, b], "k", build)).toBe(first);
  });

  test("a build that throws stores nothing", () => {
    const memo = createMemo<number>();
    const o = {};
    expect(() => memo.get([o], "k", () => { throw new Error("bad"); })).toThrow("bad");
    expect(memo.get([o], "k", () => 7)).toBe(7);
  });

  test("keeps at most `limit` keys per object combination, dropping the oldest", () => {
    const memo = createMemo<string>(2);
    const o = {};
    let builds = 0;
    const get = (k: string) => memo.get([o], k, () => `${k}#${++builds}`);
    expect([get("a"), get("b"), get("a")]).toEqual(["a#1", "b#2", "a#1"]);
    expect(get("c")).toBe("c#3"); // evicts "a", the oldest inserted
    expect(get("b")).toBe("b#2");
    expect(get("a")).toBe("a#4");
  });
});

describe("memoized sidecar resources", () => {
  // Rendering with the agent cache's shared objects (memo hits) must give the bytes a render from fresh
  // copies (memo misses) gives, whatever plain value changed under those shared objects.
  const versions = (snap: SidecarSnapshot) => {
    const cache = createXdsCache();
    cache.set("n", toResourceMap(sidecarResources(snap)));
    return Object.fromEntries([...cache.get("n")!.types].map(([t, ts]) => [t, ts.version]));
  };
  const upstreamDb = (s: SidecarSnapshot) => s.Proxy.Upstreams!.find((u) => u.DestinationName === "db")!;
  const withDb = (s: SidecarSnapshot, u: Partial<Upstream>): SidecarSnapshot => ({
    ...s,
    Proxy: { ...s.Proxy, Upstreams: s.Proxy.Upstreams!.map((x) => (x.DestinationName === "db" ? { ...x, ...u } : x)) },
  });

  test("equal inputs share messages; any changed value changes the output as a fresh render does", () => {
    const base = withUpstream(baseSnapshot(), DB, chain("db", { protocol: "http" }), { "db.default.dc1": dbInstances() });
    const first = sidecarResources(base);
    // Another proxy of the same service: its own roots wrapper and upstream objects, the cache's values.
    const other = sidecarResources({ ...base, ProxyID: "web-2", Port: 9998, Roots: { ...base.Roots }, Proxy: structuredClone(base.Proxy) });
    expect(other.endpoints[0]).toBe(first.endpoints[0]!);
    expect(other.clusters.filter((c) => c.name !== "local_app")).toEqual(first.clusters.filter((c) => c.name !== "local_app"));
    expect(other.clusters.find((c) => c.name.startsWith("db."))).toBe(first.clusters.find((c) => c.name.startsWith("db."))!);
    expect(other.listeners.find((l) => l.name.startsWith("db:"))).toBe(first.listeners.find((l) => l.name.startsWith("db:"))!);
    expect(other.listeners.find((l) => l.name.startsWith("public_listener"))!.name).toBe("public_listener:0.0.0.0:9998");

    const variants: SidecarSnapshot[] = [
      base,
      { ...base, Port: 9997 },
      { ...base, Address: "10.1.1.1" },
      { ...base, Datacenter: "dc2" },
      { ...base, Roots: { ...base.Roots, TrustDomain: "other.consul" } },
      { ...base, ConnectProxy: { ...base.ConnectProxy, IntentionDefaultAllow: false } },
      withProxyConfig(base, { protocol: "http" }),
      withDb(base, { LocalBindPort: 9192 }),
      withDb(base, { LocalBindAddress: "127.0.0.2" }),
      withDb(base, { Config: { connect_timeout_ms: 1234, protocol: "http" } }),
      withDb(base, { Config: { limits: { max_connections: 10 } } }),
      withDb(base, { Datacenter: "dc3" }),
    ];
    for (const v of variants) expect(versions(v)).toEqual(versions(structuredClone(v)));
    expect(upstreamDb(variants[7]!).LocalBindPort).toBe(9192);
  });

  test("a new health array gives a new load assignment and keeps every other message", () => {
    const base = withUpstream(baseSnapshot(), DB, chain("db"), { "db.default.dc1": dbInstances() });
    const before = sidecarResources(base);
    const after = sidecarResources(withUpstream(base, DB, base.ConnectProxy.DiscoveryChain["db"]!, { "db.default.dc1": dbInstances("dc1", "critical") }));
    const db = (r: SidecarResources) => r.endpoints.find((e) => e.clusterName.startsWith("db."))!;
    expect(db(after)).not.toBe(db(before));
    expect(db(after).endpoints[0]!.lbEndpoints.map((e) => e.healthStatus)).toEqual([HealthStatus.UNHEALTHY, HealthStatus.UNHEALTHY]);
    expect(after.clusters).toEqual(before.clusters);
    // local_app and the prepared query's resources are rebuilt (per proxy); a chain's are the same messages.
    const memoized = (name: string) => name.startsWith("db") || name.startsWith("public_listener");
    expect(after.clusters.filter((c) => memoized(c.name)).length + after.listeners.filter((l) => memoized(l.name)).length).toBe(3);
    after.clusters.forEach((c, i) => (memoized(c.name) ? expect(c).toBe(before.clusters[i]!) : undefined));
    after.listeners.forEach((l, i) => (memoized(l.name) ? expect(l).toBe(before.listeners[i]!) : undefined));
  });
});
