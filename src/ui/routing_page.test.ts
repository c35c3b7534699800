import { describe, expect, test } from "bun:test";
import type { CompiledDiscoveryChain } from "../connect/index.ts";
import { systemClock } from "../platform/index.ts";
import { blockingOf, fakeApi, type FakeRoute } from "../../test/harness/ui_api.ts";
import { createUi, TOKEN_COOKIE } from "./app.tsx";
import { compiledChain, ROUTED_ENTRIES } from "./chain_fixtures.test.ts";

const ROUTED = compiledChain("web", ROUTED_ENTRIES);
const RESOLVER_ENTRY = ROUTED_ENTRIES[3];

/** The UI over a fake API answering web's routed chain and any other service's default chain; `over` replaces routes. */
function ui(over: Record<string, FakeRoute> = {}, contentPath = "/ui/") {
  const fake = fakeApi({
    "GET /v1/discovery-chain/*": (url) => {
      const name = decodeURIComponent(url.pathname.slice("/v1/discovery-chain/".length));
      return { json: { Chain: name === "web" ? ROUTED : compiledChain(name) }, index: 7 };
    },
    "GET /v1/config/service-resolver/web": () => ({ json: { ...RESOLVER_ENTRY as object, CreateIndex: 5, ModifyIndex: 6 }, index: 6 }),
    "GET /v1/config/*": (url) => ({ status: 404, text: `Config entry not found for ${url.pathname}` }),
    ...over,
  });
  const app = createUi({ datacenter: "dc1", contentPath, datacenters: () => ["dc1", "dc2"], api: fake.api, clock: systemClock() });
  return { app, calls: fake.calls };
}

const all = (html: string, re: RegExp) => [...html.matchAll(re)].map((m) => m[1]);
const get = async (app: ReturnType<typeof ui>["app"], path: string) => {
  const res = await app.request(path, { headers: { Cookie: `${TOKEN_COOKIE}=tok-1` } });
  return { status: res.status, html: await res.text() };
};

