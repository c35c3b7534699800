/**
 * The multi-datacenter pages in headless Chromium against the seeded three-datacenter cluster
 * (test/harness/ui_cluster.ts: dc1 primary, dc2, dc3, a mesh gateway in each, `web` failing over from
 * dc1 to dc2 then dc3 with gateways in mode local):
 * - a service's failover page: primary serving; every dc1 instance critical → within 2 s "serving from
 *   dc2 (failover 1) via mesh gateway gw-dc1" in the page and its polite status line; restored → dc1;
 * - the federation map: three datacenters with the primary marked, gateway chips, RTT-labelled edges
 *   and the equivalent table; stopping dc3's gateway marks its link degraded with "0/1 gateways
 *   healthy" within 5 s, and starting it again clears that;
 * - the datacenter switcher (Enter opens, arrows move, Esc closes) lists all three and leads to
 *   another datacenter's services;
 * - another datacenter's pages (services, nodes, key/value) read that datacenter; the routing graph
 *   holds the failover targets; the intention pickers list the services of all three;
 * - zero axe violations in light and dark, nothing off 127.0.0.1; screenshots in test/ui/screenshots/.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { Browser, Page } from "playwright-core";
import { launchChromium, screenshotPath, shotAndAxe, withGuardedPage } from "../harness/browser.ts";
import { startUiCluster, type UiCluster } from "../harness/ui_cluster.ts";

let cluster: UiCluster;
let browser: Browser;

beforeAll(async () => {
  cluster = await startUiCluster();
  browser = await launchChromium();
}, 180_000);

afterAll(async () => {
  await browser?.close().catch(() => {});
  await cluster?.stop();
});

const withPage = (scheme: "light" | "dark", body: (page: Page) => Promise<void>) => withGuardedPage(browser, scheme, body);

const text = async (page: Page, selector: string) => (await page.locator(selector).first().textContent()) ?? "";

test("failover: the primary serves; every dc1 instance critical shows serving from dc2 through the gateway within 2 s, announced; restored, back to dc1", async () => {
  await withPage("light", async (page) => {
    await page.goto(`${cluster.url("dc1")}/ui/dc1/services/web/failover`);
    await page.waitForSelector('body[data-live="on"]', { timeout: 5_000 });
    expect(await text(page, "#live-counts")).toBe("Serving web from dc1 (primary).");
    const rows = await page.locator("table.failover tbody tr").evaluateAll((trs) => trs.map((tr) => [...tr.children].map((c) => c.textContent)));
    expect(rows.map((r) => r[0])).toEqual(["primary", "failover 1", "failover 2"]);
    expect(rows.map((r) => r[1])).toEqual(["web in dc1", "web in dc2", "web in dc3"]);
    expect(rows[0]![2]).toContain("2 of 2 healthy");
    expect(rows[1]![3]).toBe("local");
    expect(rows[1]![4]).toContain("gw-dc1 in dc1");
    expect(rows.map((r) => r[5])).toEqual(["serving", "standby", "standby"]);
    await page.screenshot({ path: screenshotPath("failover-primary"), fullPage: true });

    await cluster.setInstances("dc1", "web", "critical");
    await page.waitForFunction(() => document.getElementById("live-counts")?.textContent === "Serving web from dc2 (failover 1) via mesh gateway gw-dc1 in dc1.", undefined, { timeout: 2_000 });
    expect(await text(page, "#live-status")).toContain("Serving web from dc2 (failover 1)");
    expect(await text(page, 'tr[data-target="web.default.dc1"]')).toContain("0 of 2 healthy");
    expect(await text(page, 'tr[data-serving="true"] th')).toBe("failover 1");
    await shotAndAxe(page, "failover-active");

    await cluster.setInstances("dc1", "web", "passing");
    await page.waitForFunction(() => document.getElementById("live-counts")?.textContent === "Serving web from dc1 (primary).", undefined, { timeout: 2_000 });
  });
}, 60_000);

test("federation map: three datacenters, the primary marked, gateways and RTT; a stopped gateway marks dc3's link degraded within 5 s, and recovery clears it", async () => {
  await withPage("dark", async (page) => {
    await page.goto(`${cluster.url("dc1")}/ui/federation`);
    expect(await page.title()).toBe("Federation – dc1 – Causeway");
    await page.waitForSelector('body[data-live="on"]', { timeout: 5_000 });
    // Gateways are healthy once their first TCP check ran.
    await page.waitForFunction(() => document.getElementById("live-counts")?.textContent === "All 3 datacenters healthy.", undefined, { timeout: 10_000 });
    // Datacenters come nearest first (by estimated RTT, as /v1/catalog/datacenters lists them): compare as sets.
    expect((await page.locator("#federation-map a[data-dc]").evaluateAll((as) => as.map((a) => a.getAttribute("data-dc")))).sort()).toEqual(["dc1", "dc2", "dc3"]);
    expect(await text(page, '#federation-map a[data-dc="dc1"] .dc-name')).toBe("dc1 (primary)");
    expect(await text(page, '#federation-map a[data-dc="dc2"] .chips')).toBe("✓ gw-dc2");
    expect((await page.locator("#federation-map g[data-edge]").evaluateAll((gs) => gs.map((g) => `${g.getAttribute("data-edge")} ${g.getAttribute("data-link")}`))).sort()).toEqual(["dc2 healthy", "dc3 healthy"]);
    expect(await text(page, '#federation-map g[data-edge="dc2"] text')).toMatch(/ms$/);
    const row = (dc: string) => page.locator(`#federation tr[data-dc="${dc}"] td`).allTextContents();
    expect((await row("dc3")).slice(0, 3)).toEqual(["✓ healthy", expect.stringMatching(/^127\.0\.0\.1:\d+$/), "1/1"]);
    expect((await row("dc3"))[3]).toBe("1/1 gateways healthy: gw-dc3 healthy");
    // Each datacenter's own leader (/v1/status/leader?dc= asks that datacenter's servers).
    const leaders = await Promise.all(["dc1", "dc2", "dc3"].map(async (dc) => (await row(dc))[1]));
    expect(new Set(leaders).size).toBe(3);
    expect(leaders[2]).toBe(await cluster.api("dc3", "GET", "/v1/status/leader"));
    await shotAndAxe(page, "federation-dark");

    await cluster.stopGateway("dc3");
    await page.waitForSelector('#federation-map g[data-edge="dc3"][data-link="degraded"]', { timeout: 5_000 });
    expect((await row("dc3"))[0]).toBe("! degraded");
    expect((await row("dc3"))[3]).toBe("0/1 gateways healthy: gw-dc3 critical");
    expect(await text(page, "#live-counts")).toContain("dc3: degraded: 0/1 gateways healthy");
    expect(await text(page, '#federation-map g[data-edge="dc3"] .edge-state')).toBe("degraded");
    await shotAndAxe(page, "federation-degraded-dark");

    await cluster.startGateway("dc3");
    await page.waitForSelector('#federation-map g[data-edge="dc3"][data-link="healthy"]', { timeout: 10_000 });
  });
}, 60_000);

test("the datacenter switcher: Enter opens it, arrows move, Esc closes it; it lists all three and leads to another datacenter's services; axe in light", async () => {
  await withPage("light", async (page) => {
    await page.goto(`${cluster.url("dc1")}/ui/dc1/services`);
    const links = page.locator('nav[aria-label="Datacenters"] a');
    expect((await links.allTextContents()).sort()).toEqual(["dc1", "dc2", "dc3"]);
    const order = await links.allTextContents();
    const summary = page.locator('nav[aria-label="Datacenters"] summary');
    expect(await summary.textContent()).toBe("Datacenter dc1");
    await summary.focus();
    await page.keyboard.press("Enter");
    expect(await page.locator('nav[aria-label="Datacenters"] details').getAttribute("open")).toBe("");
    await shotAndAxe(page, "switcher-open-light");
    await page.keyboard.press("ArrowDown");
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe(order[0]);
    await page.keyboard.press("ArrowUp");
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe(order[order.length - 1]);
    await page.keyboard.press("Escape");
    expect(await page.locator('nav[aria-label="Datacenters"] details').getAttribute("open")).toBeNull();
    expect(await page.evaluate(() => document.activeElement?.tagName)).toBe("SUMMARY");
    // Open again and follow dc3 with the keyboard.
    await page.keyboard.press("ArrowDown");
    for (let i = 0; i < order.length && (await page.evaluate(() => document.activeElement?.textContent)) !== "dc3"; i++) await page.keyboard.press("ArrowDown");
    await page.keyboard.press("Enter");
    await page.waitForURL(/\/ui\/dc3\/services$/);
    expect(await page.locator("#services tbody th").allTextContents()).toEqual(expect.arrayContaining(["consul", "mesh-gateway", "web"]));
    expect(await page.locator("#services tbody th").allTextContents()).not.toContain("api");
    await page.goto(`${cluster.url("dc1")}/ui/federation`);
    await shotAndAxe(page, "federation-light");
  });
}, 60_000);

test("every page of another datacenter reads that datacenter: services, nodes, key/value, routing; the intention pickers list all three", async () => {
  await cluster.api("dc2", "PUT", "/v1/kv/only-in/dc2", "from dc2");
  await withPage("dark", async (page) => {
    const base = `${cluster.url("dc1")}/ui`;
    // dc2's pages, served by dc1's agent, show dc2's catalog and keys.
    await page.goto(`${base}/dc2/services`);
    const services = await page.locator("#services tbody th").allTextContents();
    expect(services).toContain("web");
    expect(services).not.toContain("api");
    await page.goto(`${base}/dc2/nodes`);
    expect(await page.locator("#nodes tbody th").allTextContents()).toEqual(expect.arrayContaining(["srv-dc2", "web-dc2-a"]));
    expect(await page.locator("#nodes tbody th").allTextContents()).not.toContain("web-dc1-a");
    await page.goto(`${base}/dc2/kv/only-in/`);
    expect(await page.locator("#kv-items tbody th").allTextContents()).toEqual(["dc2"]);
    expect((await page.goto(`${base}/dc1/kv/only-in/`))?.status()).toBe(404);
    // dc1's chain for web fails over to dc2 then dc3: its targets are in the graph.
    await page.goto(`${base}/dc1/services/web/routing`);
    expect((await page.locator("[data-target-id]").evaluateAll((xs) => xs.map((x) => x.getAttribute("data-target-id")))).sort())
      .toEqual(["web.default.dc1", "web.default.dc2", "web.default.dc3"]);
    await shotAndAxe(page, "cluster-routing-dark");
    // The intention editor lists the services of every datacenter, each in its own group.
    await page.goto(`${base}/dc1/intentions/create`);
    const groups = await page.locator("#ixn-source optgroup[data-dc]").evaluateAll((gs) => gs.map((g) => [g.getAttribute("data-dc"), [...g.querySelectorAll("option")].map((o) => o.textContent)]));
    expect(Object.fromEntries(groups as [string, string[]][])).toMatchObject({
      dc1: expect.arrayContaining(["api", "web"]), dc2: expect.arrayContaining(["web"]), dc3: expect.arrayContaining(["web"]),
    });
    expect((Object.fromEntries(groups as [string, string[]][]) as Record<string, string[]>)["dc2"]).not.toContain("api");
    await shotAndAxe(page, "cluster-intention-create-dark");
  });
}, 60_000);
