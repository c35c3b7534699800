/**
 * The one-binary promise: `bun build --compile` output runs from an empty directory, answers
 * `version`, and serves the HTTP API as `agent -dev`, then shuts down cleanly on SIGTERM.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildBinary } from "../../build.ts";
import { startAgentProcess } from "../harness/agent_process.ts";

let work: string;
let binary: string;

beforeAll(() => {
  work = mkdtempSync(join(tmpdir(), "causeway-bin-"));
  binary = join(work, "causeway");
  buildBinary("bun-linux-x64", binary);
}, 120_000);

afterAll(() => rmSync(work, { recursive: true, force: true }));

describe("compiled binary", () => {
  test("prints its version from an empty directory", () => {
    const empty = mkdtempSync(join(work, "empty-"));
    const r = spawnSync(binary, ["version"], { cwd: empty, encoding: "utf8" });
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/^Causeway v\d+\.\d+\.\d+\n/);
    expect(readdirSync(empty)).toEqual([]);
  });

  test("agent -dev serves /v1/status/leader and /v1/agent/self from an empty directory, and stops on SIGTERM", async () => {
    const empty = mkdtempSync(join(work, "empty-"));
    const agent = await startAgentProcess(binary, ["agent", "-dev", "-node", "bin-node", "-http-port", "0", "-dns-port", "-1", "-grpc-port", "0", "-server-port", "0", "-serf-lan-port", "0", "-serf-wan-port", "0"], { cwd: empty });
    try {
      // A dev agent is a one-server Raft cluster: it elects itself and reports its server port.
      const serverAddr = /Cluster Addr: (\S+)/.exec(agent.output())![1]!;
      let leader = "";
      for (let i = 0; i < 200 && leader === ""; i++) {
        const res = await fetch(`${agent.httpUrl}/v1/status/leader`);
        expect(res.status).toBe(200);
        leader = (await res.json()) as string;
        if (leader === "") await Bun.sleep(25);
      }
      expect(leader).toBe(serverAddr);
      expect(await (await fetch(`${agent.httpUrl}/v1/status/peers`)).json()).toEqual([serverAddr]);
      const self = (await (await fetch(`${agent.httpUrl}/v1/agent/self`)).json()) as any;
      expect(self.Config.NodeName).toBe("bin-node");
      expect(self.Config.Datacenter).toBe("dc1");
      expect(self.Config.Server).toBe(true);
      expect(self.Config.NodeID).toMatch(/^[0-9a-f-]{36}$/);
      // The web UI's pages and embedded assets come out of the binary too.
      // The leader registers its own consul service a moment after it is elected: wait for the row.
      let ui = "";
      for (let i = 0; i < 200 && !ui.includes('<tr data-service="consul">'); i++) {
        ui = await (await fetch(`${agent.httpUrl}/ui/dc1/services`)).text();
        if (!ui.includes('<tr data-service="consul">')) await Bun.sleep(25);
      }
      expect(ui).toContain('<tr data-service="consul">');
      const css = /href="(\/ui\/assets\/style-[0-9a-f]+\.css)"/.exec(ui)![1]!;
      expect((await fetch(`${agent.httpUrl}${css}`)).status).toBe(200);
      expect(existsSync(agent.dataDir)).toBe(true);
    } finally {
      expect(await agent.stop("SIGTERM")).toBe(0);
    }
    expect(agent.output()).toContain("agent stopped");
    expect(existsSync(agent.dataDir)).toBe(false);
    expect(readdirSync(empty)).toEqual([]);
  }, 30_000);

  test("an unknown flag is an error naming the flag", () => {
    const r = spawnSync(binary, ["agent", "-dev", "-http-prot", "1"], { encoding: "utf8" });
    expect(r.status).toBe(1);
    expect(r.stderr).toContain("flag provided but not defined: -http-prot");
  });
});