describe("a service's routing page", () => {
  test("a routed chain: the tab, one SVG node per chain node, labelled edges, dashed failovers in order, the same in the tables", async () => {
    const { app, calls } = ui();
    const { status, html } = await get(app, "/ui/dc1/services/web/routing");
    expect(status).toBe(200);
    expect(html).toContain("<title>web – dc1 – Causeway</title>");
    expect(html).toContain('<a href="/ui/dc1/services/web/routing" aria-current="page">Routing</a>');
    expect(html).toMatch(/<svg class="chain-graph" role="group" aria-labelledby="chain-caption"/);
    expect(html).toContain('<figcaption id="chain-caption">Discovery chain of web in dc1, left to right');
    expect(all(html, /data-node-id="([^"]+)"/g).sort()).toEqual(Object.keys(ROUTED.Nodes).sort());
    expect(all(html, /data-target-id="([^"]+)"/g).sort()).toEqual(Object.keys(ROUTED.Targets).sort());
    const edges = all(html, /<g class="chain-edge chain-edge-\w+" (data-edge-from="[^"]+" data-edge-to="[^"]+" data-edge-kind="\w+"><path [^>]*><\/path><text[^>]*>[^<]*)<\/text>/g);
    expect(edges.filter((e) => e!.includes('data-edge-kind="split"')).map((e) => e!.slice(e!.lastIndexOf(">") + 1))).toEqual(["90%", "10%"]);
    const failovers = edges.filter((e) => e!.includes('data-edge-kind="failover"'));
    expect(failovers).toHaveLength(4);
    for (const f of failovers) expect(f).toContain('stroke-dasharray="7 5"');
    expect(failovers.filter((e) => e!.includes('data-edge-from="resolver:v1.web.default.dc1"')).map((e) => e!.slice(e!.lastIndexOf(">") + 1))).toEqual(["failover 1", "failover 2"]);
    for (const e of edges.filter((e) => !e!.includes('data-edge-kind="failover"'))) expect(e).not.toContain("stroke-dasharray");
    expect(html).toContain('aria-label="resolver v1.web.default.dc1, failover to dc2 then dc3"');
    expect(html).toContain('<a href="/ui/dc1/services/web/routing?node=resolver%3Av1.web.default.dc1#chain-entry" aria-label=');
    // The tables: every node (a link to its config) and every edge, with its label and kind in words.
    expect(all(html, /<tr data-row-node="([^"]+)">/g)).toHaveLength(Object.keys(ROUTED.Nodes).length + Object.keys(ROUTED.Targets).length);
    expect(html).toContain("<caption>Discovery chain of web in dc1: 12 nodes</caption>");
    expect(html).toContain("<caption>Discovery chain of web in dc1: 11 edges</caption>");
    expect(html).toContain('<tr data-row-from="resolver:v1.web.default.dc1" data-row-to="target:v1.web.default.dc3"><td>resolver v1.web.default.dc1</td><td>target v1.web.default.dc3</td><td>failover 2</td><td>failover target</td></tr>');
    expect(html).toContain('<tr data-row-from="splitter:web" data-row-to="resolver:v1.web.default.dc1"><td>splitter web</td><td>resolver v1.web.default.dc1</td><td>90%</td><td>split</td></tr>');
    expect(html).toContain('<td>router web</td><td>resolver web-admin.default.dc1</td><td>path prefix /admin</td><td>route</td>');
    expect(html).toContain('<th scope="col">From</th>');
    expect(html).toContain('<p id="live-counts">5 chain nodes, 7 targets, 11 edges; protocol http</p>');
    expect(html).toContain('data-live-url="/ui/events?topic=routing&amp;dc=dc1&amp;service=web"');
    expect(html).toContain('data-live-index="7"');
    expect(html).toContain("Choose a node in the graph or in the table to see its configuration.");
    expect(html).not.toContain("chain-default");
    expect(html.match(/<h1>/g)).toHaveLength(1);
    for (const href of all(html, /href="([^"#][^"]*)"/g)) expect(href!.startsWith("/ui/")).toBe(true); // all but the skip link
    expect(calls.map((c) => [c.path, c.token])).toEqual([["/v1/discovery-chain/web", "tok-1"]]);
  });

  test("no config entries (or an unknown service): the default chain of one resolver and one target, said in words", async () => {
    const { app } = ui();
    const { status, html } = await get(app, "/ui/dc1/services/nothing-here/routing");
    expect(status).toBe(200);
    expect(all(html, /data-node-id="([^"]+)"/g)).toEqual(["resolver:nothing-here.default.dc1"]);
    expect(all(html, /data-target-id="([^"]+)"/g)).toEqual(["nothing-here.default.dc1"]);
    expect(html).toContain("nothing-here has no routing config entries in dc1: the default chain sends every request to nothing-here in dc1.");
    expect(html).toContain("1 chain node, 1 target, 1 edge; protocol tcp");
  });

  test("?node= a resolver: its chain node and its service-resolver config entry as JSON; the node is marked current", async () => {
    const { app, calls } = ui();
    const { status, html } = await get(app, "/ui/dc1/services/web/routing?node=resolver%3Av1.web.default.dc1");
    expect(status).toBe(200);
    expect(html).toContain('<h2 id="chain-entry-title">resolver v1.web.default.dc1</h2>');
    expect(html).toContain('<section id="chain-entry" aria-labelledby="chain-entry-title"');
    expect(html).toContain("Config entry service-resolver web");
    const pre = all(html, /<pre class="chain-json" data-json="(\w+)">/g);
    expect(pre).toEqual(["chain", "entry"]);
    const entry = html.slice(html.indexOf('data-json="entry">'));
    expect(entry).toContain("&quot;Datacenters&quot;: [\n        &quot;dc2&quot;,\n        &quot;dc3&quot;\n      ]");
    expect(html).toMatch(/data-node-id="resolver:v1.web.default.dc1"><a href="[^"]+" aria-label="[^"]+" aria-current="true">/);
    expect(html).toContain("chain-node chain-resolver chain-selected");
    expect(html).toContain("&amp;node=resolver%3Av1.web.default.dc1"); // the live stream keeps the selection
    expect(calls.map((c) => c.path)).toEqual(["/v1/discovery-chain/web", "/v1/config/service-resolver/web"]);
  });

  test("?node= a router without its entry, or a target: the defaults in words, the resolver of the target's service", async () => {
    const { app, calls } = ui();
    const router = await get(app, "/ui/dc1/services/web/routing?node=router%3Aweb");
    expect(router.html).toContain("There is no service-router config entry for web: the defaults apply.");
    const target = await get(app, "/ui/dc1/services/web/routing?node=target%3Aweb-admin.default.dc1");
    expect(target.html).toContain('<h2 id="chain-entry-title">target web-admin.default.dc1</h2>');
    expect(target.html).toContain("There is no service-resolver config entry for web-admin: the defaults apply.");
    expect(target.html).toContain("&quot;SNI&quot;: &quot;web-admin.default.dc1.internal.");
    expect(calls.map((c) => c.path)).toContain("/v1/config/service-router/web");
    expect(calls.map((c) => c.path)).toContain("/v1/config/service-resolver/web-admin");
  });

  test("?node= naming nothing in the chain: 400, the chain still shown, the parameter named", async () => {
    const { app, calls } = ui();
    const { status, html } = await get(app, "/ui/dc1/services/web/routing?node=resolver%3Anope");
    expect(status).toBe(400);
    expect(html).toContain('The node parameter &quot;resolver:nope&quot; names no node of the discovery chain of web.');
    expect(html).toContain('data-node-id="router:web"');
    expect(calls.map((c) => c.path)).toEqual(["/v1/discovery-chain/web"]);
  });

  test("a config entry the token may not read: said in words, the rest of the page intact", async () => {
    const { app } = ui({ "GET /v1/config/service-resolver/web": () => ({ status: 403, text: "Permission denied" }) });
    const { status, html } = await get(app, "/ui/dc1/services/web/routing?node=resolver%3Av2.web.default.dc1");
    expect(status).toBe(200);
    expect(html).toContain('<p role="alert">Your token may not read the service-resolver config entry for web.</p>');
  });

  test("API errors in words: a chain that does not compile, Connect off, no permission, an unknown datacenter", async () => {
    const { app } = ui({
      "GET /v1/discovery-chain/*": (url) => {
        if (url.searchParams.get("dc") === "dc9") return { status: 500, text: "No path to datacenter" };
        if (url.pathname.endsWith("/secret")) return { status: 403, text: "Permission denied" };
        if (url.pathname.endsWith("/plain")) return { status: 500, text: "no cluster ca config setup" };
        return { status: 500, text: "resolver web has no targets" };
      },
    });
    const broken = await get(app, "/ui/dc1/services/web/routing");
    expect(broken.status).toBe(500);
    expect(broken.html).toContain("The agent could not answer: resolver web has no targets");
    // Consul's answer while Connect is off is the page's content, not a failure.
    const off = await get(app, "/ui/dc1/services/plain/routing");
    expect(off.status).toBe(200);
    expect(off.html).toContain("<title>Connect is not enabled – dc1 – Causeway</title>");
    expect(off.html).toContain("compile only with Connect");
    const denied = await get(app, "/ui/dc1/services/secret/routing");
    expect(denied.status).toBe(403);
    expect(denied.html).toContain("Your token may not do this.");
    const far = await get(app, "/ui/dc9/services/web/routing");
    expect(far.status).toBe(404);
    expect(far.html).toContain("There is no datacenter called dc9.");
  });

  test("another datacenter is read with ?dc=; the content path prefixes every link", async () => {
    const { app, calls } = ui({}, "/console/");
    const { html } = await get(app, "/console/dc2/services/web/routing");
    expect(calls[0]!.path).toBe("/v1/discovery-chain/web?dc=dc2");
    for (const href of all(html, /href="([^"#][^"]*)"/g)) expect(href!.startsWith("/console/")).toBe(true);
    expect(html).toContain('href="/console/dc2/services/web/routing?node=splitter%3Aweb#chain-entry"');
  });

  test("live: a changed chain is pushed re-rendered, the selection kept", async () => {
    let current: { chain: CompiledDiscoveryChain; index: number } = { chain: ROUTED, index: 7 };
    let changed!: () => void;
    const change = new Promise<void>((r) => (changed = r));
    const { app, calls } = ui({
      "GET /v1/discovery-chain/web": async (url, call) => {
        const wait = blockingOf(url);
        if (wait.blocking && wait.minIndex >= current.index) await Promise.race([change, new Promise((r) => call.signal?.addEventListener("abort", r))]);
        return { json: { Chain: current.chain }, index: current.index };
      },
    });
    const abort = new AbortController();
    const res = await app.request("/ui/events?topic=routing&dc=dc1&service=web&node=splitter%3Aweb&since=7", { signal: abort.signal });
    const reader = res.body!.getReader();
    let text = "";
    const until = async (s: string) => {
      while (!text.includes(s)) text += new TextDecoder().decode((await reader.read()).value);
    };
    await until("event: open");
    current = { chain: compiledChain("web", ROUTED_ENTRIES.filter((e) => (e as { Kind: string }).Kind !== "service-router")), index: 12 };
    changed();
    await until("id: 12");
    const event = text.slice(text.indexOf("event: fragment"));
    expect(event).toContain('<div id="routing-live">');
    expect(event).toContain("3 chain nodes, 6 targets, 8 edges; protocol http");
    expect(event).not.toContain('data-node-id="router:web"');
    expect(event).toContain("chain-node chain-splitter chain-selected");
    expect(calls.map((c) => c.path)).toContain("/v1/discovery-chain/web?index=7&wait=60000ms");
    abort.abort();
    await reader.cancel().catch(() => {});
  });

  test("a live stream needs a service", async () => {
    const { app } = ui();
    expect((await app.request("/ui/events?topic=routing&dc=dc1")).status).toBe(400);
  });
});
