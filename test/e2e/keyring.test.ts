/**
 * Gossip key rotation between real agents: a server and two clients share an `encrypt` key; `causeway
 * keyring` installs a second key, makes it primary and removes the first while the cluster keeps
 * talking; `-list` shows the counts; the keyring files follow every change, and a restarted client
 * (still given the old key with -encrypt) comes back on the rotated keyring it persisted.
 */
import { afterAll, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { poll, startAgentProcess, type AgentProcess } from "../harness/agent_process.ts";

const cli = join(import.meta.dir, "..", "..", "src", "main", "cli.ts");
const work = mkdtempSync(join(tmpdir(), "causeway-keyring-"));
const running: AgentProcess[] = [];
afterAll(async () => {
  for (const a of running) await a.stop("SIGKILL").catch(() => {});
  rmSync(work, { recursive: true, force: true });
});

const keygen = () => spawnSync(process.execPath, [cli, "keygen"], { encoding: "utf8" }).stdout.trim();
const [k1, k2] = [keygen(), keygen()];
const common = (name: string) => ["agent", "-node", name, "-data-dir", join(work, name), "-bind", "127.0.0.1", "-http-port", "0", "-dns-port", "-1", "-grpc-port", "-1", "-serf-lan-port", "0", "-encrypt", k1];

/** Runs `causeway keyring <args>` against `agent`. */
function keyring(agent: AgentProcess, ...args: string[]) {
  const r = spawnSync(process.execPath, [cli, "keyring", "-http-addr", agent.httpUrl, ...args], { encoding: "utf8", timeout: 60_000 });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

const aliveMembers = async (a: AgentProcess) =>
  ((await (await fetch(`${a.httpUrl}/v1/agent/members`)).json()) as { Name: string; Status: number }[]).filter((m) => m.Status === 1).map((m) => m.Name).sort();
const fileKeys = (node: string, file: string) => JSON.parse(readFileSync(join(work, node, "serf", file), "utf8")) as string[];

test("rotate the gossip key with the CLI; list shows counts; a restarted agent keeps the rotated keyring", async () => {
  const server = await startAgentProcess(process.execPath, [cli, ...common("s1"), "-server", "-bootstrap-expect", "1", "-server-port", "0", "-serf-wan-port", "0"]);
  running.push(server);
  const lan = /LAN: (\S+?)[,)]/.exec(server.output())![1]!;
  const clientArgs = (name: string) => [cli, ...common(name), "-join", lan];
  const c1 = await startAgentProcess(process.execPath, clientArgs("c1"));
  running.push(c1);
  let c2 = await startAgentProcess(process.execPath, clientArgs("c2"));
  running.push(c2);
  await poll(() => aliveMembers(server), (m) => m.length === 3, 30_000, "3 alive members");
  // `encrypt` was written to the keyring files at the first start.
  expect(fileKeys("s1", "local.keyring")).toEqual([k1]);
  expect(fileKeys("s1", "remote.keyring")).toEqual([k1]);
  expect(fileKeys("c1", "local.keyring")).toEqual([k1]);
  expect(statSync(join(work, "c1", "serf", "local.keyring")).mode & 0o777).toBe(0o600);

  const install = keyring(server, "-install", k2);
  expect(install).toEqual({ code: 0, out: "==> Installing new gossip encryption key...\n", err: "" });
  const listed = keyring(c1, "-list"); // a client agent manages its LAN pool
  expect(listed.code).toBe(0);
  expect(listed.out).toBe(`==> Gathering installed encryption keys...\n\ndc1 (LAN):\n${[k1, k2].sort().map((k) => `  ${k} [3/3]\n`).join("")}`);
  const both = keyring(server, "-list");
  expect(both.out).toContain(`\nWAN:\n${[k1, k2].sort().map((k) => `  ${k} [1/1]\n`).join("")}`);
  expect(both.out).toContain("\ndc1 (LAN):\n");

  const primaryRefused = keyring(server, "-remove", k1);
  expect(primaryRefused.code).toBe(1);
  expect(primaryRefused.err).toContain("Removing the primary key is not allowed");

  expect(keyring(server, "-use", k2)).toMatchObject({ code: 0, out: "==> Changing primary gossip encryption key...\n" });
  expect(keyring(server, "-remove", k1)).toMatchObject({ code: 0, out: "==> Removing gossip encryption key...\n" });
  const after = await (await fetch(`${server.httpUrl}/v1/operator/keyring`)).json();
  expect(after).toEqual([
    { WAN: true, Datacenter: "dc1", Segment: "", Keys: { [k2]: 1 }, NumNodes: 1 },
    { WAN: false, Datacenter: "dc1", Segment: "", Keys: { [k2]: 3 }, NumNodes: 3 },
  ]);
  for (const [node, file] of [["s1", "local.keyring"], ["s1", "remote.keyring"], ["c1", "local.keyring"], ["c2", "local.keyring"]] as const) {
    expect(fileKeys(node, file)).toEqual([k2]);
  }
  expect(await aliveMembers(server)).toEqual(["c1", "c2", "s1"]);

  // Restart c2 with the same arguments (-encrypt still names the old key): the keyring file wins.
  expect(await c2.stop("SIGTERM")).toBe(0);
  await poll(() => aliveMembers(server), (m) => !m.includes("c2"), 30_000, "c2 gone");
  c2 = await startAgentProcess(process.execPath, clientArgs("c2"));
  running.push(c2);
  expect(c2.output()).toContain("keyring doesn't include key provided with -encrypt, using keyring");
  await poll(() => aliveMembers(server), (m) => m.length === 3, 30_000, "c2 alive again");
  const relisted = keyring(c2, "-list");
  expect(relisted.out).toBe(`==> Gathering installed encryption keys...\n\ndc1 (LAN):\n  ${k2} [3/3]\n`);
  expect(fileKeys("c2", "local.keyring")).toEqual([k2]);
}, 120_000);
