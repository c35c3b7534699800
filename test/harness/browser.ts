/**
 * Headless Chromium (Debian's `chromium`, installed when missing) driven by playwright-core over
 * CDP, for the web UI's browser tests: launch flags that keep Chromium off the network, a guard that
 * aborts and records any request leaving 127.0.0.1, and axe-core's WCAG 2 A/AA rules injected into
 * the page. Never playwright or puppeteer: they download browsers.
 */
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { chromium, type Browser, type Page } from "playwright-core";
import { ensureDebianCommands } from "./debian.ts";

const require = createRequire(import.meta.url);

export async function launchChromium(): Promise<Browser> {
  ensureDebianCommands({ chromium: "chromium" }, "the web UI's browser tests");
  return chromium.launch({
    executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium",
    headless: true,
    args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run", "--disable-quic", "--disable-background-networking",
      "--disable-component-update", "--disable-sync"],
  });
}

/** Aborts every request to a host other than 127.0.0.1 and returns the list of those it aborted. */
export async function offlineGuard(page: Page): Promise<string[]> {
  const refused: string[] = [];
  await page.route("**/*", (route) => {
    const url = route.request().url();
    if (new URL(url).hostname === "127.0.0.1") return route.continue();
    refused.push(url);
    return route.abort();
  });
  return refused;
}

export interface AxeViolation {
  readonly id: string;
  readonly impact: string | null;
  readonly help: string;
  readonly nodes: readonly { readonly target: readonly string[] }[];
}

/** axe-core's WCAG 2 A and AA rules on the page as it is now; the violations, in short. */
export async function axeViolations(page: Page): Promise<string[]> {
  // Evaluated over CDP, which the page's Content-Security-Policy (no inline script) does not apply to.
  await page.evaluate(readFileSync(require.resolve("axe-core/axe.min.js"), "utf8"));
  const r = await page.evaluate(() => (globalThis as unknown as { axe: { run(d: unknown, o: unknown): Promise<{ violations: AxeViolation[] }> } }).axe
    .run(document, { runOnly: ["wcag2a", "wcag2aa"] }));
  return r.violations.map((v) => `${v.id} (${v.impact}): ${v.help} at ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`);
}
