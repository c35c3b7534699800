/**
 * The intentions pages and a service's Intentions and Tags tabs in headless Chromium against a real
 * `causeway agent -dev` (one datacenter; the two-datacenter pickers are covered by
 * src/ui/intentions_page.test.ts). What a person sees: the list's rows in the order of
 * GET /v1/connect/intentions, a new intention appearing live; creating one in the form (then visible
 * through the API), editing its action, the editor's live "changed since you opened it" notice,
 * deleting it after the confirmation (the <dialog>, which Esc closes, and the page that works without
 * JavaScript); the pickers listing the services; the service tabs' rows. Zero axe violations (WCAG 2
 * A and AA) in light and dark, no request off 127.0.0.1, a screenshot per page in test/ui/screenshots/.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { Browser, Page } from "playwright-core";
import { agentCall, poll, type AgentProcess } from "../harness/agent_process.ts";
import { launchChromium, offlineGuard, screenshotPath, shotAndAxe, withGuardedPage } from "../harness/browser.ts";
import { startUiDevAgent } from "../harness/ui_agent.ts";

const SCHEMES = ["light", "dark"] as const;
let agent: AgentProcess;
let browser: Browser;

interface WireIntention { ID: string; SourceName: string; DestinationName: string; Action: string; Description: string; Precedence: number }

const intentions = async (): Promise<WireIntention[]> => (await agentCall(agent.httpUrl, "GET", "/v1/connect/intentions")).json;
const createIntention = async (SourceName: string, DestinationName: string, Action: string, Description = ""): Promise<string> => {
  const r = await agentCall(agent.httpUrl, "POST", "/v1/connect/intentions", undefined, { SourceName, DestinationName, Action, Description });
  expect(r.status).toBe(200);
  return r.json.ID;
};
const register = (node: string, id: string, service: string, tags: string[]) =>
  agentCall(agent.httpUrl, "PUT", "/v1/catalog/register", undefined, { Node: node, Address: "10.0.0.9", Service: { ID: id, Service: service, Tags: tags, Port: 80 } });

beforeAll(async () => {
  agent = await startUiDevAgent("ui-intentions");
  expect((await register("n1", "web-1", "web", ["v1", "primary"])).json).toBe(true);
  expect((await register("n2", "web-2", "web", ["v1"])).json).toBe(true);
  expect((await register("n2", "db", "db", [])).json).toBe(true);
  expect((await register("n3", "api", "api", [])).json).toBe(true);
  await createIntention("web", "db", "allow", "web reads the ledger");
  await createIntention("api", "web", "deny");
  await createIntention("*", "db", "deny", "nothing else reaches db");
  browser = await launchChromium();
}, 180_000);

afterAll(async () => {
  await browser?.close().catch(() => {});
  await agent?.stop("SIGKILL").catch(() => {});
});

const withPage = (scheme: "light" | "dark", body: (page: Page) => Promise<void>) => withGuardedPage(browser, scheme, body);

const rowIds = (page: Page) => page.locator("#intentions tbody tr").evaluateAll((rows) => rows.map((r) => r.getAttribute("data-intention")));

for (const scheme of SCHEMES) {
  test(`intentions list (${scheme}): the API's rows in its order, actions in words, a new intention appears live, no axe violations`, async () => {
    await withPage(scheme, async (page) => {
      await page.goto(`${agent.httpUrl}/ui/dc1/intentions`);
      await page.waitForSelector('body[data-live="on"]', { timeout: 5_000 });
      expect(await page.locator("h1").textContent()).toBe("Intentions");
      const api = await intentions();
      expect(await rowIds(page)).toEqual(api.map((x) => x.ID));
      const first = page.locator(`tr[data-intention="${api.find((x) => x.SourceName === "web")!.ID}"]`);
      expect(await first.locator("th, td").allTextContents()).toEqual(["web", "db", "✓ allow", String(api.find((x) => x.SourceName === "web")!.Precedence), "web reads the ledger", "Edit intention web → db"]);
      expect(await page.locator('tr:has(th:text-is("* (any service)")) td').nth(1).textContent()).toBe("✕ deny");

      // Live: an intention created over the API appears with no reload, in the API's order.
      const id = await createIntention(`cache-${scheme}`, "api", "allow");
      await page.waitForSelector(`tr[data-intention="${id}"]`, { timeout: 2_000 });
      expect(await rowIds(page)).toEqual((await intentions()).map((x) => x.ID));
      expect(await page.locator("#live-status").textContent()).toContain("Updated:");

      // The filters: "/" focuses the text filter; deny only.
      await page.keyboard.press("/");
      await page.keyboard.type("db");
      await page.locator('select[name="action"]').selectOption("deny");
      await page.getByRole("button", { name: "Filter" }).click();
      await page.waitForURL(/s=db&action=deny/);
      expect(await page.locator("#intentions tbody th").allTextContents()).toEqual(["* (any service)"]);

      await page.goto(`${agent.httpUrl}/ui/dc1/intentions`);
      await shotAndAxe(page, `intentions-${scheme}`);
      expect((await agentCall(agent.httpUrl, "DELETE", `/v1/connect/intentions/${id}`)).status).toBe(200);
    });
  }, 90_000);
}

test("create, edit and delete an intention in the pages; each is then what GET /v1/connect/intentions says", async () => {
  await withPage("light", async (page) => {
    await page.goto(`${agent.httpUrl}/ui/dc1/intentions`);
    await page.getByRole("link", { name: "Create an intention" }).click();
    await page.waitForURL(/\/ui\/dc1\/intentions\/create$/);
    // The pickers list the catalog's services under the datacenter, and "*" for any.
    const listed = await page.locator('#ixn-source optgroup[data-dc="dc1"] option').allTextContents();
    expect(listed).toEqual(expect.arrayContaining(["api", "consul", "db", "web"]));
    expect(await page.locator('#ixn-destination option[value="*"]').textContent()).toBe("* (any service)");

    await page.locator("#ixn-source").selectOption("api");
    await page.locator("#ixn-destination").selectOption("db");
    await page.getByLabel("Deny: the source may not connect").check();
    await page.getByLabel("Description").fill("from the browser");
    await page.getByRole("button", { name: "Create intention" }).click();
    await page.waitForURL(/\/ui\/dc1\/intentions\?created=/);
    expect(await page.locator("#ixn-done").textContent()).toBe("Created the intention api → db (deny).");
    const created = (await intentions()).find((x) => x.SourceName === "api" && x.DestinationName === "db");
    expect(created).toMatchObject({ Action: "deny", Description: "from the browser" });
    expect(await rowIds(page)).toEqual((await intentions()).map((x) => x.ID));

    // A duplicate is refused in words, with the form kept.
    await page.goto(`${agent.httpUrl}/ui/dc1/intentions/create?destination=db`);
    await page.locator("#ixn-source").selectOption("api");
    await page.getByRole("button", { name: "Create intention" }).click();
    expect(await page.getByRole("alert").textContent()).toContain("duplicate intention found");
    expect(await page.locator("#ixn-source").inputValue()).toBe("api");
    await shotAndAxe(page, "intention-create-error-light");

    // Edit: change the action.
    await page.goto(`${agent.httpUrl}/ui/dc1/intentions`);
    await page.getByRole("link", { name: "Edit intention api → db" }).click();
    await page.waitForURL(new RegExp(`/ui/dc1/intentions/${created!.ID}$`));
    expect(await page.locator("#ixn-source").inputValue()).toBe("api");
    expect(await page.getByLabel("Description").inputValue()).toBe("from the browser");
    await page.getByLabel("Allow: the source may connect").check();
    await page.getByRole("button", { name: "Save intention" }).click();
    await page.waitForURL(/\?updated=/);
    expect(await page.locator("#ixn-done").textContent()).toBe("Saved the intention api → db (allow).");
    expect((await intentions()).find((x) => x.ID === created!.ID)).toMatchObject({ Action: "allow", Description: "from the browser" });

    // Delete, with JavaScript: the <dialog> asks first; Esc closes it and nothing is deleted.
    await page.goto(`${agent.httpUrl}/ui/dc1/intentions/${created!.ID}`);
    await page.waitForSelector('body[data-live="on"]', { timeout: 5_000 });
    await page.getByRole("link", { name: "Delete this intention" }).click();
    const dialog = page.locator("dialog#ixn-delete");
    await dialog.waitFor({ state: "visible", timeout: 2_000 });
    expect(page.url()).toMatch(new RegExp(`${created!.ID}$`));
    await shotAndAxe(page, "intention-delete-dialog-light");
    await page.keyboard.press("Escape");
    await dialog.waitFor({ state: "hidden", timeout: 2_000 });
    expect((await intentions()).some((x) => x.ID === created!.ID)).toBe(true);
    await page.getByRole("link", { name: "Delete this intention" }).click();
    await dialog.getByRole("button", { name: "Delete intention" }).click();
    await page.waitForURL(/\?deleted=/);
    expect(await page.locator("#ixn-done").textContent()).toBe("Deleted the intention api → db (allow).");
    expect((await intentions()).some((x) => x.ID === created!.ID)).toBe(false);
  });
}, 90_000);

test("without JavaScript: the delete confirmation is a page of its own; the editor works as plain forms", async () => {
  const context = await browser.newContext({ javaScriptEnabled: false, viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  const refused = await offlineGuard(page);
  try {
    const id = await createIntention("api", "cache", "deny");
    await page.goto(`${agent.httpUrl}/ui/dc1/intentions/${id}`);
    await page.getByRole("link", { name: "Delete this intention" }).click();
    await page.waitForURL(new RegExp(`/intentions/${id}/delete$`));
    expect(await page.locator("h1").textContent()).toBe("Delete intention api → cache?");
    await page.screenshot({ path: screenshotPath("intention-delete-confirm-light"), fullPage: true });
    await page.getByRole("button", { name: "Delete intention" }).click();
    await page.waitForURL(/\?deleted=/);
    expect((await intentions()).some((x) => x.ID === id)).toBe(false);
    expect(refused).toEqual([]);
  } finally {
    await context.close();
  }
}, 90_000);

test("the editor says live when someone else changed the intention, and never refreshes the form", async () => {
  await withPage("light", async (page) => {
    const id = await createIntention("web", "api", "allow");
    await page.goto(`${agent.httpUrl}/ui/dc1/intentions/${id}`);
    await page.waitForSelector('body[data-live="on"]', { timeout: 5_000 });
    await page.getByLabel("Description").fill("typed, not saved");
    expect((await agentCall(agent.httpUrl, "PUT", `/v1/connect/intentions/${id}`, undefined, { SourceName: "web", DestinationName: "api", Action: "deny" })).status).toBe(200);
    await page.waitForSelector("#intention-changed .ixn-notice", { timeout: 2_000 });
    expect(await page.locator("#intention-changed").textContent()).toContain("changed since you opened it");
    expect(await page.locator("#live-status").textContent()).toContain("changed since you opened it");
    expect(await page.getByLabel("Description").inputValue()).toBe("typed, not saved");
    await shotAndAxe(page, "intention-edit-changed-light");
    // Saving now is refused (409) with the form kept; saving again replaces the other change.
    await page.getByRole("button", { name: "Save intention" }).click();
    expect(await page.getByRole("alert").textContent()).toContain("Not saved: this intention changed since you opened it");
    await page.getByRole("button", { name: "Save intention" }).click();
    await page.waitForURL(/\?updated=/);
    expect((await intentions()).find((x) => x.ID === id)).toMatchObject({ Action: "allow", Description: "typed, not saved" });
    expect((await agentCall(agent.httpUrl, "DELETE", `/v1/connect/intentions/${id}`)).status).toBe(200);
  });
}, 90_000);

for (const scheme of SCHEMES) {
  test(`the editor and a service's tabs (${scheme}): rows, counts, no axe violations`, async () => {
    await withPage(scheme, async (page) => {
      const webId = (await intentions()).find((x) => x.SourceName === "web" && x.DestinationName === "db")!.ID;
      await page.goto(`${agent.httpUrl}/ui/dc1/intentions/${webId}`);
      expect(await page.locator("h1").textContent()).toBe("Edit intention web → db");
      await shotAndAxe(page, `intention-edit-${scheme}`);

      await page.goto(`${agent.httpUrl}/ui/dc1/services/web/intentions`);
      await page.waitForSelector('body[data-live="on"]', { timeout: 5_000 });
      const expected = (await intentions()).filter((x) => x.SourceName === "web" || x.DestinationName === "web").map((x) => x.ID);
      expect(expected.length).toBe(2);
      expect(await rowIds(page)).toEqual(expected);
      expect(await page.locator('nav.tabs a[aria-current="page"]').textContent()).toBe("Intentions");
      await shotAndAxe(page, `service-intentions-${scheme}`);
      await page.getByRole("link", { name: "Create an intention to web" }).click();
      expect(await page.locator("#ixn-destination").inputValue()).toBe("web");

      await page.goto(`${agent.httpUrl}/ui/dc1/services/web/tags`);
      await page.waitForSelector('body[data-live="on"]', { timeout: 5_000 });
      const rows = await page.locator("#service-tags tbody tr").evaluateAll((trs) => trs.map((tr) => [...tr.children].slice(0, 2).map((c) => c.textContent)));
      expect(rows).toEqual([["primary", "1 of 2"], ["v1", "2 of 2"]]);
      // Live: a third instance with a new tag.
      expect((await register("n3", `web-${scheme}`, "web", ["v1", scheme])).json).toBe(true);
      await page.waitForSelector(`tr[data-tag="${scheme}"]`, { timeout: 2_000 });
      expect(await page.locator('tr[data-tag="v1"] td').first().textContent()).toBe("3 of 3");
      await shotAndAxe(page, `service-tags-${scheme}`);
      await poll(() => agentCall(agent.httpUrl, "PUT", "/v1/catalog/deregister", undefined, { Node: "n3", ServiceID: `web-${scheme}` }), (r) => r.json === true, 5_000, "deregistered");
    });
  }, 90_000);
}
