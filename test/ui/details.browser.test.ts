/**
 * The node and instance detail pages in headless Chromium against a real `causeway agent -dev`: the
 * leader marked on the nodes list; a node's health checks, a failing TTL check turning its row
 * critical live; round-trip times from registered coordinates (and the no-coordinate sentence); a
 * session created over the API appearing live on lock-sessions and its Destroy button removing it; an
 * instance's long check output truncated with "Show all" that expands it; a proxy's upstreams as
 * registered; zero axe violations (WCAG 2 A and AA) in light and dark on every tab; no request off
 * 127.0.0.1. Screenshots go to test/ui/screenshots/.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { Browser, Page } from "playwright-core";
import { agentCall, poll, type AgentProcess } from "../harness/agent_process.ts";
import { axeViolations, launchChromium, screenshotPath, shotAndAxe, withGuardedPage } from "../harness/browser.ts";
import { startUiDevAgent } from "../harness/ui_agent.ts";
import { distanceMs } from "../../src/membership/index.ts";

const AGENT_NODE = "ui-details";
/** A check output of 6,003 bytes: over the 4 KB the page shows before "Show all". */
const LONG_OUTPUT = `${"0123456789".repeat(600)}END`;
const UPSTREAMS = [
  { DestinationName: "db", LocalBindPort: 9191 },
  { DestinationName: "cache", Datacenter: "dc2", LocalBindAddress: "127.0.0.5", LocalBindPort: 9292 },
];
/** n1 at the origin, n2 2 ms and n3 5 ms away along one axis (seconds), each with a 0.1 ms height. */
const COORDS = { n1: 0, n2: 0.002, n3: 0.005 } as const;
const coordOf = (x: number) => ({ Vec: [x, 0, 0, 0, 0, 0, 0, 0], Error: 0.2, Adjustment: 0, Height: 0.0001 });

let agent: AgentProcess;
let browser: Browser;
const api = (method: string, path: string, body?: unknown) => agentCall(agent.httpUrl, method, path, undefined, body);

beforeAll(async () => {
  agent = await startUiDevAgent(AGENT_NODE);
  for (const n of ["n1", "n2", "n3", "n4"]) expect((await api("PUT", "/v1/catalog/register", { Node: n, Address: `10.0.0.${n.slice(1)}` })).json).toBe(true);
  expect((await api("PUT", "/v1/catalog/register", {
    Node: "n1", Address: "10.0.0.1", Service: { ID: "logger-1", Service: "logger", Port: 514, Meta: { team: "ops" } },
    Check: { CheckID: "logger-verbose", Name: "verbose output", Status: "warning", ServiceID: "logger-1", Output: LONG_OUTPUT },
  })).json).toBe(true);
  expect((await api("PUT", "/v1/catalog/register", {
    Node: "n1", Address: "10.0.0.1",
    Service: { Kind: "connect-proxy", ID: "logger-1-sidecar-proxy", Service: "logger-sidecar-proxy", Port: 21000, Proxy: { DestinationServiceName: "logger", Upstreams: UPSTREAMS } },
  })).json).toBe(true);
  for (const [node, x] of Object.entries(COORDS)) expect((await api("PUT", "/v1/coordinate/update", { Node: node, Coord: coordOf(x) })).status).toBe(200);
  // A TTL check on the agent itself, passing; the agent syncs it to the catalog.
  expect((await api("PUT", "/v1/agent/check/register", { ID: "heartbeat", Name: "heartbeat", TTL: "10m" })).status).toBe(200);
  expect((await api("PUT", "/v1/agent/check/pass/heartbeat?note=beating")).status).toBe(200);
  await poll(() => api("GET", `/v1/health/node/${AGENT_NODE}`), (r) => r.json?.some((c: { CheckID: string; Status: string }) => c.CheckID === "heartbeat" && c.Status === "passing"), 10_000, "the TTL check in the catalog");
  await poll(() => api("GET", "/v1/coordinate/nodes"), (r) => r.json?.length === 3, 15_000, "the coordinates applied");
  browser = await launchChromium();
}, 180_000);

afterAll(async () => {
  await browser?.close().catch(() => {});
  await agent?.stop("SIGKILL").catch(() => {});
});

