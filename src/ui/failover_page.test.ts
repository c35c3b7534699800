import { describe, expect, test } from "bun:test";
import type { CompiledDiscoveryChain } from "../connect/index.ts";
import type { CheckServiceNode } from "../model/index.ts";
import { systemClock } from "../platform/index.ts";
import { blockingOf, fakeApi } from "../../test/harness/ui_api.ts";
import { createUi } from "./app.tsx";
import { failoverView, servingSentence, type GatewayView } from "./failover_view.ts";

const target = (id: string, service: string, dc: string, mode = "", subset = "", onlyPassing = false) => ({
  ID: id, Service: service, Namespace: "default", Datacenter: dc, MeshGateway: mode ? { Mode: mode } : {}, Subset: onlyPassing ? { OnlyPassing: true } : {},
  SNI: "", Name: "", ...(subset ? { ServiceSubset: subset } : {}),
});
const chain = (mode = "local"): CompiledDiscoveryChain => ({
  ServiceName: "web", Namespace: "default", Datacenter: "dc1", Protocol: "tcp", StartNode: "resolver:web.default.dc1",
  Nodes: { "resolver:web.default.dc1": { Type: "resolver", Name: "web.default.dc1", Resolver: { Default: false, ConnectTimeout: "5s", Target: "web.default.dc1", Failover: { Targets: ["web.default.dc2", "web.default.dc3"] } } } },
  Targets: {
    "web.default.dc1": target("web.default.dc1", "web", "dc1"),
    "web.default.dc2": target("web.default.dc2", "web", "dc2", mode),
    "web.default.dc3": target("web.default.dc3", "web", "dc3", mode),
  },
} as never);
const inst = (node: string, ...statuses: string[]): CheckServiceNode => ({
  Node: { Node: node, Address: "10.0.0.1" }, Service: { ID: `web-${node}`, Service: "web", Port: 80 },
  Checks: statuses.map((s, i) => ({ CheckID: `c${i}`, Status: s })),
} as never);
const gw = (id: string, dc: string, healthy = true): GatewayView => ({ id, node: `srv-${dc}`, datacenter: dc, healthy });
const GATEWAYS = { dc1: [gw("gw-dc1", "dc1")], dc2: [gw("gw-dc2", "dc2")], dc3: [gw("gw-dc3", "dc3")] };

describe("failover view (pure)", () => {
  test("the primary serves while it has a healthy instance; warning counts as healthy, critical does not", () => {
    const v = failoverView({ chain: chain(), gateways: GATEWAYS, reads: {
      "web.default.dc1": { ok: true, instances: [inst("a", "passing"), inst("b", "warning"), inst("c", "passing", "critical")] },
      "web.default.dc2": { ok: true, instances: [inst("d", "passing")] },
      "web.default.dc3": { ok: true, instances: [] },
    } });
    const r = v.resolvers[0]!;
    expect(r.targets.map((t) => [t.datacenter, t.order, t.health])).toEqual([["dc1", 0, { healthy: 2, total: 3 }], ["dc2", 1, { healthy: 1, total: 1 }], ["dc3", 2, { healthy: 0, total: 0 }]]);
    expect(r.serving).toBe(0);
    expect(servingSentence(r, "dc1")).toBe("Serving web from dc1 (primary).");
  });

  test("with every primary instance critical, the first failover target with a healthy instance serves, through the local gateway (mode local) or the remote one (mode remote)", () => {
    const reads = {
      "web.default.dc1": { ok: true as const, instances: [inst("a", "critical")] },
      "web.default.dc2": { ok: true as const, instances: [inst("d", "critical")] },
      "web.default.dc3": { ok: true as const, instances: [inst("e", "passing")] },
    };
    const local = failoverView({ chain: chain("local"), gateways: GATEWAYS, reads }).resolvers[0]!;
    expect(local.serving).toBe(2);
    expect(servingSentence(local, "dc1")).toBe("Serving web from dc3 (failover 2) via mesh gateway gw-dc1 in dc1.");
    const remote = failoverView({ chain: chain("remote"), gateways: { ...GATEWAYS, dc3: [gw("gw-dc3-a", "dc3", false), gw("gw-dc3-b", "dc3")] }, reads }).resolvers[0]!;
    expect(servingSentence(remote, "dc1")).toBe("Serving web from dc3 (failover 2) via mesh gateway gw-dc3-b in dc3.");
    const none = failoverView({ chain: chain("none"), gateways: GATEWAYS, reads }).resolvers[0]!;
    expect(servingSentence(none, "dc1")).toBe("Serving web from dc3 (failover 2), directly (no mesh gateway).");
    const noGateway = failoverView({ chain: chain("remote"), gateways: {}, reads }).resolvers[0]!;
    expect(servingSentence(noGateway, "dc1")).toBe("Serving web from dc3 (failover 2), but dc3 has no mesh gateway for mode remote.");
  });

  test("nothing healthy anywhere, or a datacenter that cannot be read, is said in words", () => {
    const v = failoverView({ chain: chain(), gateways: GATEWAYS, reads: {
      "web.default.dc1": { ok: true, instances: [inst("a", "critical")] },
      "web.default.dc2": { ok: false, error: "No path to datacenter" },
      "web.default.dc3": { ok: true, instances: [] },
    } });
    const r = v.resolvers[0]!;
    expect(r.serving).toBe(-1);
    expect(r.targets[1]!.health).toBeUndefined();
    expect(r.targets[1]!.error).toBe("No path to datacenter");
    expect(servingSentence(r, "dc1")).toBe("No target of web.default.dc1 has a healthy instance: requests to it fail.");
  });

  test("a subset with OnlyPassing counts warning instances as unhealthy", () => {
    const c = chain() as unknown as { Targets: Record<string, unknown> };
    c.Targets["web.default.dc1"] = target("web.default.dc1", "web", "dc1", "", "v1", true);
    const v = failoverView({ chain: c as never, gateways: GATEWAYS, reads: { "web.default.dc1": { ok: true, instances: [inst("a", "warning")] } } });
    expect(v.resolvers[0]!.targets[0]!.health).toEqual({ healthy: 0, total: 1 });
  });
});

