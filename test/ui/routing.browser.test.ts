/**
 * A service's Routing tab in headless Chromium against a real `causeway agent -dev`, seeded over the
 * API with proxy-defaults (http), a service-router (/admin to web-admin), a service-splitter (90% to
 * subset v1, 10% to v2) and a service-resolver (subsets by Service.Meta.version, failover to dc2 then
 * dc3; those datacenters need not exist for the chain to compile). What a person sees: one SVG node
 * per chain node of the API's answer, split edges labelled 90% and 10%, dashed failover edges labelled
 * in order, the tables listing the same nodes and edges; Tab reaches a node and Enter shows its config
 * entry; a changed splitter shows up live; a service with no entries shows the default chain; zero axe
 * violations in light and dark; nothing leaves 127.0.0.1. Screenshots go to test/ui/screenshots/.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { Browser, Page } from "playwright-core";
import { agentCall, poll, type AgentProcess } from "../harness/agent_process.ts";
import { axeViolations, launchChromium, screenshotPath, shotAndAxe, withGuardedPage } from "../harness/browser.ts";
import { startUiDevAgent } from "../harness/ui_agent.ts";

let agent: AgentProcess;
let browser: Browser;

const SPLITTER = (v1: number, v2: number) => ({ Kind: "service-splitter", Name: "web", Splits: [{ Weight: v1, ServiceSubset: "v1" }, { Weight: v2, ServiceSubset: "v2" }] });
const ENTRIES = [
  { Kind: "proxy-defaults", Name: "global", Config: { protocol: "http" } },
  {
    Kind: "service-resolver", Name: "web",
    Subsets: { v1: { Filter: "Service.Meta.version == v1" }, v2: { Filter: "Service.Meta.version == v2" } },
    Failover: { "*": { Datacenters: ["dc2", "dc3"] } },
  },
  SPLITTER(90, 10),
  { Kind: "service-router", Name: "web", Routes: [{ Match: { HTTP: { PathPrefix: "/admin" } }, Destination: { Service: "web-admin" } }] },
];

const putEntry = async (entry: unknown) => {
  const r = await agentCall(agent.httpUrl, "PUT", "/v1/config", undefined, entry);
  expect([r.status, r.text]).toEqual([200, "true"]);
};

interface ApiChain {
  Nodes: Record<string, unknown>;
  Targets: Record<string, unknown>;
}

beforeAll(async () => {
  agent = await startUiDevAgent("ui-routing");
  for (const e of ENTRIES) await putEntry(e);
  // The chain compiles once the CA exists.
  await poll(() => agentCall(agent.httpUrl, "GET", "/v1/discovery-chain/web"), (r) => r.status === 200 && r.json.Chain.StartNode === "router:web", 20_000, "web's chain");
  browser = await launchChromium();
}, 180_000);

afterAll(async () => {
  await browser?.close().catch(() => {});
  await agent?.stop("SIGKILL").catch(() => {});
});

const attrs = (page: Page, selector: string, name: string) => page.locator(selector).evaluateAll((els, n) => els.map((e) => e.getAttribute(n as string) ?? ""), name);

/** The SVG's edges as "from -> to: label (kind) dashed?" lines. */
const svgEdges = (page: Page) => page.locator("svg.chain-graph g.chain-edge").evaluateAll((els) => els.map((g) =>
  `${g.getAttribute("data-edge-from")} -> ${g.getAttribute("data-edge-to")}: ${g.querySelector("text")?.textContent} (${g.getAttribute("data-edge-kind")})${g.querySelector("path")?.getAttribute("stroke-dasharray") ? " dashed" : ""}`));

