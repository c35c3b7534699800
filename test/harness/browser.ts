/**
 * Headless Chromium (Debian's `chromium`, installed when missing) driven by playwright-core over
 * CDP, for the web UI's browser tests: launch flags that keep Chromium off the network, a guard that
 * aborts and records any request leaving 127.0.0.1, and axe-core's WCAG 2 A/AA rules injected into
 * the page. Never playwright or puppeteer: they download browsers.
 */
import { expect } from "bun:test";
import { mkdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { chromium, type Browser, type Page } from "playwright-core";
import { ensureDebianCommands } from "./debian.ts";

const require = createRequire(import.meta.url);

/** The absolute path of test/ui/screenshots, where the browser tests' screenshots go (not committed). */
export const SCREENSHOTS = join(dirname(fileURLToPath(import.meta.url)), "..", "ui", "screenshots");

/** `<SCREENSHOTS>/<name>.png`, creating the folder when it is missing. */
export function screenshotPath(name: string): string {
  mkdirSync(SCREENSHOTS, { recursive: true });
  return join(SCREENSHOTS, `${name}.png`);
}

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

/**
 * Opens a new page (in its own browser context) of colour scheme `scheme` and size `viewport`, with the
 * offline guard on; runs `body`, then expects the guard to have refused nothing. The page is closed
 * whether `body` succeeds or throws.
 */
export async function withGuardedPage(browser: Browser, scheme: "light" | "dark", body: (page: Page) => Promise<void>,
  viewport: { width: number; height: number } = { width: 1280, height: 900 }): Promise<void> {
  const page = await browser.newPage({ viewport, colorScheme: scheme });
  const refused = await offlineGuard(page);
  try {
    await body(page);
    expect(refused).toEqual([]);
  } finally {
    await page.close();
  }
}

/** A full-page screenshot of the page as it is now to `screenshotPath(name)`, then expects zero axe violations. */
export async function shotAndAxe(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: screenshotPath(name), fullPage: true });
  expect(await axeViolations(page)).toEqual([]);
}
