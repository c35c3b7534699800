/**
 * Gossip encryption between real agents: agents sharing an `encrypt` key join each other; a plaintext
 * agent cannot join an encrypted one (start_join fails and the agent stops with the reason); a bad key
 * is refused at start naming the setting.
 */
import { afterAll, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startAgentProcess, type AgentProcess } from "../harness/agent_process.ts";

const cli = join(import.meta.dir, "..", "..", "src", "main", "cli.ts");
const work = mkdtempSync(join(tmpdir(), "causeway-encrypt-"));
const running: AgentProcess[] = [];
afterAll(async () => {
  for (const a of running) await a.stop("SIGKILL").catch(() => {});
  rmSync(work, { recursive: true, force: true });
});

const key = spawnSync(process.execPath, [cli, "keygen"], { encoding: "utf8" }).stdout.trim();
const base = (name: string) => ["agent", "-node", name, "-data-dir", join(work, name), "-bind", "127.0.0.1", "-http-port", "0", "-dns-port", "-1", "-grpc-port", "-1", "-serf-lan-port", "0"];

test("agents with the same key gossip; a plaintext agent cannot join an encrypted one", async () => {
  expect(Buffer.from(key, "base64").length).toBe(32);
  const a = await startAgentProcess(process.execPath, [cli, ...base("enc-a"), "-encrypt", key]);
  running.push(a);
  const lan = /LAN: (\S+?)[,)]/.exec(a.output())![1]!;
  const b = await startAgentProcess(process.execPath, [cli, ...base("enc-b"), "-encrypt", key, "-join", lan]);
  running.push(b);
  const end = performance.now() + 20_000;
  let names: string[] = [];
  while (performance.now() < end) {
    const members = (await (await fetch(`${a.httpUrl}/v1/agent/members`)).json()) as { Name: string; Status: number }[];
    names = members.filter((m) => m.Status === 1).map((m) => m.Name).sort();
    if (names.length === 2) break;
    await Bun.sleep(100);
  }
  expect(names).toEqual(["enc-a", "enc-b"]);

  const plain = spawnSync(process.execPath, [cli, ...base("plain-c"), "-join", lan], { encoding: "utf8", timeout: 30_000 });
  expect(plain.status).toBe(1);
  expect(plain.stderr).toContain(`failed to join ${lan}`);

  // A client agent stopped with SIGTERM leaves the pool (Consul's leave_on_terminate for clients).
  expect(await b.stop("SIGTERM")).toBe(0);
  const deadline = performance.now() + 20_000;
  let status = 0;
  while (performance.now() < deadline && status !== 3) {
    const members = (await (await fetch(`${a.httpUrl}/v1/agent/members`)).json()) as { Name: string; Status: number }[];
    status = members.find((m) => m.Name === "enc-b")?.Status ?? 0;
    if (status !== 3) await Bun.sleep(100);
  }
  expect(status).toBe(3);
}, 60_000);

test("a key that is not 16, 24 or 32 bytes of base64 is refused at start, naming the setting", () => {
  const r = spawnSync(process.execPath, [cli, ...base("bad-key"), "-encrypt", "c2hvcnQ="], { encoding: "utf8", timeout: 20_000 });
  expect(r.status).toBe(1);
  expect(r.stderr).toContain("encrypt:");
  expect(r.stderr).not.toContain("c2hvcnQ=");
});