for (const scheme of ["light", "dark"] as const) {
  test(`routing (${scheme}): one SVG node per chain node, 90%/10% splits, dashed failovers in order, the same tables, keyboard to a node's config entry, no axe violations`, async () => {
    await withGuardedPage(browser, scheme, async (page) => {
      const chain = (await agentCall(agent.httpUrl, "GET", "/v1/discovery-chain/web")).json.Chain as ApiChain;
      await page.goto(`${agent.httpUrl}/ui/dc1/services/web/routing`);
      await page.waitForSelector('body[data-live="on"]', { timeout: 5_000 });
      expect(await page.locator("h1").textContent()).toBe("web");
      expect(await page.locator('nav.tabs a[aria-current="page"]').textContent()).toBe("Routing");

      // The graph: one node per chain node, one per target, named by a visible caption.
      expect((await attrs(page, "svg.chain-graph [data-node-id]", "data-node-id")).sort()).toEqual(Object.keys(chain.Nodes).sort());
      expect((await attrs(page, "svg.chain-graph [data-target-id]", "data-target-id")).sort()).toEqual(Object.keys(chain.Targets).sort());
      expect(await page.locator("svg.chain-graph").getAttribute("aria-labelledby")).toBe("chain-caption");
      expect(await page.locator("#chain-caption").isVisible()).toBe(true);
      const edges = await svgEdges(page);
      expect(edges.filter((e) => e.endsWith("(split)"))).toEqual([
        "splitter:web -> resolver:v1.web.default.dc1: 90% (split)",
        "splitter:web -> resolver:v2.web.default.dc1: 10% (split)",
      ]);
      expect(edges.filter((e) => e.startsWith("resolver:v1.web.default.dc1"))).toEqual([
        "resolver:v1.web.default.dc1 -> target:v1.web.default.dc1: primary (primary)",
        "resolver:v1.web.default.dc1 -> target:v1.web.default.dc2: failover 1 (failover) dashed",
        "resolver:v1.web.default.dc1 -> target:v1.web.default.dc3: failover 2 (failover) dashed",
      ]);
      expect(edges.filter((e) => e.includes("(failover)")).every((e) => e.endsWith(" dashed"))).toBe(true);
      expect(edges.filter((e) => !e.includes("(failover)")).some((e) => e.endsWith(" dashed"))).toBe(false);
      expect(edges).toContain("router:web -> resolver:web-admin.default.dc1: path prefix /admin (route)");

      // The tables say the same.
      const svgNodes = [...await attrs(page, "svg.chain-graph [data-node-id]", "data-node-id"), ...(await attrs(page, "svg.chain-graph [data-target-id]", "data-target-id")).map((t) => `target:${t}`)];
      expect((await attrs(page, "#chain-nodes tbody tr", "data-row-node")).sort()).toEqual(svgNodes.sort());
      const rows = await page.locator("#chain-edges tbody tr").evaluateAll((trs) => trs.map((tr) => `${tr.getAttribute("data-row-from")} -> ${tr.getAttribute("data-row-to")}: ${tr.children[2]!.textContent} (${tr.children[3]!.textContent})`));
      expect(rows).toEqual(edges.map((e) => e.replace(/ dashed$/, "").replace(/\((primary|failover)\)$/, "($1 target)")));
      expect(await page.locator("#chain-nodes caption").textContent()).toBe("Discovery chain of web in dc1: 12 nodes");

      // Keyboard only: Tab to the v1 resolver in the graph, Enter shows its config entry.
      const wanted = "resolver:v1.web.default.dc1";
      let focused = "";
      for (let i = 0; i < 60 && focused !== wanted; i++) {
        await page.keyboard.press("Tab");
        focused = await page.evaluate(() => document.activeElement?.closest("[data-node-id]")?.getAttribute("data-node-id") ?? "");
      }
      expect(focused).toBe(wanted);
      expect(await page.evaluate(() => document.activeElement?.getAttribute("aria-label"))).toBe("resolver v1.web.default.dc1, failover to dc2 then dc3");
      await page.screenshot({ path: screenshotPath(`routing-${scheme}`), fullPage: true });
      await page.keyboard.press("Enter");
      await page.waitForURL(/\?node=resolver%3Av1\.web\.default\.dc1#chain-entry$/, { timeout: 5_000 });
      await page.waitForSelector("#chain-entry pre[data-json=entry]", { timeout: 5_000 });
      expect(await page.locator("#chain-entry h2").textContent()).toBe("resolver v1.web.default.dc1");
      const entry = JSON.parse((await page.locator("#chain-entry pre[data-json=entry]").textContent())!);
      expect([entry.Kind, entry.Name, entry.Failover["*"].Datacenters]).toEqual(["service-resolver", "web", ["dc2", "dc3"]]);
      expect(JSON.parse((await page.locator("#chain-entry pre[data-json=chain]").textContent())!)).toEqual(chain.Nodes[wanted]);
      expect(await page.locator(`[data-node-id="${wanted}"] a`).getAttribute("aria-current")).toBe("true");
      await shotAndAxe(page, `routing-node-${scheme}`);
    });
  }, 60_000);
}

test("routing, live: a changed splitter shows its new weights without a reload", async () => {
  await withGuardedPage(browser, "light", async (page) => {
    await page.goto(`${agent.httpUrl}/ui/dc1/services/web/routing`);
    await page.waitForSelector('body[data-live="on"]', { timeout: 5_000 });
    await putEntry(SPLITTER(50, 50));
    await page.waitForFunction(() => [...document.querySelectorAll("svg.chain-graph g.chain-edge-split text")].map((t) => t.textContent).join() === "50%,50%", undefined, { timeout: 2_000 });
    expect(await page.locator("#chain-edges tbody tr td:nth-child(3)").allTextContents()).toContain("50%");
    expect(await page.locator("#live-status").textContent()).toContain("Updated: 5 chain nodes, 7 targets, 11 edges; protocol http");
    await putEntry(SPLITTER(90, 10));
    await page.waitForFunction(() => [...document.querySelectorAll("svg.chain-graph g.chain-edge-split text")].map((t) => t.textContent).join() === "90%,10%", undefined, { timeout: 2_000 });
    expect(await axeViolations(page)).toEqual([]);
  });
}, 60_000);

test("routing of a service with no config entries: the default chain, one resolver and one target, in words", async () => {
  await withGuardedPage(browser, "dark", async (page) => {
    await page.goto(`${agent.httpUrl}/ui/dc1/services/db/routing`);
    expect(await attrs(page, "svg.chain-graph [data-node-id]", "data-node-id")).toEqual(["resolver:db.default.dc1"]);
    expect(await attrs(page, "svg.chain-graph [data-target-id]", "data-target-id")).toEqual(["db.default.dc1"]);
    expect(await page.locator("#chain-default").textContent()).toBe("db has no routing config entries in dc1: the default chain sends every request to db in dc1.");
    expect(await svgEdges(page)).toEqual(["resolver:db.default.dc1 -> target:db.default.dc1: primary (primary)"]);
    await shotAndAxe(page, "routing-default-dark");
  });
}, 60_000);
