import { describe, expect, test } from "bun:test";
import { gzipSync } from "node:zlib";
import type { CheckServiceNode, NodeInfo, ServiceSummary } from "../model/index.ts";
import { systemClock } from "../platform/index.ts";
import { blockingOf, fakeApi, type FakeRoute } from "../../test/harness/ui_api.ts";
import { canonicalApiPath, createUi, normalizeContentPath, sameOrigin, TOKEN_COOKIE } from "./app.tsx";
import { buildAssets } from "./assets.ts";
import { PAGES } from "./pages.ts";
import { counted } from "./list_parts.tsx";
import { checksText, filterServices, healthOf, PAGE_SIZE, parseServicesQuery } from "./services_page.tsx";

const summary = (name: string, o: Partial<ServiceSummary> = {}): ServiceSummary => ({
  Name: name, Tags: [], Nodes: ["n1"], InstanceCount: 1, ChecksPassing: 1, ChecksWarning: 0, ChecksCritical: 0, ExternalSources: [], ...o,
});
const SEEDED = [
  summary("api", { Tags: ["v2"], ChecksWarning: 1 }),
  summary("db", { Tags: ["primary"], ChecksCritical: 2, InstanceCount: 3 }),
  summary("mesh-gateway", { Kind: "mesh-gateway" }),
  summary("web", { Tags: ["v1", "v2"] }),
];

const nodeInfo = (name: string, checks: [string, string, string][]): NodeInfo => ({
  ID: "", Node: name, Address: `10.1.0.${name.length}`, Datacenter: "dc1", TaggedAddresses: {}, Meta: {}, Services: [],
  Checks: checks.map(([id, status, serviceId]) => ({ CheckID: id, Status: status, ServiceID: serviceId }) as never),
});
const NODES = [nodeInfo("alpha", [["serfHealth", "passing", ""], ["web", "critical", "web"]]), nodeInfo("beta", [["serfHealth", "critical", ""]])];

const instance = (node: string, id: string, status: string, address = ""): CheckServiceNode => ({
  Node: { ID: "", Node: node, Address: "10.2.0.1", Datacenter: "dc1", TaggedAddresses: {}, Meta: {}, CreateIndex: 1, ModifyIndex: 1 },
  Service: { ID: id, Service: "web", Tags: ["v1"], Address: address, Meta: null, Port: 8080, Weights: { Passing: 1, Warning: 1 }, EnableTagOverride: false, Proxy: {} as never, Connect: {}, CreateIndex: 1, ModifyIndex: 1 },
  Checks: [{ CheckID: "serfHealth", Name: "Serf Health Status", Status: "passing" }, { CheckID: `${id}-ttl`, Name: "ttl", Status: status }] as never,
});
const INSTANCES = [instance("n1", "web-1", "passing"), instance("n2", "web-2", "critical", "2001:db8::5")];

/** The UI over a fake API; `over` replaces its routes ("GET /v1/..."). */
function ui(over: Record<string, FakeRoute> = {}, contentPath = "/ui/") {
  const fake = fakeApi({
    "GET /v1/internal/ui/services": (url) => {
      if (url.searchParams.get("dc") === "dc9") return { status: 500, text: "No path to datacenter" };
      return { json: SEEDED, index: 5 };
    },
    "GET /v1/internal/ui/nodes": () => ({ json: NODES, index: 3 }),
    "GET /v1/health/service/*": (url) => ({ json: url.pathname.endsWith("/web") ? INSTANCES : [], index: 4 }),
    ...over,
  });
  const app = createUi({ datacenter: "dc1", contentPath, datacenters: () => ["dc1", "dc2"], api: fake.api, clock: systemClock() });
  const asked = () => fake.calls.map((c) => ({ path: c.path, token: c.token }));
  return { app, asked };
}
const { style: STYLE, client: LIVE } = buildAssets(PAGES);

/** The text of every element matching a simple `<tag ...data-x="...">` pattern, for assertions on HTML. */
const rows = (html: string) => [...html.matchAll(/<tr data-service="([^"]+)">/g)].map((m) => m[1]);