describe("the failover page", () => {
  const health: Record<string, { json: CheckServiceNode[]; index: number }> = {
    dc1: { json: [inst("a", "passing")], index: 10 }, dc2: { json: [inst("d", "passing")], index: 20 }, dc3: { json: [], index: 30 },
  };
  // Blocking reads wait until changed() (or their stream ends), as the real API's do until an index moves.
  let waiters: (() => void)[] = [];
  const changed = () => { const w = waiters; waiters = []; for (const f of w) f(); };
  const block = async (url: URL, call: { signal?: AbortSignal }, index: number) => {
    const wait = blockingOf(url);
    if (wait.blocking && wait.minIndex === index) await new Promise<void>((r) => { waiters.push(r); call.signal?.addEventListener("abort", () => r()); });
  };
  const fake = fakeApi({
    "GET /v1/discovery-chain/web": async (url, call) => { await block(url, call, 5); return { json: { Chain: chain() }, index: 5 }; },
    "GET /v1/internal/ui/services": async (url, call) => { await block(url, call, 7); return { json: [{ Name: "mesh-gateway", Kind: "mesh-gateway" }, { Name: "web" }], index: 7 }; },
    "GET /v1/health/service/mesh-gateway": async (url, call) => {
      await block(url, call, 8);
      return { json: [{ Node: { Node: "srv-dc1" }, Service: { ID: "gw-dc1" }, Checks: [{ Status: "passing" }] }], index: 8 };
    },
    "GET /v1/health/service/web": async (url, call) => {
      const dc = url.searchParams.get("dc") ?? "dc1";
      await block(url, call, health[dc]!.index);
      return health[dc]!;
    },
  });
  const app = createUi({ datacenter: "dc1", contentPath: "/ui/", datacenters: () => ["dc1", "dc2", "dc3"], api: fake.api, clock: systemClock() });

  test("targets in order with healthy/total, mode and gateway; each target's health is read in its own datacenter; the combined index", async () => {
    const html = await (await app.request("/ui/dc1/services/web/failover")).text();
    expect(html).toContain("<title>web: failover – dc1 – Causeway</title>");
    expect(html).toContain('<p id="live-counts">Serving web from dc1 (primary).</p>');
    expect([...html.matchAll(/<tr data-target="([^"]+)"/g)].map((m) => m[1])).toEqual(["web.default.dc1", "web.default.dc2", "web.default.dc3"]);
    expect(html).toContain("1 of 1 healthy");
    expect(html).toContain("<td>gw-dc1 in dc1, healthy</td>");
    expect(html).toContain('<a href="/ui/dc1/services/web/failover" aria-current="page">Failover</a>');
    // chain 5 + dc1's services 7 + its gateways 8 + web in dc1 10, dc2 20, dc3 30
    expect(html).toContain('data-live-index="80"');
    expect(fake.calls.map((c) => c.path)).toEqual(expect.arrayContaining(["/v1/health/service/web", "/v1/health/service/web?dc=dc2", "/v1/health/service/web?dc=dc3"]));
  });

  test("live: the stream blocks on every part and pushes when the primary's instances fail, saying it now serves from dc2", async () => {
    const abort = new AbortController();
    const res = await app.request("/ui/events?topic=failover&dc=dc1&service=web&since=80", { signal: abort.signal });
    const reader = res.body!.getReader();
    let text = "";
    const until = async (s: string) => {
      while (!text.includes(s)) text += new TextDecoder().decode((await reader.read()).value);
    };
    await until("event: open");
    // Let the stream reach its blocking reads, then fail dc1's instance.
    for (let i = 0; i < 50 && !fake.calls.some((c) => c.path.startsWith("/v1/health/service/web?index=10")); i++) await new Promise((r) => setImmediate(r));
    health.dc1 = { json: [inst("a", "critical")], index: 11 };
    changed();
    await until("id: 81");
    expect(text).toContain("Serving web from dc2 (failover 1) via mesh gateway gw-dc1 in dc1.");
    abort.abort();
    await reader.cancel().catch(() => {});
  });
});
