/**
 * The UI's pages in headless Chromium against a real `causeway agent -dev`. Services: what a person sees
 * (rows, health in words, counts), live updates without a reload (a service registered over the API
 * appears within 2 s; failing a check turns its row critical), the keyboard shortcut, zero axe
 * violations (WCAG 2 A and AA) in light and dark, and no request leaving 127.0.0.1. Nodes: rows and
 * health, a node registered over the API appears live, axe in both themes. A service's instances:
 * reached from the list, a failing check turns its row critical live, axe. Settings: a dark theme
 * and live updates off, kept across pages. A hidden tab closes its stream and, shown again, catches
 * up on what changed meanwhile. Screenshots go to test/ui/screenshots/ (not committed).
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { Browser, Page } from "playwright-core";
import { agentCall, type AgentProcess } from "../harness/agent_process.ts";
import { launchChromium, shotAndAxe, withGuardedPage } from "../harness/browser.ts";
import { startUiDevAgent } from "../harness/ui_agent.ts";

let agent: AgentProcess;
let browser: Browser;

const register = (node: string, service: string, status: string) =>
  agentCall(agent.httpUrl, "PUT", "/v1/catalog/register", undefined, {
    Node: node, Address: "10.0.0.9", Service: { Service: service, Tags: ["v1"], Port: 80 }, Check: { CheckID: `${service}-check`, Name: service, Status: status, ServiceID: service },
  });

beforeAll(async () => {
  agent = await startUiDevAgent("ui-browser");
  for (const [node, svc, status] of [["n1", "web", "passing"], ["n2", "db", "warning"], ["n3", "cache", "critical"]]) expect((await register(node!, svc!, status!)).json).toBe(true);
  browser = await launchChromium();
}, 180_000);

afterAll(async () => {
  await browser?.close().catch(() => {});
  await agent?.stop("SIGKILL").catch(() => {});
});

const withPage = (scheme: "light" | "dark", body: (page: Page) => Promise<void>) => withGuardedPage(browser, scheme, body, { width: 1280, height: 800 });

for (const scheme of ["light", "dark"] as const) {
  test(`services (${scheme}): rows and counts, live additions and health changes, the "/" shortcut, no axe violations, nothing off 127.0.0.1`, async () => {
    await withPage(scheme, async (page) => {
      await page.goto(`${agent.httpUrl}/ui/`);
      expect(new URL(page.url()).pathname).toBe("/ui/dc1/services");
      await page.waitForSelector('body[data-live="on"]', { timeout: 5_000 });
      const names = await page.locator("#services tbody th").allTextContents();
      expect(names).toEqual(expect.arrayContaining(["cache", "consul", "db", "web"]));
      expect(await page.locator('tr[data-service="cache"] td').first().textContent()).toContain("critical");
      expect(await page.locator("#live-status").textContent()).toBe("Live");

      // Live: a new service appears, and a failing check turns a row critical, with no reload.
      const added = `api-${scheme}`;
      expect((await register(`n-${scheme}`, added, "passing")).json).toBe(true);
      await page.waitForSelector(`tr[data-service="${added}"]`, { timeout: 2_000 });
      expect((await register("n1", "web", "critical")).json).toBe(true);
      await page.waitForSelector('tr[data-service="web"] td.health-critical', { timeout: 2_000 });
      expect(await page.locator("#live-status").textContent()).toContain("Updated:");
      expect((await register("n1", "web", "passing")).json).toBe(true);
      await page.waitForSelector('tr[data-service="web"] td.health-passing', { timeout: 2_000 });

      // "/" focuses the name filter; the filter works as a form.
      await page.keyboard.press("/");
      expect(await page.evaluate(() => document.activeElement?.getAttribute("name"))).toBe("s");
      await page.keyboard.type("cach");
      await page.keyboard.press("Enter");
      await page.waitForURL(/s=cach/);
      expect(await page.locator("#services tbody th").allTextContents()).toEqual(["cache"]);

      await page.goto(`${agent.httpUrl}/ui/dc1/services`);
      await shotAndAxe(page, `services-${scheme}`);
    });
  }, 60_000);
}

for (const scheme of ["light", "dark"] as const) {
  test(`nodes (${scheme}): rows with health, a new node appears live, no axe violations`, async () => {
    await withPage(scheme, async (page) => {
      await page.goto(`${agent.httpUrl}/ui/dc1/nodes`);
      await page.waitForSelector('body[data-live="on"]', { timeout: 5_000 });
      expect(await page.locator("#nodes tbody th").allTextContents()).toEqual(expect.arrayContaining(["n1", "n2", "n3", "ui-browser"]));
      expect(await page.locator('tr[data-node="ui-browser"] td').first().textContent()).toContain("passing");
      const node = `late-${scheme}`;
      expect((await agentCall(agent.httpUrl, "PUT", "/v1/catalog/register", undefined, { Node: node, Address: "10.0.0.77" })).json).toBe(true);
      await page.waitForSelector(`tr[data-node="${node}"]`, { timeout: 2_000 });
      await shotAndAxe(page, `nodes-${scheme}`);
    });
  }, 60_000);
}

test("a service's instances: reached from the list, a failing check turns the row critical live, no axe violations", async () => {
  await withPage("light", async (page) => {
    await page.goto(`${agent.httpUrl}/ui/dc1/services`);
    await page.getByRole("link", { name: "db", exact: true }).click();
    await page.waitForURL(/\/ui\/dc1\/services\/db\/instances$/);
    await page.waitForSelector('body[data-live="on"]', { timeout: 5_000 });
    expect(await page.locator("h1").textContent()).toBe("db");
    expect(await page.locator('tr[data-instance="n2/db"] td').first().textContent()).toContain("warning");
    expect((await register("n2", "db", "critical")).json).toBe(true);
    await page.waitForSelector('tr[data-instance="n2/db"] td.health-critical', { timeout: 2_000 });
    expect(await page.locator('tr[data-instance="n2/db"] ul.checks').textContent()).toContain("db: critical");
    await shotAndAxe(page, "instances-light");
  });
}, 60_000);

test("settings: dark theme and live off are saved, every page is rendered with them; back to the defaults", async () => {
  await withPage("light", async (page) => {
    await page.goto(`${agent.httpUrl}/ui/settings`);
    expect(await page.title()).toBe("Settings – dc1 – Causeway");
    await page.getByLabel("Dark", { exact: true }).check();
    await page.getByRole("radio", { name: /Off: pages change/ }).check();
    await page.getByRole("button", { name: "Save settings" }).click();
    await page.waitForURL(/\/ui\/settings\?saved=1$/);
    expect(await page.locator("#saved").textContent()).toContain("Saved.");
    const cookies = await page.context().cookies();
    expect(cookies.filter((c) => c.name.startsWith("causeway-")).map((c) => [c.name, c.value, c.httpOnly])).toEqual(
      expect.arrayContaining([["causeway-theme", "dark", true], ["causeway-live", "off", true]]));
    await page.goto(`${agent.httpUrl}/ui/dc1/services`);
    expect(await page.locator("html").getAttribute("data-theme")).toBe("dark");
    // The page's own colours follow the setting, though the browser asked for light.
    expect(await page.evaluate(() => getComputedStyle(document.body).backgroundColor)).toBe("rgb(15, 18, 22)");
    expect(await page.locator("body").getAttribute("data-live-url")).toBeNull();
    expect(await page.getByRole("link", { name: "Refresh" }).count()).toBe(1);
    await shotAndAxe(page, "settings-dark-services");
    await page.goto(`${agent.httpUrl}/ui/settings`);
    await shotAndAxe(page, "settings-dark");
    await page.getByLabel("As the system").check();
    await page.getByRole("radio", { name: /On: pages update/ }).check();
    await page.getByRole("button", { name: "Save settings" }).click();
    await page.goto(`${agent.httpUrl}/ui/dc1/services`);
    expect(await page.locator("html").getAttribute("data-theme")).toBeNull();
    await page.waitForSelector('body[data-live="on"]', { timeout: 5_000 });
  });
}, 60_000);

test("a hidden tab closes its stream; shown again it resumes after the last index and shows what changed meanwhile", async () => {
  await withPage("light", async (page) => {
    await page.goto(`${agent.httpUrl}/ui/dc1/services`);
    await page.waitForSelector('body[data-live="on"]', { timeout: 5_000 });
    const setHidden = (hidden: boolean) => page.evaluate((h) => {
      Object.defineProperty(document, "hidden", { configurable: true, get: () => h });
      document.dispatchEvent(new Event("visibilitychange"));
    }, hidden);
    await setHidden(true);
    expect(await page.locator("body").getAttribute("data-live")).toBe("off");
    expect(await page.locator("#live-status").textContent()).toBe("Paused while the tab is hidden");
    expect((await register("n-hidden", "while-hidden", "passing")).json).toBe(true);
    await setHidden(false);
    await page.waitForSelector('tr[data-service="while-hidden"]', { timeout: 2_000 });
    expect(await page.locator("body").getAttribute("data-live")).toBe("on");
  });
}, 60_000);
