/**
 * `causeway leave` on the leader of a 3-server cluster: it hands leadership to another server before
 * leaving, the new leader removes it from Raft, and writes keep working on the remaining two.
 */
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { poll, type AgentProcess } from "../harness/agent_process.ts";
import { CLI, getJson, startServerCluster } from "../harness/server_cluster.ts";

const work = mkdtempSync(join(tmpdir(), "causeway-leave-"));
const running: AgentProcess[] = [];
afterAll(async () => {
  for (const a of running) await a.stop("SIGKILL").catch(() => {});
  rmSync(work, { recursive: true, force: true });
});

test("the leader transfers leadership when it leaves, and the new leader removes it from Raft", async () => {
  const cluster = await startServerCluster({ work, size: 3, prefix: "lv", running });
  await poll(() => getJson(cluster.agents[0]!, "/v1/status/peers"), (p) => Array.isArray(p) && p.length === 3, 30_000, "3 raft peers");
  const leaderIndex = await cluster.leaderIndex();
  const leader = cluster.agents[leaderIndex]!;
  const oldLeader = await getJson(leader, "/v1/status/leader");
  const others = cluster.agents.filter((_, i) => i !== leaderIndex);

  const leave = Bun.spawnSync([process.execPath, CLI, "leave", "-http-addr", leader.httpUrl]);
  expect(leave.exitCode).toBe(0);
  // The new leader is known right away (a handover, not an election after a timeout).
  const newLeader = await getJson(others[0]!, "/v1/status/leader");
  expect(newLeader).not.toBe("");
  expect(newLeader).not.toBe(oldLeader);
  await poll(() => getJson(others[0]!, "/v1/status/peers"), (p) => Array.isArray(p) && p.length === 2 && !p.includes(oldLeader), 30_000, "the old leader removed from Raft");
  expect(await (await fetch(`${others[1]!.httpUrl}/v1/kv/after-leave`, { method: "PUT", body: "ok" })).json()).toBe(true);
}, 90_000);
