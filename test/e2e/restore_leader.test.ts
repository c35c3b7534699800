/**
 * After a snapshot restore the leader's duties start over on the restored state (Consul's
 * Snapshot.Restore re-runs establishLeadership): restoring a snapshot taken without a Connect CA into a
 * Connect-enabled server leaves it with a working CA again, not with "CA provider is nil" until the
 * next leader election.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { poll, startAgentProcess, type AgentProcess } from "../harness/agent_process.ts";
import { CLI } from "../harness/server_cluster.ts";

const dir = mkdtempSync(join(tmpdir(), "causeway-restore-leader-"));
const running: AgentProcess[] = [];
afterAll(async () => {
  for (const a of running) await a.stop("SIGKILL").catch(() => {});
  rmSync(dir, { recursive: true, force: true });
});

const common = ["-bind", "127.0.0.1", "-http-port", "0", "-dns-port", "-1", "-grpc-port", "-1", "-server-port", "0", "-serf-lan-port", "0", "-serf-wan-port", "0"];
async function start(args: string[]): Promise<AgentProcess> {
  const a = await startAgentProcess(process.execPath, [CLI, "agent", ...args, ...common]);
  running.push(a);
  await poll(() => fetch(`${a.httpUrl}/v1/status/leader`).then((r) => r.text()), (t) => t !== '""', 15_000, "a leader");
  return a;
}

describe("snapshot restore on the leader", () => {
  test("a restored state without a CA gets one again; the chain and leaves work", async () => {
    const plain = await start(["-server", "-bootstrap-expect", "1", "-data-dir", join(dir, "plain"), "-node", "plain"]);
    await fetch(`${plain.httpUrl}/v1/kv/from-plain`, { method: "PUT", body: "1" });
    const snapshot = new Uint8Array(await (await fetch(`${plain.httpUrl}/v1/snapshot`)).arrayBuffer());
    const dev = await start(["-dev", "-node", "dev"]);
    await poll(() => fetch(`${dev.httpUrl}/v1/connect/ca/roots`).then((r) => r.json()) as Promise<{ Roots: unknown[] }>, (r) => r.Roots.length > 0, 10_000, "the CA");
    expect((await fetch(`${dev.httpUrl}/v1/snapshot`, { method: "PUT", body: snapshot })).status).toBe(200);
    expect(await (await fetch(`${dev.httpUrl}/v1/kv/from-plain?raw`)).text()).toBe("1");
    const roots = await poll(() => fetch(`${dev.httpUrl}/v1/connect/ca/roots`).then((r) => r.json()) as Promise<{ Roots: unknown[] }>, (r) => r.Roots.length > 0, 10_000, "a CA after the restore");
    expect(roots.Roots).toHaveLength(1);
    expect((await fetch(`${dev.httpUrl}/v1/discovery-chain/web`)).status).toBe(200);
    expect((await fetch(`${dev.httpUrl}/v1/agent/connect/ca/leaf/web`)).status).toBe(200);
  }, 90_000);
});