const withPage = (scheme: "light" | "dark", body: (page: Page) => Promise<void>) => withGuardedPage(browser, scheme, body, { width: 1280, height: 800 });

const rowNames = (page: Page, table: string) => page.locator(`${table} tbody th`).allTextContents();

test("the nodes list marks the leader's node, which links to its health checks", async () => {
  await withPage("light", async (page) => {
    await page.goto(`${agent.httpUrl}/ui/dc1/nodes`);
    expect(await page.locator(`tr[data-node="${AGENT_NODE}"] td`).nth(1).textContent()).toContain("leader");
    expect(await page.locator("#nodes .node-leader").count()).toBe(1);
    expect(await page.locator("tr[data-leader]").getAttribute("data-node")).toBe(AGENT_NODE);
    await shotAndAxe(page, "nodes-leader-light");
    await page.getByRole("link", { name: AGENT_NODE, exact: true }).click();
    await page.waitForURL(new RegExp(`/ui/dc1/nodes/${AGENT_NODE}/health-checks$`));
    expect(await page.locator("h1").textContent()).toBe(AGENT_NODE);
  });
}, 60_000);

test("a node's health checks: each listed with its status in words; failing the TTL check turns its row critical live", async () => {
  await withPage("light", async (page) => {
    await page.goto(`${agent.httpUrl}/ui/dc1/nodes/${AGENT_NODE}/health-checks`);
    await page.waitForSelector('body[data-live="on"]', { timeout: 5_000 });
    expect(await rowNames(page, "#node-checks-live")).toEqual(expect.arrayContaining(["Serf Health Status serfHealth", "heartbeat"]));
    expect(await page.locator('tr[data-check="heartbeat"] td').first().textContent()).toContain("passing");
    expect((await api("PUT", "/v1/agent/check/fail/heartbeat?note=no%20pulse")).status).toBe(200);
    await page.waitForSelector('tr[data-check="heartbeat"] td.health-critical', { timeout: 5_000 });
    expect(await page.locator('tr[data-check="heartbeat"]').textContent()).toContain("no pulse");
    expect(await page.locator("#live-status").textContent()).toContain("Updated:");
    expect((await api("PUT", "/v1/agent/check/pass/heartbeat?note=beating")).status).toBe(200);
    await page.waitForSelector('tr[data-check="heartbeat"] td.health-passing', { timeout: 5_000 });
  });
}, 60_000);

test("round-trip time: the other nodes' estimated distances, nearest first; a node without a coordinate says so", async () => {
  await withPage("light", async (page) => {
    await page.goto(`${agent.httpUrl}/ui/dc1/nodes/n1/round-trip-time`);
    const rows = await page.locator("#rtt tbody tr").evaluateAll((trs) => trs.map((tr) => [...tr.children].map((c) => c.textContent ?? "")));
    const expected = (["n2", "n3"] as const).map((n) => [n, `${distanceMs(coordOf(COORDS.n1), coordOf(COORDS[n])).toFixed(2)} ms`]);
    expect(expected).toEqual([["n2", "2.20 ms"], ["n3", "5.20 ms"]]);
    // The agent's own node joins the list once it has sent its first coordinate.
    expect(rows.filter(([n]) => n !== AGENT_NODE)).toEqual(expected);
    const ms = rows.map(([, t]) => Number.parseFloat(t!));
    expect(ms).toEqual([...ms].sort((a, b) => a - b));
    expect(await page.locator("#rtt-stats").textContent()).toContain(`Maximum5.20 ms`);
    await page.goto(`${agent.httpUrl}/ui/dc1/nodes/n4/round-trip-time`);
    expect(await page.locator("#rtt-none").textContent()).toContain("Node n4 has no coordinate yet");
  });
}, 60_000);