describe("the web UI's services page", () => {
  test("/ui/ goes to the local datacenter's services", async () => {
    const { app } = ui();
    for (const path of ["/ui", "/ui/"]) {
      const res = await app.request(path);
      expect(res.status).toBe(302);
      expect(res.headers.get("Location")).toBe("/ui/dc1/services");
    }
  });

  test("rows, health in words, counts, one h1, landmarks, caption and scopes, the security headers", async () => {
    const { app, asked } = ui();
    const res = await app.request("/ui/dc1/services", { headers: { Cookie: `${TOKEN_COOKIE}=secret-1` } });
    expect(res.status).toBe(200);
    expect(res.headers.get("Content-Security-Policy")).toContain("default-src 'self'");
    const html = await res.text();
    expect(html.startsWith("<!DOCTYPE html>")).toBe(true);
    expect(rows(html)).toEqual(["api", "db", "mesh-gateway", "web"]);
    expect(html).toContain("4 services: 2 passing, 1 warning, 1 critical");
    expect(html).toMatch(/<td class="health-critical"><span aria-hidden="true">✕ <\/span>critical \(1 passing, 2 critical of 3 checks\)<\/td>/);
    expect(html.match(/<h1>/g)).toHaveLength(1);
    expect(html).toContain("<title>Services – dc1 – Causeway</title>");
    expect(html).toContain('<a class="skip" href="#content">Skip to content</a>');
    expect(html).toContain('<main id="content">');
    expect(html).toContain("<caption>Services in dc1: 4 matching</caption>");
    expect(html).toContain('<th scope="col">Service</th>');
    // The datacenter switcher, the current one marked.
    expect(html).toContain('<a href="/ui/dc2/services">dc2</a>');
    expect(html).toContain('<a href="/ui/dc1/services" aria-current="page">dc1</a>');
    expect(asked()).toEqual([{ path: "/v1/internal/ui/services", token: "secret-1" }]);
  });

  test("filters by name, tag, health and kind, as a GET form that works without JavaScript", async () => {
    const { app } = ui();
    const page = async (qs: string) => rows(await (await app.request(`/ui/dc2/services?${qs}`)).text());
    expect(await page("s=E")).toEqual(["mesh-gateway", "web"]);
    expect(await page("tag=v2")).toEqual(["api", "web"]);
    expect(await page("status=critical")).toEqual(["db"]);
    expect(await page("kind=typical")).toEqual(["api", "db", "web"]);
    expect(await page("kind=mesh-gateway&status=passing")).toEqual(["mesh-gateway"]);
    const html = await (await app.request("/ui/dc2/services?status=warning")).text();
    expect(html).toContain('<form class="filters" method="get" action="/ui/dc2/services" role="search">');
    expect(html).toContain('<option value="warning" selected="">warning</option>');
  });

  test("paging: 50 rows a page, previous and next links keep the filters", async () => {
    const many = Array.from({ length: 120 }, (_, i) => summary(`svc-${String(i).padStart(3, "0")}`, { Tags: ["t"] }));
    const { app } = ui({ "GET /v1/internal/ui/services": () => ({ json: many, index: 1 }) });
    const first = await (await app.request("/ui/dc1/services?tag=t")).text();
    expect(rows(first)).toHaveLength(PAGE_SIZE);
    expect(first).toContain("120 matching, page 1 of 3");
    expect(first).toContain('<a href="/ui/dc1/services?tag=t&amp;page=2" rel="next">Next page</a>');
    const last = await (await app.request("/ui/dc1/services?tag=t&page=3")).text();
    expect(rows(last)).toEqual(many.slice(100).map((s) => s.Name));
    expect(last).toContain('rel="prev"');
    expect(last).not.toContain('rel="next"');
  });

  test("an unknown datacenter is a 404 page in words; the content path is in every link", async () => {
    const { app } = ui();
    const res = await app.request("/ui/dc9/services");
    expect(res.status).toBe(404);
    expect(await res.text()).toContain("There is no datacenter called dc9.");
    const { app: custom } = ui({}, "consul/ui");
    const html = await (await custom.request("/consul/ui/dc1/services")).text();
    const links = [...html.matchAll(/(?:href|src|action)="([^"]+)"/g)].map((m) => m[1]!).filter((l) => !l.startsWith("#"));
    expect(links.length).toBeGreaterThan(5);
    for (const l of links) expect(l.startsWith("/consul/ui/"), l).toBe(true);
    expect(normalizeContentPath("/")).toBe("/");
  });

  test("page weight: the client module and the stylesheet stay far under 10 KB and 15 KB gzipped", () => {
    const gz = (t: string) => gzipSync(new TextEncoder().encode(t)).length;
    expect(gz(LIVE.body)).toBeLessThan(10 * 1024);
    expect(gz(STYLE.body)).toBeLessThan(15 * 1024);
  });

  test("assets: hashed names, served with their type and cached forever; unknown names 404", async () => {
    const { app } = ui();
    expect(STYLE.name).toMatch(/^style-[0-9a-f]{12}\.css$/);
    const css = await app.request(`/ui/assets/${STYLE.name}`);
    expect(css.headers.get("Content-Type")).toBe("text/css; charset=utf-8");
    expect(css.headers.get("Cache-Control")).toContain("immutable");
    expect(await css.text()).toBe(STYLE.body);
    expect((await app.request(`/ui/assets/${LIVE.name}`)).headers.get("Content-Type")).toBe("text/javascript; charset=utf-8");
    expect((await app.request("/ui/assets/style-000000000000.css")).status).toBe(404);
  });

  test("the pure parts: health is the worst check; the query is read defensively", () => {
    expect(SEEDED.map(healthOf)).toEqual(["warning", "critical", "passing", "passing"]);
    expect(parseServicesQuery(() => undefined)).toEqual({ s: "", tag: "", status: "", kind: "", page: 1 });
    expect(parseServicesQuery((k) => ({ status: "bogus", page: "-3" })[k])).toMatchObject({ status: "", page: 1 });
    expect(filterServices(SEEDED, { s: "", tag: "", status: "", kind: "nope", page: 1 })).toEqual([]);
    expect(checksText(summary("x", { ChecksPassing: 1 }))).toBe("1 passing of 1 check");
    expect(checksText(summary("x", { ChecksPassing: 0 }))).toBe("no checks");
    expect([counted(1, "instance"), counted(0, "node"), counted(2, "service")]).toEqual(["1 instance", "0 nodes", "2 services"]);
  });

  test("the live stream: an open event, then the re-rendered table when the read's index passes the page's", async () => {
    let current = { value: SEEDED, index: 5 };
    let changed!: () => void;
    const change = new Promise<void>((r) => (changed = r));
    const { app, asked } = ui({
      "GET /v1/internal/ui/services": async (url, call) => {
        const wait = blockingOf(url);
        if (wait.blocking && wait.minIndex >= current.index) await Promise.race([change, new Promise((r) => call.signal?.addEventListener("abort", r))]);
        return { json: current.value, index: current.index };
      },
    });
    const page = await (await app.request("/ui/dc1/services?tag=v2")).text();
    expect(page).toContain('data-live-url="/ui/events?topic=services&amp;dc=dc1&amp;tag=v2"');
    expect(page).toContain('data-live-index="5"');
    const abort = new AbortController();
    const res = await app.request("/ui/events?topic=services&dc=dc1&tag=v2&since=5", { signal: abort.signal });
    expect(res.headers.get("Content-Type")).toContain("text/event-stream");
    const reader = res.body!.getReader();
    let text = "";
    const until = async (s: string) => {
      while (!text.includes(s)) text += new TextDecoder().decode((await reader.read()).value);
    };
    await until("event: open");
    current = { value: [...SEEDED, summary("zeta", { Tags: ["v2"] })], index: 9 };
    changed();
    await until("id: 9");
    const event = text.slice(text.indexOf("event: fragment"));
    expect(event).toContain('<tr data-service="zeta">');
    expect(event).not.toContain('<tr data-service="db">'); // the page's own filter (tag v2) applies
    expect(event).toContain("id: 9");
    // The stream's reads block on the API with the page's index.
    expect(asked().map((a) => a.path)).toContain("/v1/internal/ui/services?index=5&wait=60000ms");
    abort.abort();
    await reader.cancel().catch(() => {});
  });

  test("an unknown live topic is a 400", async () => {
    const { app } = ui();
    expect((await app.request("/ui/events?topic=nope")).status).toBe(400);
  });

  test("nodes: health from the node's own checks, in words; filters; its own live topic", async () => {
    const { app } = ui();
    const html = await (await app.request("/ui/dc1/nodes")).text();
    expect([...html.matchAll(/<tr data-node="([^"]+)">/g)].map((m) => m[1])).toEqual(["alpha", "beta"]);
    // alpha's failing check belongs to a service: the node itself is healthy.
    expect(html).toMatch(/<tr data-node="alpha"><th scope="row"><a href="\/ui\/dc1\/nodes\/alpha">alpha<\/a><\/th><td class="health-passing">/);
    expect(html).toMatch(/<tr data-node="beta"><th scope="row"><a href="\/ui\/dc1\/nodes\/beta">beta<\/a><\/th><td class="health-critical">/);
    expect(html).toContain("2 nodes: 1 passing, 0 warning, 1 critical");
    expect(html).toContain("<title>Nodes – dc1 – Causeway</title>");
    expect(html).toContain('<a href="/ui/dc1/nodes" aria-current="page">Nodes</a>');
    expect(html).toContain('data-live-url="/ui/events?topic=nodes&amp;dc=dc1"');
    const critical = await (await app.request("/ui/dc1/nodes?status=critical")).text();
    expect([...critical.matchAll(/<tr data-node="([^"]+)">/g)].map((m) => m[1])).toEqual(["beta"]);
  });

  test("a service's instances: node, address, health from all its checks, each check in words; the list links to it", async () => {
    const { app } = ui();
    const list = await (await app.request("/ui/dc1/services")).text();
    expect(list).toContain('<th scope="row"><a href="/ui/dc1/services/web/instances">web</a></th>');
    expect((await app.request("/ui/dc1/services/web", { redirect: "manual" })).headers.get("Location")).toBe("/ui/dc1/services/web/instances");
    const html = await (await app.request("/ui/dc1/services/web/instances")).text();
    expect([...html.matchAll(/<tr data-instance="([^"]+)">/g)].map((m) => m[1])).toEqual(["n1/web-1", "n2/web-2"]);
    expect(html).toMatch(/<tr data-instance="n2\/web-2"><th scope="row"><a href="\/ui\/dc1\/services\/web\/instances\/n2\/web-2">web-2<\/a><\/th><td class="health-critical">/);
    expect(html).toContain("<td>[2001:db8::5]:8080</td>");
    expect(html).toContain("<td>10.2.0.1:8080</td>");
    expect(html).toContain("<li>ttl: critical</li>");
    expect(html).toContain("2 instances: 1 passing, 0 warning, 1 critical");
    expect(html).toContain("<title>web – dc1 – Causeway</title>");
    expect(html).toContain('data-live-url="/ui/events?topic=instances&amp;dc=dc1&amp;service=web"');
    expect(await (await app.request("/ui/dc1/services/nope/instances")).text()).toContain("This service has no instances in dc1.");
  });
});

describe("the web UI's frame", () => {
  test("a cross-site form post is refused before any handler runs; same-origin and Origin-less posts pass", async () => {
    const { app } = ui();
    const post = (headers: Record<string, string>) => app.request("http://agent:8500/ui/settings", { method: "POST", headers: { "Content-Type": "application/x-www-form-urlencoded", Host: "agent:8500", ...headers }, body: "theme=dark&live=on" });
    const refused = await post({ Origin: "http://evil.example" });
    expect(refused.status).toBe(403);
    expect(refused.headers.get("Set-Cookie")).toBeNull();
    expect(refused.headers.get("Content-Security-Policy")).toContain("default-src 'self'");
    expect((await post({ Origin: "null" })).status).toBe(403);
    const same = await post({ Origin: "http://agent:8500" });
    expect(same.status).toBe(303);
    expect(same.headers.get("Set-Cookie")).toContain("causeway-theme=dark");
    expect((await post({})).status).toBe(303);
  });

  test("settings: theme and live updates kept in HttpOnly cookies, every page rendered with them; bad values are a 400 that sets nothing", async () => {
    const { app } = ui();
    const saved = await app.request("/ui/settings", { method: "POST", headers: { "Content-Type": "application/x-www-form-urlencoded" }, body: "theme=dark&live=off" });
    expect(saved.headers.get("Location")).toBe("/ui/settings?saved=1");
    const cookies = saved.headers.getSetCookie();
    expect(cookies.every((c) => c.includes("HttpOnly") && c.includes("SameSite=Strict") && c.includes("Path=/ui/"))).toBe(true);
    const cookie = cookies.map((c) => c.split(";")[0]).join("; ");
    const page = await (await app.request("/ui/dc1/services", { headers: { Cookie: cookie } })).text();
    expect(page).toContain('<html lang="en" data-theme="dark">');
    // Live off: the page does not open its stream (it keeps its Refresh link).
    expect(page).not.toContain("data-live-url");
    expect(page).toContain(">Refresh</a>");
    const form = await (await app.request("/ui/settings?saved=1", { headers: { Cookie: cookie } })).text();
    expect(form).toContain('<input type="radio" name="theme" value="dark" checked=""');
    expect(form).toContain("Saved.");
    const bad = await app.request("/ui/settings", { method: "POST", headers: { "Content-Type": "application/x-www-form-urlencoded" }, body: "theme=neon&live=on" });
    expect(bad.status).toBe(400);
    expect(await bad.text()).toContain("theme must be system, light or dark");
    expect(bad.headers.get("Set-Cookie")).toBeNull();
    const plain = await (await app.request("/ui/dc1/services")).text();
    expect(plain).toContain('<html lang="en">');
    expect(plain).toContain("data-live-url");
  });
});

describe("the web UI's guards", () => {
  test("API paths that URL parsing would change are refused before they reach the API", async () => {
    expect(canonicalApiPath("/v1/kv/a/b?keys")).toBe(true);
    expect(canonicalApiPath("/v1/kv/a%2Fb%3F")).toBe(true);
    for (const p of ["/v1/kv/x/../agent/self", "/v1/kv/x/%2e%2e/agent/self", "/v1/kv/./x", "/v1/kv/x/.."]) expect(canonicalApiPath(p), p).toBe(false);
    const { app, asked } = ui({ "GET /v1/agent/self": () => ({ json: { Config: {} } }), "GET /v1/kv/*": () => ({ json: null }) });
    // A key whose decoded parts climb out of /v1/kv names no page (400 in words), and no topic.
    const edit = await app.request("/ui/dc1/kv/x%2F..%2F..%2Fagent%2Fself/edit");
    expect(edit.status).toBe(400);
    expect(await edit.text()).toContain("a &#39;.&#39; or &#39;..&#39; part");
    expect((await app.request("/ui/dc1/kv/x%2F../delete", { method: "POST" })).status).toBe(400);
    expect((await app.request("/ui/events?topic=kv-key&dc=dc1&key=../../agent/self")).status).toBe(400);
    expect((await app.request("/ui/events?topic=kv-list&dc=dc1&folder=a/../")).status).toBe(400);
    expect(asked().filter((a) => !a.path.startsWith("/v1/kv/"))).toEqual([]);
  });

  test("a live topic is one a page module names: prototype members are not topics", async () => {
    const { app } = ui();
    for (const name of ["constructor", "valueOf", "toString", "__proto__"]) expect((await app.request(`/ui/events?topic=${name}`)).status, name).toBe(400);
  });

  test("a stream whose read fails at once is answered as an error, which ends the browser's EventSource", async () => {
    const { app } = ui({ "GET /v1/internal/ui/services": () => ({ status: 403, text: "Permission denied" }) });
    const res = await app.request("/ui/events?topic=services&dc=dc1");
    expect(res.status).toBe(403);
    expect(res.headers.get("Content-Type")).not.toContain("text/event-stream");
  });

  test("same origin: Sec-Fetch-Site decides when the browser sent it; else the Origin's host is the Host or a proxy's X-Forwarded-Host", () => {
    expect(sameOrigin({ origin: "https://consul.example", host: "127.0.0.1:8500", fetchSite: "same-origin" })).toBe(true);
    expect(sameOrigin({ origin: "https://consul.example", host: "consul.example", fetchSite: "cross-site" })).toBe(false);
    expect(sameOrigin({ origin: "https://consul.example", host: "127.0.0.1:8500", forwardedHost: "consul.example" })).toBe(true);
    expect(sameOrigin({ origin: "https://evil.example", host: "127.0.0.1:8500", forwardedHost: "consul.example" })).toBe(false);
    expect(sameOrigin({ host: "127.0.0.1:8500" })).toBe(true);
  });

  test("pages are never cached; cookies are Secure when the request came over TLS (here or at a proxy)", async () => {
    const { app } = ui();
    expect((await app.request("/ui/dc1/services")).headers.get("Cache-Control")).toBe("no-store");
    const form = { method: "POST", headers: { "Content-Type": "application/x-www-form-urlencoded" }, body: "theme=dark&live=on" };
    const plain = await app.request("/ui/settings", form);
    expect(plain.headers.getSetCookie().some((c) => /;\s*Secure/i.test(c))).toBe(false);
    const proxied = await app.request("/ui/settings", { ...form, headers: { ...form.headers, "X-Forwarded-Proto": "https" } });
    expect(proxied.headers.getSetCookie().every((c) => /;\s*Secure/i.test(c))).toBe(true);
  });
});
