/**
 * Three `causeway agent -server -bootstrap-expect 3 -retry-join ...` processes find each other by gossip
 * and elect a leader; when one is killed the others mark it failed and keep a leader; restarted, it rejoins.
 */
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort, poll, startAgentProcess, type AgentProcess } from "../harness/agent_process.ts";

const cli = join(import.meta.dir, "..", "..", "src", "main", "cli.ts");
const work = mkdtempSync(join(tmpdir(), "causeway-cluster-"));
const running: AgentProcess[] = [];
afterAll(async () => {
  for (const a of running) await a.stop("SIGKILL").catch(() => {});
  rmSync(work, { recursive: true, force: true });
});



const getJson = async (a: AgentProcess, path: string) => (await fetch(`${a.httpUrl}${path}`)).json() as Promise<any>;

test("three servers bootstrap from gossip, survive losing one, and take it back", async () => {
  const lanPorts = await Promise.all([freePort(), freePort(), freePort()]);
  const start = (i: number) =>
    startAgentProcess(process.execPath, [
      cli, "agent", "-server", "-bootstrap-expect", "3", "-node", `s${i}`, "-data-dir", join(work, `s${i}`), "-bind", "127.0.0.1",
      "-http-port", "0", "-dns-port", "-1", "-grpc-port", "-1", "-server-port", "0", "-serf-lan-port", String(lanPorts[i]), "-serf-wan-port", "0",
      // Every server is told about every other, as in a real deployment (its own address is skipped).
      ...lanPorts.flatMap((p) => ["-retry-join", `127.0.0.1:${p}`]), "-retry-interval", "1s",
    ]);
  const agents = [await start(0), await start(1), await start(2)];
  running.push(...agents);

  const leader = await poll(() => getJson(agents[1]!, "/v1/status/leader"), (l) => typeof l === "string" && l !== "", 30_000, "a leader");
  const peers = await poll(() => getJson(agents[2]!, "/v1/status/peers"), (p) => Array.isArray(p) && p.length === 3, 30_000, "3 raft peers");
  expect(peers).toContain(leader);
  const members = await getJson(agents[0]!, "/v1/agent/members");
  expect(members.map((m: any) => [m.Name, m.Status]).sort()).toEqual([["s0", 1], ["s1", 1], ["s2", 1]]);

  // Kill a server that is not the leader: the others see it failed and keep their leader.
  const leaderIndex = await Promise.all(agents.map(async (a) => (await getJson(a, "/v1/agent/self")).Member.Tags.port)).then((ports) => ports.findIndex((p: string) => leader.endsWith(`:${p}`)));
  const victim = (leaderIndex + 1) % 3;
  await agents[victim]!.stop("SIGKILL");
  const survivor = agents[(leaderIndex + 2) % 3]!;
  await poll(() => getJson(survivor, "/v1/agent/members"), (ms) => ms.find((m: any) => m.Name === `s${victim}`)?.Status === 4, 30_000, `s${victim} marked failed`);
  expect(await getJson(survivor, "/v1/status/leader")).toBe(leader);

  // Restarted on its data dir and gossip port, it rejoins and is alive again.
  agents[victim] = await start(victim);
  running.push(agents[victim]!);
  await poll(() => getJson(survivor, "/v1/agent/members"), (ms) => ms.find((m: any) => m.Name === `s${victim}`)?.Status === 1, 30_000, `s${victim} alive again`);
  await poll(() => getJson(agents[victim]!, "/v1/status/leader"), (l) => l === leader, 30_000, "the restarted server to follow the leader");

  // `causeway leave` on the restarted server: it leaves gracefully, exits 0, and the others see it left.
  const leave = Bun.spawnSync([process.execPath, cli, "leave", "-http-addr", agents[victim]!.httpUrl]);
  expect(leave.exitCode).toBe(0);
  expect(new TextDecoder().decode(leave.stdout)).toContain("Graceful leave complete");
  expect(await new Promise((r) => agents[victim]!.child.once("exit", r))).toBe(0);
  await poll(() => getJson(survivor, "/v1/agent/members"), (ms) => ms.find((m: any) => m.Name === `s${victim}`)?.Status === 3, 30_000, `s${victim} marked left`);
  const table = Bun.spawnSync([process.execPath, cli, "members", "-http-addr", survivor.httpUrl]);
  expect(new TextDecoder().decode(table.stdout)).toMatch(new RegExp(`s${victim}\\s+127\\.0\\.0\\.1:\\d+\\s+left\\s+server`));
}, 120_000);

test("a fresh server started later with the same bootstrap_expect joins the cluster instead of bootstrapping a second one", async () => {
  const lanPorts = await Promise.all([freePort(), freePort(), freePort(), freePort()]);
  const start = (i: number) =>
    startAgentProcess(process.execPath, [
      cli, "agent", "-server", "-bootstrap-expect", "3", "-node", `late${i}`, "-data-dir", join(work, `late${i}`), "-bind", "127.0.0.1",
      "-http-port", "0", "-dns-port", "-1", "-grpc-port", "-1", "-server-port", "0", "-serf-lan-port", String(lanPorts[i]), "-serf-wan-port", "0",
      ...lanPorts.flatMap((p) => ["-retry-join", `127.0.0.1:${p}`]), "-retry-interval", "1s",
    ]);
  const first = [await start(0), await start(1), await start(2)];
  running.push(...first);
  const leader = await poll(() => getJson(first[0]!, "/v1/status/leader"), (l) => typeof l === "string" && l !== "", 30_000, "a leader");
  await poll(() => getJson(first[0]!, "/v1/status/peers"), (p) => Array.isArray(p) && p.length === 3, 30_000, "3 raft peers");
  const late = await start(3);
  running.push(late);
  // The leader adds it (as a learner, promoted once caught up); it never leads a cluster of its own.
  const peers = await poll(() => getJson(first[1]!, "/v1/status/peers"), (p) => Array.isArray(p) && p.length === 4, 30_000, "4 raft peers");
  const lateAddr = /Cluster Addr: (\S+)/.exec(late.output())![1]!;
  expect(peers).toContain(lateAddr);
  expect(await poll(() => getJson(late, "/v1/status/leader"), (l) => l !== "", 30_000, "the late server to follow")).toBe(leader);
  expect(late.output()).not.toContain("bootstrapped from gossip");
}, 120_000);
