/**
 * Two datacenters whose servers meet in the WAN pool (-retry-join-wan): each sees the other's server
 * as <node>.<dc>, and /v1/catalog/datacenters lists its own datacenter first, then the other, also on
 * a client agent (which asks a server of its datacenter over RPC).
 */
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort, poll, startAgentProcess, type AgentProcess } from "../harness/agent_process.ts";

const cli = join(import.meta.dir, "..", "..", "src", "main", "cli.ts");
const work = mkdtempSync(join(tmpdir(), "causeway-wan-"));
const running: AgentProcess[] = [];
afterAll(async () => {
  for (const a of running) await a.stop("SIGKILL").catch(() => {});
  rmSync(work, { recursive: true, force: true });
});


test("servers of two datacenters join over the WAN and list both datacenters, their own first", async () => {
  const wan1 = await freePort();
  const lan1 = await freePort();
  const start = (dc: string, lanPort: number, wanPort: number, wanJoin: string[]) =>
    startAgentProcess(process.execPath, [
      cli, "agent", "-server", "-bootstrap-expect", "1", "-datacenter", dc, "-node", `srv-${dc}`, "-data-dir", `${work}/${dc}`,
      "-bind", "127.0.0.1", "-http-port", "0", "-dns-port", "-1", "-grpc-port", "-1", "-server-port", "0", "-serf-lan-port", String(lanPort), "-serf-wan-port", String(wanPort),
      ...wanJoin.flatMap((a) => ["-retry-join-wan", a]), "-retry-interval-wan", "1s",
    ]);
  const a = await start("east", lan1, wan1, []);
  running.push(a);
  const b = await start("west", 0, 0, [`127.0.0.1:${wan1}`]);
  running.push(b);
  const end = performance.now() + 30_000;
  let seen: string[] = [];
  while (performance.now() < end) {
    const members = (await (await fetch(`${a.httpUrl}/v1/agent/members?wan=1`)).json()) as { Name: string; Status: number }[];
    seen = members.filter((m) => m.Status === 1).map((m) => m.Name).sort();
    if (seen.length === 2) break;
    await Bun.sleep(100);
  }
  expect(seen).toEqual(["srv-east.east", "srv-west.west"]);
  expect(await (await fetch(`${a.httpUrl}/v1/catalog/datacenters`)).json()).toEqual(["east", "west"]);
  expect(await (await fetch(`${b.httpUrl}/v1/catalog/datacenters`)).json()).toEqual(["west", "east"]);

  const client = await startAgentProcess(process.execPath, [
    cli, "agent", "-datacenter", "east", "-node", "client-east", "-data-dir", `${work}/client`, "-bind", "127.0.0.1",
    "-http-port", "0", "-dns-port", "-1", "-grpc-port", "-1", "-serf-lan-port", "0", "-retry-join", `127.0.0.1:${lan1}`, "-retry-interval", "1s",
  ]);
  running.push(client);
  const fromClient = await poll(async () => {
    const res = await fetch(`${client.httpUrl}/v1/catalog/datacenters`);
    return res.ok ? ((await res.json()) as string[]) : undefined;
  }, (v) => v !== undefined, 30_000, "datacenters from the client agent");
  expect(fromClient).toEqual(["east", "west"]);
}, 90_000);
