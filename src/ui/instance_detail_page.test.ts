import { describe, expect, test } from "bun:test";
import type { CheckServiceNode, HealthCheck, NodeService } from "../model/index.ts";
import { systemClock } from "../platform/index.ts";
import { fakeApi, type FakeRoute } from "../../test/harness/ui_api.ts";
import { createUi } from "./app.tsx";
import { findInstance } from "./instance_detail_page.tsx";

const LONG = `${"log line\n".repeat(600)}END`; // 5,403 bytes: over the 4 KB limit
const check = (id: string, status: string, o: Partial<HealthCheck> = {}) =>
  ({ Node: "n1", CheckID: id, Name: id, Status: status, Notes: "", Output: "", ServiceID: "", ServiceName: "", ServiceTags: [], Type: "", Definition: {}, CreateIndex: 1, ModifyIndex: 1, ...o }) as HealthCheck;
const node = { ID: "", Node: "n1", Address: "10.2.0.1", Datacenter: "dc1", TaggedAddresses: { wan: "203.0.113.1" }, Meta: {}, CreateIndex: 1, ModifyIndex: 1 };
const service = (o: Partial<NodeService>): NodeService => ({
  ID: "web-1", Service: "web", Tags: ["v1"], Address: "", Meta: { version: "1.2" }, Port: 8080, Weights: { Passing: 1, Warning: 1 }, EnableTagOverride: false,
  Proxy: { MeshGateway: {}, Expose: {} }, Connect: {}, CreateIndex: 1, ModifyIndex: 1, ...o,
});
const WEB: CheckServiceNode = {
  Node: node,
  Service: service({ TaggedAddresses: { lan_ipv4: { Address: "10.2.0.9", Port: 8080 } } }),
  Checks: [check("serfHealth", "passing", { Name: "Serf Health Status", Output: "Agent alive and reachable" }), check("web-log", "critical", { ServiceID: "web-1", ServiceName: "web", Output: LONG })],
};
const PROXY: CheckServiceNode = {
  Node: node,
  Service: service({
    Kind: "connect-proxy", ID: "web-1-sidecar-proxy", Service: "web-sidecar-proxy", Port: 21000, Address: "10.2.0.7", Meta: null,
    Proxy: {
      DestinationServiceName: "web", MeshGateway: {},
      Upstreams: [{ DestinationName: "db", LocalBindPort: 9191 }, { DestinationType: "prepared_query", DestinationName: "geo", Datacenter: "dc2", LocalBindAddress: "127.0.0.2", LocalBindPort: 9292 }],
      Expose: { Checks: true, Paths: [{ Path: "/health", ListenerPort: 21500, LocalPathPort: 8080, Protocol: "http" }] },
    },
  }),
  Checks: [],
};

function ui(over: Record<string, FakeRoute> = {}) {
  const fake = fakeApi({
    "GET /v1/health/service/*": (url) => ({ json: url.pathname.endsWith("/web") ? [WEB] : url.pathname.endsWith("/web-sidecar-proxy") ? [PROXY] : [], index: 6 }),
    ...over,
  });
  return createUi({ datacenter: "dc1", contentPath: "/ui/", datacenters: () => ["dc1"], api: fake.api, clock: systemClock() });
}
const get = async (path: string) => {
  const res = await ui().request(path);
  return { status: res.status, html: await res.text() };
};
const BASE = "/ui/dc1/services/web/instances/n1/web-1";

