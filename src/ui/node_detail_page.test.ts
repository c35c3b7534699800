import { describe, expect, test } from "bun:test";
import { distanceMs } from "../membership/coordinate.ts";
import type { CoordinateEntry, HealthCheck, NodeInfo, NodeServices, Session } from "../model/index.ts";
import { systemClock } from "../platform/index.ts";
import { blockingOf, fakeApi, type FakeRoute } from "../../test/harness/ui_api.ts";
import { createUi, TOKEN_COOKIE } from "./app.tsx";
import { byteSize, checkCounts, truncateOutput } from "./node_checks.tsx";
import { roundTripTimes } from "./node_rtt.ts";
import { lockDelayText } from "./node_views.tsx";
import { leaderNode } from "./nodes_page.tsx";

const check = (id: string, status: string, o: Partial<HealthCheck> = {}): HealthCheck => ({
  Node: "alpha", CheckID: id, Name: id, Status: status, Notes: "", Output: "", ServiceID: "", ServiceName: "", ServiceTags: [], Type: "", Definition: {},
  CreateIndex: 1, ModifyIndex: 1, ...o,
}) as HealthCheck;
const CHECKS = [
  check("serfHealth", "passing", { Name: "Serf Health Status", Output: "Agent alive and reachable" }),
  check("disk", "critical", { Output: "disk 97% full", Notes: "page the on-call" }),
  check("web-ttl", "warning", { ServiceID: "web-1", ServiceName: "web", Type: "ttl" }),
];
const NODE: NodeServices = {
  Node: { ID: "0d1e", Node: "alpha", Address: "10.1.0.5", Datacenter: "dc1", TaggedAddresses: { lan: "10.1.0.5", wan: "198.51.100.5" }, Meta: { rack: "r1" }, CreateIndex: 1, ModifyIndex: 1 },
  Services: {
    "web-1": { ID: "web-1", Service: "web", Tags: ["v1"], Address: "", Meta: null, Port: 8080, Weights: { Passing: 1, Warning: 1 }, EnableTagOverride: false, Proxy: {} as never, Connect: {}, CreateIndex: 1, ModifyIndex: 1 },
  },
};
const coord = (node: string, x: number, segment = "", dims = 8): CoordinateEntry => ({
  Node: node, Segment: segment, Coord: { Vec: [x, ...new Array(dims - 1).fill(0)], Error: 0.2, Adjustment: 0, Height: 0.0001 },
});
const SESSION_ID = "8f246b77-f3e1-ff88-5b48-8ec93abf3e05";
const session = (id: string, name: string): Session => ({
  ID: id, Name: name, Node: "alpha", LockDelay: 15_000_000_000, Behavior: "release", TTL: "30s", NodeChecks: ["serfHealth"], ServiceChecks: null, CreateIndex: 1, ModifyIndex: 1,
});

function ui(over: Record<string, FakeRoute> = {}) {
  const fake = fakeApi({
    "GET /v1/catalog/node/*": (url) => ({ json: url.pathname.endsWith("/alpha") ? NODE : null, index: 2 }),
    "GET /v1/health/node/*": () => ({ json: CHECKS, index: 7 }),
    "GET /v1/coordinate/nodes": () => ({ json: [coord("alpha", 0), coord("beta", 0.002), coord("gamma", 0.001)], index: 3 }),
    "GET /v1/session/node/*": () => ({ json: [session(SESSION_ID, "lock-a")], index: 9 }),
    "PUT /v1/session/destroy/*": () => ({ json: true }),
    ...over,
  });
  const app = createUi({ datacenter: "dc1", contentPath: "/ui/", datacenters: () => ["dc1"], api: fake.api, clock: systemClock() });
  return { app, calls: fake.calls };
}
const get = async (app: ReturnType<typeof ui>["app"], path: string) => {
  const res = await app.request(path);
  return { status: res.status, html: await res.text() };
};
const form = (body: string) => ({ method: "POST", headers: { "Content-Type": "application/x-www-form-urlencoded", Cookie: `${TOKEN_COOKIE}=tok` }, body });

