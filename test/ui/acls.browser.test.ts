/**
 * The ACL pages in headless Chromium against real `causeway agent -dev` agents: one with ACLs on
 * (default deny, a known initial management token), one with ACLs off. What a person sees: without a
 * login the pages ask for a token; a bad token is refused in words; logging in sets an HttpOnly cookie
 * and lists the tokens, policies and roles seeded over the API; a policy and a role made through the
 * forms are then there over the API; with a read-only token (acl = "read") the write buttons are
 * absent and a forged same-origin POST gets 403; ACLs off shows the explanatory page. Zero axe
 * violations (WCAG 2 A and AA) in light and dark, nothing off 127.0.0.1, screenshots in test/ui/screenshots/.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { agentCall, poll, type AgentProcess } from "../harness/agent_process.ts";
import { axeViolations, launchChromium, screenshotPath, shotAndAxe, withGuardedPage } from "../harness/browser.ts";
import { startUiDevAgent } from "../harness/ui_agent.ts";

const MANAGEMENT = "6f1d2c3b-4a59-4e8f-9d7c-0b1a2c3d4e5f";
let agent: AgentProcess;
let aclOff: AgentProcess;
let browser: Browser;
let configDir: string;
/** The seeded read-only token (policy acl-reader: acl = "read") and its accessor. */
let reader: { secret: string; accessor: string };

const api = (method: string, path: string, body?: unknown, token = MANAGEMENT) => agentCall(agent.httpUrl, method, path, token, body);

beforeAll(async () => {
  configDir = mkdtempSync(join(tmpdir(), "causeway-ui-acl-"));
  const config = join(configDir, "acl.json");
  writeFileSync(config, JSON.stringify({ acl: { enabled: true, default_policy: "deny", tokens: { initial_management: MANAGEMENT } } }));
  [agent, aclOff] = await Promise.all([startUiDevAgent("ui-acl", ["-config-file", config], MANAGEMENT), startUiDevAgent("ui-acl-off")]);
  // The management token is made by the leader once it leads: wait until it is accepted.
  await poll(() => api("GET", "/v1/acl/token/self"), (r) => r.status === 200, 30_000, "the initial management token");
  const policy = await api("PUT", "/v1/acl/policy", { Name: "acl-reader", Description: "reads ACLs", Rules: 'acl = "read"' });
  expect(policy.status).toBe(200);
  expect((await api("PUT", "/v1/acl/role", { Name: "auditors", Description: "audit team", Policies: [{ Name: "acl-reader" }] })).status).toBe(200);
  const token = await api("PUT", "/v1/acl/token", { Description: "read-only auditor", Policies: [{ Name: "acl-reader" }] });
  const json = token.json as { SecretID: string; AccessorID: string };
  reader = { secret: json.SecretID, accessor: json.AccessorID };
  browser = await launchChromium();
}, 180_000);

afterAll(async () => {
  await browser?.close().catch(() => {});
  await Promise.all([agent?.stop("SIGKILL").catch(() => {}), aclOff?.stop("SIGKILL").catch(() => {})]);
  if (configDir) rmSync(configDir, { recursive: true, force: true });
});

/** A page in a fresh browser context of its own (no cookies), guarded against requests off 127.0.0.1. */
const withPage = (scheme: "light" | "dark", body: (page: Page) => Promise<void>) => withGuardedPage(browser, scheme, body);

async function logIn(page: Page, secret: string): Promise<void> {
  await page.goto(`${agent.httpUrl}/ui/dc1/acls/login`);
  await page.getByLabel("Token SecretID").fill(secret);
  await page.getByRole("button", { name: "Log in" }).click();
  await page.waitForURL(/\/ui\/dc1\/acls\/tokens$/, { timeout: 5_000 });
}

const texts = (page: Page, selector: string) => page.locator(selector).allTextContents();

