/**
 * The web UI served by a real `causeway agent -dev` (UI on in -dev): the root and /ui/ lead to the
 * local datacenter's services page, which lists what the catalog holds, with its health in words,
 * under the Content-Security-Policy. Browser tests (Chromium, axe) come with the live pages.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { agentCall, poll, startAgentProcess, type AgentProcess } from "../harness/agent_process.ts";

let agent: AgentProcess;
beforeAll(async () => {
  agent = await startAgentProcess(process.execPath, ["src/main/cli.ts", "agent", "-dev", "-node", "ui-agent", "-bind", "127.0.0.1", "-http-port", "0", "-dns-port", "-1",
    "-grpc-port", "-1", "-server-port", "0", "-serf-lan-port", "0", "-serf-wan-port", "0"]);
  await poll(() => agentCall(agent.httpUrl, "GET", "/v1/status/leader"), (r) => r.status === 200 && r.json !== "", 20_000, "a leader");
});
afterAll(async () => {
  await agent?.stop("SIGKILL").catch(() => {});
});

test("/ and /ui/ lead to the services page, which lists the catalog's services with their health", async () => {
  expect((await fetch(`${agent.httpUrl}/`, { redirect: "manual" })).headers.get("Location")).toBe("/ui/");
  expect((await fetch(`${agent.httpUrl}/ui/`, { redirect: "manual" })).headers.get("Location")).toBe("/ui/dc1/services");
  const register = await agentCall(agent.httpUrl, "PUT", "/v1/catalog/register", undefined, {
    Node: "web1", Address: "10.0.0.1", Service: { Service: "web", Tags: ["v1"], Port: 80 }, Check: { CheckID: "web", Name: "web", Status: "critical", ServiceID: "web" },
  });
  expect(register.json).toBe(true);
  // The API the page reads, as Consul's UI reads it.
  const summaries = (await agentCall(agent.httpUrl, "GET", "/v1/internal/ui/services")).json as { Name: string; ChecksCritical: number }[];
  expect(summaries.find((s) => s.Name === "web")?.ChecksCritical).toBe(1);
  const res = await fetch(`${agent.httpUrl}/ui/dc1/services`);
  expect(res.status).toBe(200);
  expect(res.headers.get("Content-Security-Policy")).toContain("default-src 'self'");
  const html = await res.text();
  expect(html).toContain('<tr data-service="consul">');
  expect(html).toMatch(/<tr data-service="web"><th scope="row"><a href="\/ui\/dc1\/services\/web\/instances">web<\/a><\/th><td class="health-critical">/);
  expect(html).toContain("<title>Services – dc1 – Causeway</title>");
  // Its assets come from the agent itself.
  const css = /href="(\/ui\/assets\/style-[0-9a-f]+\.css)"/.exec(html)![1]!;
  expect((await fetch(`${agent.httpUrl}${css}`)).status).toBe(200);
  // The API is untouched by the UI's routes.
  expect((await fetch(`${agent.httpUrl}/v1/status/leader`)).status).toBe(200);
});

test("the live stream pushes a service registered over the API within 2 s", async () => {
  const page = await (await fetch(`${agent.httpUrl}/ui/dc1/services`)).text();
  const url = /data-live-url="([^"]+)"/.exec(page)![1]!.replaceAll("&amp;", "&");
  const since = /data-live-index="(\d+)"/.exec(page)![1]!;
  const abort = new AbortController();
  const res = await fetch(`${agent.httpUrl}${url}&since=${since}`, { signal: abort.signal });
  const reader = res.body!.getReader();
  let text = "";
  const until = async (s: string) => {
    while (!text.includes(s)) text += new TextDecoder().decode((await reader.read()).value);
  };
  try {
    await until("event: open");
    const t0 = performance.now();
    expect((await agentCall(agent.httpUrl, "PUT", "/v1/catalog/register", undefined, { Node: "api1", Address: "10.0.0.2", Service: { Service: "api", Port: 81 } })).json).toBe(true);
    await until('<tr data-service="api">');
    expect(performance.now() - t0).toBeLessThan(2_000);
  } finally {
    abort.abort();
    await reader.cancel().catch(() => {});
  }
});