describe("node detail: pure parts", () => {
  test("outputs over 4 KB are cut at a character boundary; sizes in words", () => {
    expect(truncateOutput("short")).toEqual({ text: "short", truncated: false, bytes: 5 });
    const long = "x".repeat(4095) + "é" + "y".repeat(10);
    const cut = truncateOutput(long);
    expect(cut.truncated).toBe(true);
    expect(cut.text).toBe("x".repeat(4095));
    expect(cut.bytes).toBe(4095 + 2 + 10);
    expect([byteSize(812), byteSize(4096), byteSize(1.5 * 1024 * 1024)]).toEqual(["812 bytes", "4.0 KB", "1.5 MB"]);
    expect(checkCounts(CHECKS)).toBe("3 checks: 1 passing, 1 warning, 1 critical");
    expect(lockDelayText(15_000_000_000)).toBe("15 s");
  });

  test("round-trip times: serf's distance, nearest first, same segment and dimensionality only; none without the node's own coordinate", () => {
    const entries = [coord("alpha", 0), coord("far", 0.01), coord("near", 0.001), coord("other-seg", 0.001, "s2"), coord("odd", 0.001, "", 4)];
    const rtt = roundTripTimes(entries, "alpha");
    expect(rtt.kind).toBe("estimates");
    if (rtt.kind !== "estimates") return;
    expect(rtt.rows.map((r) => r.node)).toEqual(["near", "far"]);
    expect(rtt.rows[0]!.ms).toBeCloseTo(distanceMs(entries[0]!.Coord, entries[2]!.Coord), 9);
    expect(rtt.rows[0]!.ms).toBeCloseTo(1.2, 9); // 1 ms apart plus two 0.1 ms heights
    expect(rtt.stats).toEqual({ min: rtt.rows[0]!.ms, median: (rtt.rows[0]!.ms + rtt.rows[1]!.ms) / 2, max: rtt.rows[1]!.ms });
    expect(roundTripTimes(entries, "ghost")).toEqual({ kind: "no-coordinate" });
    expect(roundTripTimes([coord("alpha", 0)], "alpha")).toEqual({ kind: "estimates", segment: "", rows: [] });
  });

  test("the leader's node: the address and the consul service's port of /v1/status/leader; the address alone as a fallback", () => {
    const node = (name: string, address: string, serverPort?: number) => ({
      Node: name, Address: address, Checks: [], Services: serverPort ? [{ Service: "consul", Port: serverPort }] : [],
    }) as unknown as NodeInfo;
    const nodes = [node("s1", "10.0.0.1", 8300), node("s2", "10.0.0.1", 8301), node("c1", "10.0.0.2")];
    expect(leaderNode("10.0.0.1:8301", nodes)).toBe("s2");
    expect(leaderNode("10.0.0.1:8300", nodes)).toBe("s1");
    expect(leaderNode("10.0.0.2:8300", nodes)).toBe("c1");
    expect(leaderNode("10.0.0.1:9999", nodes)).toBeUndefined();
    expect(leaderNode("", nodes)).toBeUndefined();
    expect(leaderNode("[2001:db8::1]:8300", [node("v6", "2001:db8::1", 8300)])).toBe("v6");
  });
});