test("without a login the ACL pages ask for one; a bad token is refused in words; the management token logs in with an HttpOnly cookie", async () => {
  await withPage("light", async (page) => {
    const context = page.context();
    await page.goto(`${agent.httpUrl}/ui/dc1/acls`);
    expect(new URL(page.url()).pathname).toBe("/ui/dc1/acls/tokens");
    expect(await page.locator("h1").textContent()).toBe("Log in to see access controls");
    expect(await page.getByRole("alert").textContent()).toBe("Log in with an ACL token to see this page.");
    await shotAndAxe(page, "acls-login-light");

    await page.getByLabel("Token SecretID").fill("00000000-aaaa-4bbb-8ccc-dddddddddddd");
    await page.getByRole("button", { name: "Log in" }).click();
    await page.waitForSelector("#acl-message", { timeout: 5_000 });
    expect(await page.locator("#acl-message").textContent()).toContain("This token was not accepted");
    expect(await context.cookies()).toEqual([]);

    await page.getByLabel("Token SecretID").fill(MANAGEMENT);
    await page.getByRole("button", { name: "Log in" }).click();
    await page.waitForURL(/\/ui\/dc1\/acls\/tokens$/, { timeout: 5_000 });
    const cookie = (await context.cookies()).find((c) => c.name === "causeway-token");
    expect(cookie).toMatchObject({ value: MANAGEMENT, httpOnly: true, sameSite: "Strict", path: "/ui/" });
    expect(await page.locator("#acl-session").textContent()).toContain("may change ACLs");
    expect(await texts(page, "#acl-tokens tbody tr td:nth-child(2)")).toEqual(expect.arrayContaining(["Anonymous Token", "Master Token", "read-only auditor"]));
    expect(await page.locator(`tr[data-token="${reader.accessor}"] td`).allTextContents()).toEqual(["read-only auditor", "acl-reader", "none", "global"]);
    expect(await page.content()).not.toContain(reader.secret);

    await page.getByRole("link", { name: "Policies", exact: true }).click();
    expect(await texts(page, "#acl-policies tbody th")).toEqual(expect.arrayContaining(["global-management", "acl-reader"]));
    await page.getByRole("link", { name: "Roles", exact: true }).click();
    expect(await page.locator('tr[data-role="auditors"] td').allTextContents()).toEqual(["audit team", "acl-reader", "none"]);

    // A token's SecretID is shown only once asked for.
    await page.goto(`${agent.httpUrl}/ui/dc1/acls/tokens/${reader.accessor}`);
    expect(await page.locator("#acl-secret-id").isVisible()).toBe(false);
    await page.getByText("Show the Secret ID").click();
    expect(await page.locator("#acl-secret-id").textContent()).toBe(reader.secret);

    // Logging out clears the cookie.
    await page.getByRole("button", { name: "Log out" }).click();
    await page.waitForURL(/\/acls\/login\?loggedout=1$/, { timeout: 5_000 });
    expect((await context.cookies()).filter((c) => c.name === "causeway-token")).toEqual([]);
  });
}, 60_000);

test("a policy and a role made through the forms are then there over the API; the built-in policy saves unchanged", async () => {
  await withPage("light", async (page) => {
    await logIn(page, MANAGEMENT);
    await page.goto(`${agent.httpUrl}/ui/dc1/acls/policies`);
    await page.getByRole("link", { name: "Create a policy" }).click();
    await page.getByLabel("Name").fill("web-writers");
    await page.getByLabel("Description").fill("writes web");
    await page.getByLabel("Rules (HCL or JSON)").fill('service "web" {\n  policy = "write"\n}');
    await page.getByRole("button", { name: "Save policy" }).click();
    await page.waitForURL(/\/acls\/policies\/[0-9a-f-]{36}\?saved=1$/, { timeout: 5_000 });
    expect(await page.locator("#acl-saved").textContent()).toBe("Saved the policy.");
    const policy = await api("GET", "/v1/acl/policy/name/web-writers");
    expect(policy.json).toMatchObject({ Name: "web-writers", Description: "writes web", Rules: 'service "web" {\n  policy = "write"\n}' });

    await page.goto(`${agent.httpUrl}/ui/dc1/acls/roles/create`);
    await page.getByLabel("Name").fill("web-team");
    await page.getByLabel("web-writers").check();
    await page.getByRole("button", { name: "Save role" }).click();
    await page.waitForURL(/\/acls\/roles\/[0-9a-f-]{36}\?saved=1$/, { timeout: 5_000 });
    const role = await api("GET", "/v1/acl/role/name/web-team");
    expect(role.json).toMatchObject({ Name: "web-team", Policies: [{ ID: (policy.json as { ID: string }).ID, Name: "web-writers" }] });

    // The built-in policy's rules cannot change: saving its editor as shown (a renamed description) keeps them intact.
    await page.goto(`${agent.httpUrl}/ui/dc1/acls/policies/00000000-0000-0000-0000-000000000001`);
    await page.getByLabel("Description").fill("everything");
    await page.getByRole("button", { name: "Save policy" }).click();
    await page.waitForURL(/\?saved=1$/, { timeout: 5_000 });
    expect((await api("GET", "/v1/acl/policy/00000000-0000-0000-0000-000000000001")).json).toMatchObject({ Name: "global-management", Description: "everything" });
  });
}, 60_000);

