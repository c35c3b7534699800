/**
 * The Key/Value pages in headless Chromium against a real `causeway agent -dev`: folder navigation by
 * breadcrumb (keys that need escaping included), a key written over the API appearing (and, deleted,
 * leaving) live in its folder, creating a folder and a key through the forms, the JSON toggle refusing invalid JSON, a
 * concurrent edit (written over the API after the editor opened) giving the live notice and then the
 * CAS conflict message on save, a folder's recursive delete after its confirmation page (checked over
 * the API), the export download, zero axe violations (WCAG 2 A and AA) in light and dark, and no
 * request leaving 127.0.0.1. Screenshots go to test/ui/screenshots/.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import type { Browser, Page } from "playwright-core";
import { agentCall } from "../harness/agent_process.ts";
import type { AgentProcess } from "../harness/agent_process.ts";
import { launchChromium, shotAndAxe, withGuardedPage } from "../harness/browser.ts";
import { startUiDevAgent } from "../harness/ui_agent.ts";

let agent: AgentProcess;
let browser: Browser;

const enc = (key: string) => key.split("/").map(encodeURIComponent).join("/");
const put = async (key: string, value: string) => expect((await agentCall(agent.httpUrl, "PUT", `/v1/kv/${enc(key)}`, undefined, value)).json).toBe(true);
/** The stored value as text, or undefined when the key does not exist. */
const stored = async (key: string) => {
  const r = await agentCall(agent.httpUrl, "GET", `/v1/kv/${enc(key)}?raw`);
  return r.status === 404 ? undefined : r.text;
};

beforeAll(async () => {
  agent = await startUiDevAgent("kv-browser");
  for (const [k, v] of [["app/db/url", "postgres://db"], ["app/web/port", "8080"], ["app/web/cfg", '{"replicas":2}'], ["top", "x"], ["odd key %/ü 1", "spaces"]]) await put(k!, v!);
  browser = await launchChromium();
}, 180_000);

afterAll(async () => {
  await browser?.close().catch(() => {});
  await agent?.stop("SIGKILL").catch(() => {});
});

const withPage = (scheme: "light" | "dark", body: (page: Page) => Promise<void>) => withGuardedPage(browser, scheme, body, { width: 1280, height: 800 });

const rows = (page: Page) => page.locator("#kv-items tbody th").allTextContents();

for (const scheme of ["light", "dark"] as const) {
  test(`folders (${scheme}): breadcrumb navigation, escaped names round-trip, a new key appears live, no axe violations`, async () => {
    await withPage(scheme, async (page) => {
      await page.goto(`${agent.httpUrl}/ui/dc1/kv/app/web/`);
      await page.waitForSelector('body[data-live="on"]', { timeout: 5_000 });
      expect(await page.locator("h1").textContent()).toBe("app/web/");
      expect(await rows(page)).toEqual(["cfg", "port"]);
      await shotAndAxe(page, `kv-folder-${scheme}`);

      // Live: a key written over the API appears in the open folder without a reload.
      await put(`app/web/live-${scheme}`, "1");
      await page.waitForSelector(`tr[data-kv="app/web/live-${scheme}"]`, { timeout: 2_000 });
      expect(await page.locator("#live-status").textContent()).toContain("Updated: 0 folders, 3 keys");
      expect((await agentCall(agent.httpUrl, "DELETE", `/v1/kv/app/web/live-${scheme}`)).json).toBe(true);
      await page.waitForSelector(`tr[data-kv="app/web/live-${scheme}"]`, { state: "detached", timeout: 2_000 });

      await page.getByRole("navigation", { name: "Breadcrumb" }).getByRole("link", { name: "app", exact: true }).click();
      await page.waitForURL(/\/ui\/dc1\/kv\/app\/$/);
      expect(await rows(page)).toEqual(["db/", "web/"]);
      await page.getByRole("navigation", { name: "Breadcrumb" }).getByRole("link", { name: "Key/Value" }).click();
      await page.waitForURL(/\/ui\/dc1\/kv\/$/);
      expect(await rows(page)).toEqual(expect.arrayContaining(["app/", "odd key %/", "top"]));

      // A key whose folder and name need escaping opens in its editor and shows its value.
      await page.getByRole("link", { name: "odd key %/" }).click();
      await page.waitForURL(/\/kv\/odd%20key%20%25\/$/);
      await page.getByRole("link", { name: "ü 1" }).click();
      await page.waitForURL(/\/kv\/odd%20key%20%25\/%C3%BC%201\/edit$/);
      expect(await page.locator("h1").textContent()).toBe("ü 1");
      expect(await page.locator("#kv-value").inputValue()).toBe("spaces");
    });
  }, 60_000);
}