describe("node detail pages", () => {
  test("the node's URL leads to its health checks: each check's name, status in words, what it checks, output and notes; tabs; live", async () => {
    const { app, calls } = ui();
    const to = await app.request("/ui/dc1/nodes/alpha", { redirect: "manual" });
    expect(to.status).toBe(302);
    expect(to.headers.get("Location")).toBe("/ui/dc1/nodes/alpha/health-checks");
    const { status, html } = await get(app, "/ui/dc1/nodes/alpha/health-checks");
    expect(status).toBe(200);
    expect(html).toContain("<title>alpha – dc1 – Causeway</title>");
    expect(html.match(/<h1>/g)).toHaveLength(1);
    expect([...html.matchAll(/<tr data-check="([^"]+)"/g)].map((m) => m[1])).toEqual(["serfHealth", "disk", "web-ttl"]);
    expect(html).toContain('<td class="health-critical"><span aria-hidden="true">✕ </span>critical</td>');
    expect(html).toContain("<td>the node</td>");
    expect(html).toContain("<td>service web (ttl)</td>");
    expect(html).toContain('<pre class="check-output">disk 97% full</pre>');
    expect(html).toContain("<td>page the on-call</td>");
    expect(html).toContain("3 checks: 1 passing, 1 warning, 1 critical");
    expect(html).toContain("<caption>Health checks on node alpha</caption>");
    expect(html).toContain('<a href="/ui/dc1/nodes/alpha/health-checks" aria-current="page">Health checks</a>');
    expect(html).toContain('<a href="/ui/dc1/nodes/alpha/lock-sessions">Lock sessions</a>');
    expect(html).toContain('<a href="/ui/dc1/nodes">All nodes</a>');
    expect(html).toContain('data-live-url="/ui/events?topic=node-checks&amp;dc=dc1&amp;node=alpha"');
    expect(html).toContain('data-live-index="7"');
    expect(calls.map((c) => c.path)).toEqual(["/v1/catalog/node/alpha", "/v1/health/node/alpha"]);
  });

  test("a node the catalog does not know, and a tab that does not exist, are 404 pages in words", async () => {
    const { app } = ui();
    const missing = await get(app, "/ui/dc1/nodes/ghost/health-checks");
    expect(missing.status).toBe(404);
    expect(missing.html).toContain("There is no node called ghost in dc1.");
    const tab = await get(app, "/ui/dc1/nodes/alpha/bogus");
    expect(tab.status).toBe(404);
    expect(tab.html).toContain("A node has no page called bogus.");
  });

  test("service instances: each links to its instance page, with its health from the node's and its own checks", async () => {
    const { app } = ui();
    const { html } = await get(app, "/ui/dc1/nodes/alpha/service-instances");
    expect(html).toContain('<th scope="row"><a href="/ui/dc1/services/web/instances/alpha/web-1">web-1</a></th>');
    // The node's disk check is critical, so every instance on it is.
    expect(html).toMatch(/<tr data-instance="web-1">.*?<td class="health-critical">/);
    expect(html).toContain("<td>10.1.0.5:8080</td>");
    expect(html).not.toContain("data-live-url");
  });

  test("round-trip time: the other nodes by estimated distance; a node without a coordinate says so", async () => {
    const { app } = ui();
    const { html } = await get(app, "/ui/dc1/nodes/alpha/round-trip-time");
    expect([...html.matchAll(/<tr data-node="([^"]+)">/g)].map((m) => m[1])).toEqual(["gamma", "beta"]);
    expect(html).toContain('<th scope="row"><a href="/ui/dc1/nodes/gamma">gamma</a></th><td>1.20 ms</td>');
    expect(html).toContain("<dt>Median</dt><dd>1.70 ms</dd>");
    const { app: none } = ui({ "GET /v1/coordinate/nodes": () => ({ json: [coord("beta", 0)] }) });
    expect((await get(none, "/ui/dc1/nodes/alpha/round-trip-time")).html).toContain("Node alpha has no coordinate yet");
  });

  test("lock sessions: each with a Destroy form; destroying calls the API as the reader and redirects back (303); a bad id is a 400 that writes nothing", async () => {
    const { app, calls } = ui();
    const { html } = await get(app, "/ui/dc1/nodes/alpha/lock-sessions");
    expect(html).toContain(`<tr data-session="${SESSION_ID}"><th scope="row">lock-a</th>`);
    expect(html).toContain('<form class="detail-inline" method="post" action="/ui/dc1/nodes/alpha/lock-sessions/destroy">');
    expect(html).toContain(`<input type="hidden" name="id" value="${SESSION_ID}"/>`);
    expect(html).toContain('data-live-url="/ui/events?topic=node-sessions&amp;dc=dc1&amp;node=alpha"');
    expect(html).toContain("<td>15 s</td>");
    const done = await app.request("/ui/dc1/nodes/alpha/lock-sessions/destroy", form(`id=${SESSION_ID}`));
    expect(done.status).toBe(303);
    expect(done.headers.get("Location")).toBe(`/ui/dc1/nodes/alpha/lock-sessions?destroyed=${SESSION_ID}`);
    expect(calls.filter((c) => c.method === "PUT")).toEqual([{ method: "PUT", path: `/v1/session/destroy/${SESSION_ID}`, token: "tok", body: undefined }]);
    expect((await get(app, `/ui/dc1/nodes/alpha/lock-sessions?destroyed=${SESSION_ID}`)).html).toContain(`Session ${SESSION_ID} destroyed.`);
    const bad = await app.request("/ui/dc1/nodes/alpha/lock-sessions/destroy", form("id=../../kv"));
    expect(bad.status).toBe(400);
    expect(await bad.text()).toContain("The field id must be a session ID");
    expect(calls.filter((c) => c.method === "PUT")).toHaveLength(1);
  });

  test("a destroy the token may not do is a 403 page in words", async () => {
    const { app } = ui({ "PUT /v1/session/destroy/*": () => ({ status: 403, text: "Permission denied" }) });
    const res = await app.request("/ui/dc1/nodes/alpha/lock-sessions/destroy", form(`id=${SESSION_ID}`));
    expect(res.status).toBe(403);
    expect(await res.text()).toContain("Your token may not do this.");
  });

  test("metadata: the node's meta and tagged addresses", async () => {
    const { app } = ui();
    const { html } = await get(app, "/ui/dc1/nodes/alpha/metadata");
    expect(html).toContain('<tr data-key="rack"><th scope="row">rack</th><td>r1</td></tr>');
    expect(html).toContain('<tr data-tag="wan"><th scope="row">wan</th><td>198.51.100.5</td></tr>');
  });

  test("the nodes list links each node to its page and marks the leader's node in words", async () => {
    const info = (name: string, address: string, port?: number) => ({
      ID: "", Node: name, Address: address, Datacenter: "dc1", TaggedAddresses: {}, Meta: {}, Checks: [],
      Services: port ? [{ ...NODE.Services["web-1"]!, ID: "consul", Service: "consul", Port: port }] : [],
    });
    const { app } = ui({
      "GET /v1/internal/ui/nodes": () => ({ json: [info("s1", "10.0.0.1", 8300), info("s2", "10.0.0.2", 8300)], index: 4 }),
      "GET /v1/status/leader": () => ({ json: "10.0.0.2:8300" }),
    });
    const { html } = await get(app, "/ui/dc1/nodes");
    expect(html).toContain('<tr data-node="s2" data-leader=""><th scope="row"><a href="/ui/dc1/nodes/s2">s2</a></th>');
    expect(html).toContain('<td>10.0.0.2 <span class="node-leader">leader</span></td>');
    expect(html).toContain('<tr data-node="s1"><th scope="row"><a href="/ui/dc1/nodes/s1">s1</a></th>');
    expect(html.match(/class="node-leader"/g)).toHaveLength(1);
  });

  test("the health-checks topic pushes the re-rendered checks when the node's checks change", async () => {
    let current = { checks: CHECKS, index: 7 };
    let changed!: () => void;
    const change = new Promise<void>((r) => (changed = r));
    const { app } = ui({
      "GET /v1/health/node/*": async (url, call) => {
        const wait = blockingOf(url);
        if (wait.blocking && wait.minIndex >= current.index) await Promise.race([change, new Promise((r) => call.signal?.addEventListener("abort", r))]);
        return { json: current.checks, index: current.index };
      },
    });
    const abort = new AbortController();
    const res = await app.request("/ui/events?topic=node-checks&dc=dc1&node=alpha&since=7", { signal: abort.signal });
    const reader = res.body!.getReader();
    let text = "";
    const until = async (s: string) => {
      while (!text.includes(s)) text += new TextDecoder().decode((await reader.read()).value);
    };
    await until("event: open");
    current = { checks: [check("serfHealth", "critical", { Output: "Agent not live or unreachable" })], index: 11 };
    changed();
    await until("id: 11");
    const event = text.slice(text.indexOf("event: fragment"));
    expect(event).toContain('<div id="node-checks-live">');
    expect(event).toContain("1 check: 0 passing, 0 warning, 1 critical");
    expect(event).toContain("Agent not live or unreachable");
    abort.abort();
    await reader.cancel().catch(() => {});
  });
});