test("with a read-only token the write buttons are absent and a forged POST gets 403 in words", async () => {
  await withPage("light", async (page) => {
    await logIn(page, reader.secret);
    expect(await page.locator("#acl-session").textContent()).toContain("may not change ACLs (read only)");
    for (const path of ["tokens", "policies", "roles", `tokens/${reader.accessor}`]) {
      await page.goto(`${agent.httpUrl}/ui/dc1/acls/${path}`);
      expect(await page.locator("main a.acl-create, main textarea, main input[type=checkbox], main form.acl-delete").count()).toBe(0);
      expect(await page.locator('main form[method="post"]').count()).toBe(1); // Log out
    }
    expect(await page.locator("main").textContent()).toContain("hidden: only a token that may write ACLs sees it");
    const forged = await page.request.post(`${agent.httpUrl}/ui/dc1/acls/policies/create`, {
      form: { name: "sneaky", rules: 'acl = "write"' }, headers: { Origin: agent.httpUrl }, maxRedirects: 0,
    });
    expect(forged.status()).toBe(403);
    expect(await forged.text()).toContain("Your token may not do this: the agent answered &quot;Permission denied&quot;.");
    expect((await api("GET", "/v1/acl/policy/name/sneaky")).status).toBe(403);
  });
}, 60_000);

test("an agent with ACLs off explains how to turn them on (200)", async () => {
  await withPage("light", async (page) => {
    const res = await page.goto(`${aclOff.httpUrl}/ui/dc1/acls/policies`);
    expect(res?.status()).toBe(200);
    expect(await page.locator("h1").textContent()).toBe("Access controls are off");
    expect(await page.locator("#acl-off").textContent()).toContain("ACLs are disabled in dc1");
    expect(await page.locator("pre.acl-config").first().textContent()).toContain("enabled = true");
    await shotAndAxe(page, "acls-off-light");
  });
}, 60_000);

for (const scheme of ["light", "dark"] as const) {
  test(`every ACL page (${scheme}): no axe violations, screenshots`, async () => {
    await withPage(scheme, async (page) => {
      await logIn(page, MANAGEMENT);
      const policyId = ((await api("GET", "/v1/acl/policy/name/acl-reader")).json as { ID: string }).ID;
      const roleId = ((await api("GET", "/v1/acl/role/name/auditors")).json as { ID: string }).ID;
      const pages: [string, string][] = [
        ["tokens", "tokens"], [`tokens/${reader.accessor}`, "token"], ["tokens/create", "token-create"], ["policies", "policies"],
        [`policies/${policyId}`, "policy"], ["policies/create", "policy-create"], ["roles", "roles"], [`roles/${roleId}`, "role"], ["login", "login-form"],
      ];
      for (const [path, name] of pages) {
        await page.goto(`${agent.httpUrl}/ui/dc1/acls/${path}`);
        await page.screenshot({ path: screenshotPath(`acls-${name}-${scheme}`), fullPage: true });
        expect({ path, violations: await axeViolations(page) }).toEqual({ path, violations: [] });
      }
      await page.goto(`${aclOff.httpUrl}/ui/dc1/acls/tokens`);
      expect({ path: "acls off", violations: await axeViolations(page) }).toEqual({ path: "acls off", violations: [] });
    });
  }, 90_000);
}
