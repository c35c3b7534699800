/**
 * `causeway snapshot save` on one cluster, then `snapshot restore` into a fresh one, reproduces the
 * KV store and the catalog; `snapshot inspect` reads the file; a damaged file is refused and changes
 * nothing.
 */
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { poll, startAgentProcess, type AgentProcess } from "../harness/agent_process.ts";
import { CLI, getJson } from "../harness/server_cluster.ts";

const work = mkdtempSync(join(tmpdir(), "causeway-snapshot-"));
const running: AgentProcess[] = [];
afterAll(async () => {
  for (const a of running) await a.stop("SIGKILL").catch(() => {});
  rmSync(work, { recursive: true, force: true });
});

async function server(name: string): Promise<AgentProcess> {
  const a = await startAgentProcess(process.execPath, [
    CLI, "agent", "-server", "-bootstrap-expect", "1", "-node", name, "-data-dir", join(work, name), "-bind", "127.0.0.1",
    "-http-port", "0", "-dns-port", "-1", "-grpc-port", "-1", "-server-port", "0", "-serf-lan-port", "0", "-serf-wan-port", "0",
  ]);
  running.push(a);
  await poll(() => fetch(`${a.httpUrl}/v1/kv/ready`, { method: "PUT", body: "1" }).then((r) => r.json()), (ok) => ok === true, 20_000, `${name} accepting writes`);
  return a;
}

const cli = (...args: string[]) => {
  const r = Bun.spawnSync([process.execPath, CLI, ...args], { env: { ...process.env, NO_COLOR: "1" } });
  return { code: r.exitCode, out: new TextDecoder().decode(r.stdout), err: new TextDecoder().decode(r.stderr) };
};

test("save on one cluster, restore into a fresh one: KV and catalog come back", async () => {
  const a = await server("snap-a");
  for (let i = 0; i < 20; i++) await fetch(`${a.httpUrl}/v1/kv/app/config/${i}`, { method: "PUT", body: `value-${i}` });
  await fetch(`${a.httpUrl}/v1/catalog/register`, {
    method: "PUT",
    body: JSON.stringify({ Node: "ext-db", Address: "10.0.0.9", Service: { Service: "db", Port: 5432, Tags: ["primary"] } }),
  });
  const file = join(work, "backup.snap");
  const saved = cli("snapshot", "save", "-http-addr", a.httpUrl, file);
  expect(saved.code).toBe(0);
  expect(saved.out).toContain("Saved and verified snapshot to index");
  const inspect = cli("snapshot", "inspect", file);
  expect(inspect.code).toBe(0);
  expect(inspect.out).toMatch(/ID\s+\d+-\d+-\d+/);

  const b = await server("snap-b");
  expect((await fetch(`${b.httpUrl}/v1/kv/app/config/3`)).status).toBe(404);
  const restored = cli("snapshot", "restore", "-http-addr", b.httpUrl, file);
  expect(restored.code).toBe(0);
  const entries = (await getJson(b, "/v1/kv/app/config/?recurse")) as { Key: string; Value: string }[];
  expect(entries.length).toBe(20);
  expect(Buffer.from(entries.find((e) => e.Key === "app/config/7")!.Value, "base64").toString()).toBe("value-7");
  const db = (await getJson(b, "/v1/catalog/service/db")) as any[];
  expect(db.map((s) => [s.Node, s.Address, s.ServicePort, s.ServiceTags])).toEqual([["ext-db", "10.0.0.9", 5432, ["primary"]]]);
  // New writes land after the restored state.
  expect(await (await fetch(`${b.httpUrl}/v1/kv/after`, { method: "PUT", body: "x" })).json()).toBe(true);

  // A damaged file is refused, and the state stays as it was.
  const bytes = readFileSync(file);
  bytes[bytes.length - 30] ^= 0xff;
  writeFileSync(join(work, "damaged.snap"), bytes);
  const refused = await fetch(`${b.httpUrl}/v1/snapshot`, { method: "PUT", body: bytes });
  expect(refused.status).toBe(400);
  expect(((await getJson(b, "/v1/kv/app/config/?recurse")) as unknown[]).length).toBe(20);
}, 60_000);