test("create a folder and a key through the forms; the JSON toggle rejects invalid JSON and writes nothing", async () => {
  await withPage("light", async (page) => {
    await page.goto(`${agent.httpUrl}/ui/dc1/kv/`);
    await page.getByRole("link", { name: "Create a key or folder" }).click();
    await page.getByLabel("Name").fill("made/");
    await page.getByRole("button", { name: "Create" }).click();
    await page.waitForURL(/\/ui\/dc1\/kv\/made\/$/);
    expect(await page.locator("h1").textContent()).toBe("made/");
    expect(await stored("made/")).toBe("");

    await page.getByRole("link", { name: "Create a key or folder in made/" }).click();
    await page.getByLabel("Name (in made/)").fill("settings");
    await page.getByLabel("Value", { exact: true }).fill("{not json");
    await page.getByLabel("Value is JSON").check();
    await page.getByRole("button", { name: "Create" }).click();
    await page.waitForSelector("#kv-error");
    expect(await page.locator("#kv-error").textContent()).toMatch(/^value: Value is not valid JSON \(.+\)\. Nothing was written\.$/);
    expect(await page.locator("#kv-value").inputValue()).toBe("{not json");
    expect(await stored("made/settings")).toBeUndefined();
    await shotAndAxe(page, "kv-create-error-light");

    await page.getByLabel("Value", { exact: true }).fill('{\n  "ok": true\n}');
    await page.getByRole("button", { name: "Create" }).click();
    await page.waitForURL(/\/ui\/dc1\/kv\/made\/settings\/edit\?saved=1$/);
    expect(await page.locator("#kv-saved").textContent()).toMatch(/^Saved at index \d+\.$/);
    expect(await stored("made/settings")).toBe('{\n  "ok": true\n}');
    await page.getByRole("navigation", { name: "Breadcrumb" }).getByRole("link", { name: "made", exact: true }).click();
    expect(await rows(page)).toEqual(["settings"]);
  });
}, 60_000);

for (const scheme of ["light", "dark"] as const) {
  test(`editor (${scheme}): a concurrent write shows the live notice, then saving gives the CAS conflict with the current value and keeps the text`, async () => {
    const key = `conflict/${scheme}`;
    await put(key, "original");
    await withPage(scheme, async (page) => {
      await page.goto(`${agent.httpUrl}/ui/dc1/kv/${enc(key)}/edit`);
      await page.waitForSelector('body[data-live="on"]', { timeout: 5_000 });
      const opened = Number(await page.locator('input[name="cas"]').getAttribute("value"));
      await page.getByLabel("Value", { exact: true }).fill("mine");
      await shotAndAxe(page, `kv-editor-${scheme}`);

      await put(key, "theirs");
      const now = JSON.parse((await agentCall(agent.httpUrl, "GET", `/v1/kv/${enc(key)}`)).text)[0].ModifyIndex as number;
      await page.waitForSelector("#kv-changed .notice", { timeout: 2_000 });
      expect(await page.locator("#kv-changed").textContent()).toContain(`This key changed since you opened it (index ${opened}→${now}).`);
      // The form was not replaced: the reader's text is still there.
      expect(await page.locator("#kv-value").inputValue()).toBe("mine");

      await page.getByRole("button", { name: "Save" }).click();
      await page.waitForSelector("#kv-conflict");
      expect(await page.locator("#kv-conflict").textContent()).toContain(`This key changed since you opened it (index ${opened}→${now}). Nothing was written.`);
      expect(await page.locator("#kv-current").textContent()).toBe("theirs");
      expect(await page.locator("#kv-value").inputValue()).toBe("mine");
      expect(await stored(key)).toBe("theirs");
      await shotAndAxe(page, `kv-conflict-${scheme}`);

      // Saving again is a deliberate overwrite of the value now shown.
      await page.getByRole("button", { name: "Save" }).click();
      await page.waitForURL(/\/edit\?saved=1$/);
      expect(await stored(key)).toBe("mine");
    });
  }, 60_000);
}

test("a folder's recursive delete asks for confirmation first, then its keys are gone (over the API)", async () => {
  for (const k of ["doomed/a", "doomed/b/c", "doomed-not/keep"]) await put(k, "v");
  await withPage("dark", async (page) => {
    await page.goto(`${agent.httpUrl}/ui/dc1/kv/doomed/`);
    await page.getByRole("link", { name: "Delete doomed/ and everything in it…" }).click();
    await page.waitForURL(/\/kv\/doomed\/delete$/);
    expect(await page.locator("#kv-delete-summary").textContent()).toContain("Deleting doomed/ removes 2 keys in dc1");
    expect(await page.locator("#kv-doomed li").allTextContents()).toEqual(["doomed/a", "doomed/b/c"]);
    expect(await stored("doomed/a")).toBe("v");
    await shotAndAxe(page, "kv-delete-dark");
    await page.getByRole("button", { name: "Delete doomed/ and 2 keys" }).click();
    await page.waitForURL(/\/ui\/dc1\/kv\/$/);
    expect((await agentCall(agent.httpUrl, "GET", "/v1/kv/doomed/?recurse")).status).toBe(404);
    expect(await stored("doomed-not/keep")).toBe("v");
    expect(await rows(page)).not.toContain("doomed/");
  });
}, 60_000);

test("export downloads the folder's keys as consul kv export JSON", async () => {
  await withPage("light", async (page) => {
    await page.goto(`${agent.httpUrl}/ui/dc1/kv/app/`);
    const [download] = await Promise.all([page.waitForEvent("download", { timeout: 5_000 }), page.getByRole("link", { name: "Export app/ as JSON" }).click()]);
    expect(download.suggestedFilename()).toBe("kv-dc1-app.json");
    const rows = JSON.parse(readFileSync(await download.path(), "utf8")) as { key: string; flags: number; value: string }[];
    expect(rows.map((r) => r.key)).toEqual(expect.arrayContaining(["app/db/url", "app/web/cfg", "app/web/port"]));
    expect(rows.every((r) => r.key.startsWith("app/"))).toBe(true);
    expect(rows.find((r) => r.key === "app/db/url")).toEqual({ key: "app/db/url", flags: 0, value: btoa("postgres://db") });
  });
}, 60_000);
