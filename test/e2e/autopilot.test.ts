/**
 * Autopilot on three real server processes: the leader writes the default configuration, judges all
 * three servers healthy (failure tolerance 1), and `operator autopilot set-config` changes the
 * configuration every server then reads back.
 */
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { poll, type AgentProcess } from "../harness/agent_process.ts";
import { CLI, getJson, startServerCluster } from "../harness/server_cluster.ts";

const work = mkdtempSync(join(tmpdir(), "causeway-autopilot-"));
const running: AgentProcess[] = [];
afterAll(async () => {
  for (const a of running) await a.stop("SIGKILL").catch(() => {});
  rmSync(work, { recursive: true, force: true });
});

const cli = (a: AgentProcess, ...args: string[]) => {
  const r = Bun.spawnSync([process.execPath, CLI, "operator", "autopilot", ...args, "-http-addr", a.httpUrl]);
  return { code: r.exitCode, out: r.stdout.toString(), err: r.stderr.toString() };
};

test("a 3-server cluster is healthy with failure tolerance 1, and set-config is read back", async () => {
  const cluster = await startServerCluster({ work, size: 3, prefix: "ap", running });
  const [a, b, c] = cluster.agents as [AgentProcess, AgentProcess, AgentProcess];
  await poll(() => getJson(a, "/v1/status/peers"), (p) => Array.isArray(p) && p.length === 3, 30_000, "3 raft peers");

  const health = await poll(
    async () => {
      const res = await fetch(`${b.httpUrl}/v1/operator/autopilot/health`);
      return { status: res.status, body: (await res.json()) as any };
    },
    (h) => h.status === 200 && h.body.Healthy === true && h.body.Servers?.length === 3,
    30_000,
    "3 healthy servers",
  );
  expect(health.body.FailureTolerance).toBe(1);
  const leader = await getJson(a, "/v1/status/leader");
  expect(health.body.Servers.filter((s: any) => s.Leader).map((s: any) => s.Address)).toEqual([leader]);
  for (const s of health.body.Servers) {
    expect(s).toMatchObject({ Healthy: true, Voter: true, SerfStatus: "alive" });
    expect(["ap0", "ap1", "ap2"]).toContain(s.Name);
    expect(s.LastTerm).toBeGreaterThan(0);
    expect(s.LastIndex).toBeGreaterThan(0);
    expect(s.StableSince).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
  }

  const before = await getJson(c, "/v1/operator/autopilot/configuration");
  expect(before).toMatchObject({ CleanupDeadServers: true, LastContactThreshold: "200ms", MaxTrailingLogs: 250, ServerStabilizationTime: "10s" });

  expect(cli(a, "set-config", "-cleanup-dead-servers=false")).toEqual({ code: 0, out: "Configuration updated!\n", err: "" });
  const got = cli(c, "get-config");
  expect(got.code).toBe(0);
  expect(got.out).toContain("CleanupDeadServers = false\nLastContactThreshold = 200ms\n");
  const after = await getJson(b, "/v1/operator/autopilot/configuration");
  expect(after.CleanupDeadServers).toBe(false);
  expect(after.ModifyIndex).toBeGreaterThan(before.ModifyIndex);

  // A bad write is refused with 400 and changes nothing.
  const bad = await fetch(`${a.httpUrl}/v1/operator/autopilot/configuration`, { method: "PUT", body: '{"LastContactThreshold":"soon"}' });
  expect(bad.status).toBe(400);
  expect(await bad.text()).toBe("Error parsing autopilot config: time: invalid duration soon\n");
  expect((await getJson(a, "/v1/operator/autopilot/configuration")).ModifyIndex).toBe(after.ModifyIndex);
}, 90_000);
