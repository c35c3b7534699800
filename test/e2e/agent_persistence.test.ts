/**
 * Services and checks registered through the HTTP API survive an agent restart (Consul's persisted
 * services/, checks/ and checks/state/), with a TTL check's status; -dev keeps nothing.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { poll, startAgentProcess, type AgentProcess } from "../harness/agent_process.ts";
import { CLI } from "../harness/server_cluster.ts";

const dataDir = mkdtempSync(join(tmpdir(), "causeway-persist-"));
const running: AgentProcess[] = [];
afterAll(async () => {
  for (const a of running) await a.stop("SIGKILL").catch(() => {});
  rmSync(dataDir, { recursive: true, force: true });
});

async function start(): Promise<AgentProcess> {
  const a = await startAgentProcess(process.execPath, [
    CLI, "agent", "-server", "-bootstrap-expect", "1", "-data-dir", dataDir, "-node", "persist", "-bind", "127.0.0.1",
    "-http-port", "0", "-dns-port", "-1", "-grpc-port", "-1", "-server-port", "0", "-serf-lan-port", "0", "-serf-wan-port", "0",
  ]);
  running.push(a);
  await poll(() => fetch(`${a.httpUrl}/v1/status/leader`).then((r) => r.text()), (t) => t !== '""', 15_000, "a leader");
  return a;
}

describe("agent state across a restart", () => {
  test("an API-registered service with a TTL check comes back with its status and its maintenance mode", async () => {
    const first = await start();
    const put = (path: string, body?: unknown) => fetch(first.httpUrl + path, { method: "PUT", body: body === undefined ? undefined : JSON.stringify(body) });
    expect((await put("/v1/agent/service/register", { Name: "web", ID: "web-1", Port: 8080, Check: { CheckID: "web-ttl", TTL: "10m" } })).status).toBe(200);
    expect((await put("/v1/agent/check/register", { Name: "mem", TTL: "10m" })).status).toBe(200);
    expect((await put("/v1/agent/check/pass/web-ttl?note=ok")).status).toBe(200);
    expect((await put("/v1/agent/service/maintenance/web-1?enable=true&reason=upgrading")).status).toBe(200);
    expect(await first.stop("SIGTERM")).toBe(0);

    const second = await start();
    const services = (await (await fetch(`${second.httpUrl}/v1/agent/services`)).json()) as Record<string, { Port: number }>;
    expect(Object.keys(services)).toEqual(["web-1"]);
    expect(services["web-1"]!.Port).toBe(8080);
    const checks = (await (await fetch(`${second.httpUrl}/v1/agent/checks`)).json()) as Record<string, { Status: string; Output: string }>;
    expect(checks["web-ttl"]).toMatchObject({ Status: "passing", Output: "ok" });
    expect(checks["mem"]?.Status).toBe("critical");
    // Maintenance mode is kept too (Consul persists its maintenance check like any API-added one).
    expect(checks["_service_maintenance:web-1"]).toMatchObject({ Status: "critical", Output: "" });
    expect((checks["_service_maintenance:web-1"] as unknown as { Notes: string }).Notes).toBe("upgrading");
  }, 90_000);
});