describe("instance detail pages", () => {
  test("findInstance picks the instance by node and ID", () => {
    expect(findInstance([WEB, PROXY], "n1", "web-1-sidecar-proxy")).toBe(PROXY);
    expect(findInstance([WEB], "n2", "web-1")).toBeUndefined();
  });

  test("the instance's URL leads to its health checks: the node's and its own, with output; a long output is cut with a Show all link", async () => {
    const to = await ui().request(BASE, { redirect: "manual" });
    expect(to.headers.get("Location")).toBe(`${BASE}/health-checks`);
    const { status, html } = await get(`${BASE}/health-checks`);
    expect(status).toBe(200);
    expect(html).toContain("<title>web-1 – dc1 – Causeway</title>");
    expect([...html.matchAll(/<tr data-check="([^"]+)"/g)].map((m) => m[1])).toEqual(["serfHealth", "web-log"]);
    expect(html).toContain("<td>the node</td>");
    expect(html).toContain("<td>service web</td>");
    expect(html).toContain('<pre class="check-output">Agent alive and reachable</pre>');
    expect(html).toContain("Showing the first 4.0 KB of 5.3 KB.");
    expect(html).toContain(`<a href="${BASE}/health-checks?full=web-log#check-web-log" data-show-all="true">Show all`);
    expect(html).not.toContain("END");
    expect(html).toContain("2 checks: 1 passing, 0 warning, 1 critical");
    expect(html).toContain(`data-live-url="/ui/events?topic=instance-checks&amp;dc=dc1&amp;service=web&amp;node=n1&amp;id=web-1"`);
    expect(html).toContain('<a href="/ui/dc1/nodes/n1">n1</a>');
    // Not a proxy: no upstreams or exposed-paths tabs.
    expect(html).toContain(`<a href="${BASE}/health-checks" aria-current="page">Health checks</a>`);
    expect(html).not.toContain(">Upstreams</a>");
    const full = await get(`${BASE}/health-checks?full=web-log`);
    expect(full.html).toContain("END</pre>");
    expect(full.html).toContain(">Show less<");
    expect(full.html).toContain("&amp;full=web-log");
  });

  test("a proxy's upstreams match its registration: destination, datacenter, local bind address and port, type", async () => {
    const { html } = await get("/ui/dc1/services/web-sidecar-proxy/instances/n1/web-1-sidecar-proxy/upstreams");
    expect(html).toContain('<tr data-upstream="db"><th scope="row">db</th><td>dc1 (local)</td><td>127.0.0.1:9191</td><td>service</td></tr>');
    expect(html).toContain('<tr data-upstream="geo"><th scope="row">geo</th><td>dc2</td><td>127.0.0.2:9292</td><td>prepared query</td></tr>');
    expect(html).toContain("<caption>Upstreams of web-1-sidecar-proxy: 2</caption>");
    expect(html).toContain("<dt>Proxy for</dt><dd>web</dd>");
    expect(html).not.toContain("data-live-url");
    const plain = await get(`${BASE}/upstreams`);
    expect(plain.html).toContain("web-1 is not a connect proxy, so it has no upstreams.");
  });

  test("exposed paths, addresses and metadata", async () => {
    const exposed = (await get("/ui/dc1/services/web-sidecar-proxy/instances/n1/web-1-sidecar-proxy/exposed-paths")).html;
    expect(exposed).toContain('<tr data-path="/health"><th scope="row">/health</th><td>10.2.0.7:21500</td><td>8080</td><td>http</td><td>no</td></tr>');
    expect(exposed).toContain("checks of the proxied service are exposed");
    const addresses = (await get(`${BASE}/addresses`)).html;
    expect(addresses).toContain("<tr><th scope=\"row\">Service address</th><td>none: clients use the node&#39;s address (10.2.0.1:8080)</td></tr>");
    expect(addresses).toContain('<tr><th scope="row">Service lan_ipv4</th><td>10.2.0.9:8080</td></tr>');
    expect(addresses).toContain('<tr><th scope="row">Node address</th><td>10.2.0.1</td></tr>');
    expect(addresses).toContain('<tr><th scope="row">Node wan</th><td>203.0.113.1</td></tr>');
    const meta = (await get(`${BASE}/metadata`)).html;
    expect(meta).toContain('<tr data-key="version"><th scope="row">version</th><td>1.2</td></tr>');
  });

  test("an instance that is not registered, and a tab that does not exist, are 404 pages in words", async () => {
    const missing = await get("/ui/dc1/services/web/instances/n9/web-1/health-checks");
    expect(missing.status).toBe(404);
    expect(missing.html).toContain("There is no instance web-1 of service web on node n9 in dc1.");
    expect((await get(`${BASE}/bogus`)).status).toBe(404);
  });

  test("the health-checks topic pushes the instance's checks past the page's index; a deregistered instance says so", async () => {
    let all = [WEB];
    const app = ui({ "GET /v1/health/service/*": () => ({ json: all, index: 8 }) });
    const events = async () => {
      const abort = new AbortController();
      const res = await app.request("/ui/events?topic=instance-checks&dc=dc1&service=web&node=n1&id=web-1&since=6", { signal: abort.signal });
      const reader = res.body!.getReader();
      let text = "";
      while (!text.includes("id: 8")) text += new TextDecoder().decode((await reader.read()).value);
      abort.abort();
      await reader.cancel().catch(() => {});
      return text.slice(text.indexOf("event: fragment"));
    };
    const pushed = await events();
    expect(pushed).toContain('<div id="instance-checks-live">');
    expect(pushed).toContain("2 checks: 1 passing, 0 warning, 1 critical");
    expect(pushed).toContain("Show all");
    all = [];
    expect(await events()).toContain("This instance is no longer registered.");
  });
});
