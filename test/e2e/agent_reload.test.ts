/**
 * Reloading a running agent's configuration, as an operator does: edit the files of its -config-dir,
 * then `causeway reload` (PUT /v1/agent/reload) or SIGHUP. Service and check definitions follow the
 * files (an unchanged check keeps its status), log_level changes at once, other changes are named in the
 * log as needing a restart, and a broken file fails the reload and changes nothing.
 */
import { afterAll, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, unlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { connect } from "node:net";
import { join } from "node:path";
import { agentCall, poll, startAgentProcess, type AgentProcess } from "../harness/agent_process.ts";

const cli = join(import.meta.dir, "..", "..", "src", "main", "cli.ts");
const work = mkdtempSync(join(tmpdir(), "causeway-reload-"));
const dir = join(work, "config.d");
mkdirSync(dir);
let agent: AgentProcess | undefined;
afterAll(async () => {
  await agent?.stop("SIGKILL").catch(() => {});
  rmSync(work, { recursive: true, force: true });
});

const write = (name: string, doc: unknown) => writeFileSync(join(dir, name), JSON.stringify(doc));
const services = async () => Object.keys((await agentCall(agent!.httpUrl, "GET", "/v1/agent/services")).json).sort();
const reloadCli = () => spawnSync(process.execPath, [cli, "reload", "-http-addr", agent!.httpUrl], { encoding: "utf8" });

test("reload by command and by SIGHUP follows the config files; a broken file changes nothing", async () => {
  write("10-web.json", { service: { name: "web", port: 80, check: { id: "web-ttl", name: "web ttl", ttl: "10m" } } });
  write("20-log.json", { log_level: "info" });
  agent = await startAgentProcess(process.execPath, [
    cli, "agent", "-dev", "-config-dir", dir, "-http-port", "0", "-dns-port", "-1", "-grpc-port", "-1", "-server-port", "0", "-serf-lan-port", "0", "-serf-wan-port", "0",
  ]);
  expect(await services()).toEqual(["web"]);
  expect((await agentCall(agent.httpUrl, "PUT", "/v1/agent/check/pass/web-ttl")).status).toBe(200);

  // A new service, a changed log level and new node metadata (applied at a restart); `causeway reload`.
  write("30-db.json", { services: [{ name: "db", port: 5432 }] });
  write("20-log.json", { log_level: "debug", node_meta: { rack: "r1" } });
  const r = reloadCli();
  expect([r.status, r.stdout, r.stderr]).toEqual([0, "Configuration reload triggered\n", ""]);
  expect(await services()).toEqual(["db", "web"]);
  // The unchanged service's check kept its status.
  expect((await agentCall(agent.httpUrl, "GET", "/v1/agent/checks")).json["web-ttl"].Status).toBe("passing");
  await poll(async () => agent!.output(), (o) => o.includes("apply only after a restart") && o.includes("settings=node_meta.rack"), 5000, "the restart notice");
  // debug is on now: a connection to the server port is logged at debug.
  const serverPort = Number(/Cluster Addr: \S+:(\d+)/.exec(agent.output())![1]);
  const socket = connect({ host: "127.0.0.1", port: serverPort }, () => socket.end(Buffer.from([0])));
  socket.on("error", () => {});
  await poll(async () => agent!.output(), (o) => o.includes("[DEBUG] agent.server-port: mux: connection accepted"), 5000, "a debug line after the reload");

  // A broken file: the reload fails with the reason and nothing changes.
  write("40-bad.json", { colour: "red" });
  unlinkSync(join(dir, "30-db.json"));
  const bad = reloadCli();
  expect(bad.status).toBe(1);
  expect(bad.stderr).toContain("Error reloading: Unexpected response code: 500 (Failed to reload configs:");
  expect(bad.stderr).toContain("invalid config key colour");
  expect(await services()).toEqual(["db", "web"]);

  // Fixed, and reloaded by SIGHUP: db's file is gone, so is db.
  unlinkSync(join(dir, "40-bad.json"));
  agent.child.kill("SIGHUP");
  await poll(services, (s) => s.length === 1 && s[0] === "web", 10_000, "db removed after SIGHUP");
  expect(agent.child.exitCode).toBe(null);
}, 60_000);
