/**
 * go-sockaddr templates in the agent's address flags, on the real host: `causeway agent -dev -bind
 * '<template>'` binds what the template gives, and a template that gives nothing stops the agent with
 * the setting and the template named. Loopback is the one interface every machine has.
 */
import { describe, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { startAgentProcess } from "../harness/agent_process.ts";

const cli = join(import.meta.dir, "..", "..", "src", "main", "cli.ts");
const bun = process.execPath;
const PORTS = ["-http-port", "0", "-dns-port", "-1", "-grpc-port", "-1", "-server-port", "0", "-serf-lan-port", "0", "-serf-wan-port", "0"];
/** The IPv4 loopback address, found by interface flag rather than by name (lo on Linux, lo0 elsewhere). */
const LOOPBACK = '{{ GetAllInterfaces | include "flags" "loopback" | include "type" "ipv4" | attr "address" }}';

describe("agent address templates", () => {
  test("-bind and -client templates are evaluated over the host's interfaces and bound", async () => {
    const agent = await startAgentProcess(bun, [cli, "agent", "-dev", "-bind", LOOPBACK, "-client", LOOPBACK, ...PORTS]);
    try {
      expect(agent.output()).toMatch(/Cluster Addr: 127\.0\.0\.1:\d+ \(LAN: 127\.0\.0\.1:\d+/);
      expect(agent.httpUrl).toStartWith("http://127.0.0.1:");
      const self = (await (await fetch(`${agent.httpUrl}/v1/agent/self`)).json()) as { DebugConfig: { BindAddr: string; ClientAddrs: string[] } };
      expect(self.DebugConfig.BindAddr).toBe("127.0.0.1");
      expect(self.DebugConfig.ClientAddrs).toEqual(["127.0.0.1"]);
    } finally {
      expect(await agent.stop("SIGINT")).toBe(0);
    }
  }, 40_000);

  test("GetInterfaceIP on loopback gives nothing (loopback is not forwardable), and the agent says so", () => {
    const r = spawnSync(bun, [cli, "agent", "-dev", "-bind", '{{ GetInterfaceIP "^lo$" }}', ...PORTS], { encoding: "utf8" });
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('==> bind_addr: "{{ GetInterfaceIP \\"^lo$\\" }}" gave no address (GetInterfaceIP skips addresses that are not forwardable');
  }, 30_000);
});