test("lock sessions: a session created over the API appears live; its Destroy button removes the row", async () => {
  await withPage("light", async (page) => {
    await page.goto(`${agent.httpUrl}/ui/dc1/nodes/${AGENT_NODE}/lock-sessions`);
    await page.waitForSelector('body[data-live="on"]', { timeout: 5_000 });
    const created = await api("PUT", "/v1/session/create", { Name: "ui-lock", TTL: "60s" });
    const id = created.json?.ID as string;
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
    await page.waitForSelector(`tr[data-session="${id}"]`, { timeout: 5_000 });
    expect(await page.locator(`tr[data-session="${id}"] th`).textContent()).toBe("ui-lock");
    await page.getByRole("button", { name: "Destroy session ui-lock" }).click();
    await page.waitForURL(/destroyed=/);
    expect(await page.locator(`tr[data-session="${id}"]`).count()).toBe(0);
    expect(await page.locator("#destroyed").textContent()).toBe(`Session ${id} destroyed.`);
    expect((await api("GET", `/v1/session/info/${id}`)).json).toEqual([]);
  });
}, 60_000);

test("an instance's long check output is truncated at 4 KB with a Show all link that shows the rest", async () => {
  await withPage("light", async (page) => {
    await page.goto(`${agent.httpUrl}/ui/dc1/services/logger/instances`);
    await page.getByRole("link", { name: "logger-1", exact: true }).click();
    await page.waitForURL(/\/ui\/dc1\/services\/logger\/instances\/n1\/logger-1\/health-checks$/);
    const output = page.locator('tr[data-check="logger-verbose"] pre.check-output');
    expect((await output.textContent())!.length).toBe(4096);
    expect(await page.locator('tr[data-check="logger-verbose"]').textContent()).toContain("Showing the first 4.0 KB of 5.9 KB.");
    await page.getByRole("link", { name: "Show all output of verbose output" }).click();
    await page.waitForURL(/full=logger-verbose/);
    expect(await output.textContent()).toBe(LONG_OUTPUT);
    expect(await page.getByRole("link", { name: "Show less output of verbose output" }).count()).toBe(1);
  });
}, 60_000);

test("a proxy's upstreams tab lists its upstreams as registered", async () => {
  await withPage("light", async (page) => {
    await page.goto(`${agent.httpUrl}/ui/dc1/services/logger-sidecar-proxy/instances/n1/logger-1-sidecar-proxy/upstreams`);
    const rows = await page.locator("#upstreams tbody tr").evaluateAll((trs) => trs.map((tr) => [...tr.children].map((c) => c.textContent)));
    expect(rows).toEqual([["db", "dc1 (local)", "127.0.0.1:9191", "service"], ["cache", "dc2", "127.0.0.5:9292", "service"]]);
  });
}, 60_000);

const PAGES: readonly (readonly [string, string])[] = [
  ["node-health-checks", `/ui/dc1/nodes/${AGENT_NODE}/health-checks`],
  ["node-service-instances", "/ui/dc1/nodes/n1/service-instances"],
  ["node-round-trip-time", "/ui/dc1/nodes/n1/round-trip-time"],
  ["node-lock-sessions", `/ui/dc1/nodes/${AGENT_NODE}/lock-sessions`],
  ["node-metadata", `/ui/dc1/nodes/${AGENT_NODE}/metadata`],
  ["instance-health-checks", "/ui/dc1/services/logger/instances/n1/logger-1/health-checks"],
  ["instance-upstreams", "/ui/dc1/services/logger-sidecar-proxy/instances/n1/logger-1-sidecar-proxy/upstreams"],
  ["instance-exposed-paths", "/ui/dc1/services/logger-sidecar-proxy/instances/n1/logger-1-sidecar-proxy/exposed-paths"],
  ["instance-addresses", "/ui/dc1/services/logger/instances/n1/logger-1/addresses"],
  ["instance-metadata", "/ui/dc1/services/logger/instances/n1/logger-1/metadata"],
];

for (const scheme of ["light", "dark"] as const) {
  test(`every node and instance tab (${scheme}): no axe violations, a screenshot`, async () => {
    await withPage(scheme, async (page) => {
      // A session, so that lock-sessions shows a row with its Destroy button.
      expect((await api("PUT", "/v1/session/create", { Name: `axe-${scheme}` })).status).toBe(200);
      for (const [name, path] of PAGES) {
        const res = await page.goto(`${agent.httpUrl}${path}`);
        expect(res?.status(), path).toBe(200);
        await page.screenshot({ path: screenshotPath(`${name}-${scheme}`), fullPage: true });
        expect(await axeViolations(page), path).toEqual([]);
      }
    });
  }, 120_000);
}
