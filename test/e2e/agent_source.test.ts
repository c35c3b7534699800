/**
 * `causeway agent` run from source on Bun, the way the README starts it, with a JSON config file in
 * Consul's field names, a config dir, and a SIGINT shutdown.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { mkdtempSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startAgentProcess } from "../harness/agent_process.ts";

const root = join(import.meta.dir, "..", "..");
const cli = join(root, "src", "main", "cli.ts");
const bun = process.execPath;
const work = mkdtempSync(join(tmpdir(), "causeway-src-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));

describe("agent from source", () => {
  test("reads config files and dirs with Consul's field names, keeps a node-id, stops on SIGINT", async () => {
    const dataDir = join(work, "data");
    const confDir = join(work, "conf.d");
    mkdirSync(confDir);
    writeFileSync(join(work, "base.json"), JSON.stringify({ datacenter: "east", node_name: "from-file", server: true, data_dir: dataDir, ports: { http: 0, grpc: -1, server: 0, serf_lan: 0, serf_wan: 0, dns: -1 } }));
    writeFileSync(join(confDir, "10-meta.json"), JSON.stringify({ node_meta: { rack: "r7" } }));
    writeFileSync(join(confDir, "20-name.json"), JSON.stringify({ node_name: "from-dir" }));
    writeFileSync(join(confDir, "ignored.txt"), "not json");
    const args = [cli, "agent", "-config-file", join(work, "base.json"), "-config-dir", confDir, "-bind", "127.0.0.1"];
    const agent = await startAgentProcess(bun, args);
    let nodeId: string;
    try {
      const self = (await (await fetch(`${agent.httpUrl}/v1/agent/self`)).json()) as any;
      expect(self.Config).toMatchObject({ Datacenter: "east", NodeName: "from-dir", Server: true });
      expect(self.Meta).toEqual({ rack: "r7" });
      expect(self.DebugConfig.GRPCPort).toBe(-1);
      nodeId = self.Config.NodeID;
      expect(readFileSync(join(dataDir, "node-id"), "utf8")).toBe(nodeId);
      expect(await (await fetch(`${agent.httpUrl}/v1/status/leader`)).json()).toBe("");
    } finally {
      expect(await agent.stop("SIGINT")).toBe(0);
    }
    // A restart on the same data dir keeps the node ID; the -node flag wins over files.
    const again = await startAgentProcess(bun, [...args, "-node", "from-flag"]);
    try {
      const self = (await (await fetch(`${again.httpUrl}/v1/agent/self`)).json()) as any;
      expect(self.Config.NodeID).toBe(nodeId);
      expect(self.Config.NodeName).toBe("from-flag");
    } finally {
      expect(await again.stop("SIGTERM")).toBe(0);
    }
  }, 40_000);

  test("bad config is refused with a message naming the file and key", () => {
    const bad = join(work, "bad.json");
    writeFileSync(bad, JSON.stringify({ datacenter: "dc1", prots: { http: 1 } }));
    const r = spawnSync(bun, [cli, "agent", "-dev", "-config-file", bad], { encoding: "utf8" });
    expect(r.status).toBe(1);
    expect(r.stderr).toContain(`${bad}: invalid config key prots`);
  });

  test("a port that is taken is a clear start-up error", async () => {
    const first = await startAgentProcess(bun, [cli, "agent", "-dev", "-http-port", "0", "-dns-port", "-1", "-grpc-port", "-1", "-server-port", "0", "-serf-lan-port", "0", "-serf-wan-port", "0"]);
    try {
      const port = new URL(first.httpUrl).port;
      const r = spawnSync(bun, [cli, "agent", "-dev", "-http-port", port, "-dns-port", "-1", "-grpc-port", "-1", "-server-port", "0", "-serf-lan-port", "0", "-serf-wan-port", "0"], { encoding: "utf8" });
      expect(r.status).toBe(1);
      expect(r.stderr).toContain(`Error starting agent: HTTP server cannot listen on 127.0.0.1:${port}`);
    } finally {
      await first.stop();
    }
  }, 40_000);

  // Every command's -h/--help is checked in process (src/main/cli.test.ts); here, that the real
  // entry point prints usage and exits 0 (each start costs about a second on these machines).
  test("the CLI entry point answers -h and agent --help", () => {
    for (const args of [["-h"], ["agent", "--help"]]) {
      const r = spawnSync(bun, [cli, ...args], { encoding: "utf8" });
      expect(r.status).toBe(0);
      expect(r.stdout).toContain("Usage: causeway");
    }
  }, 30_000);
});
