/**
 * One `causeway agent -dev` for the web UI's browser tests, started from source on Bun (the default),
 * from the compiled binary (CAUSEWAY_UI_RUNTIME=binary, built once into a temporary directory) or
 * from source on Deno (CAUSEWAY_UI_RUNTIME=deno), on loopback with every port its own; waits for its
 * leader. The caller stops it (agent.stop("SIGKILL")) in afterAll.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { buildBinary } from "../../build.ts";
import { agentCall, poll, startAgentProcess, type AgentProcess } from "./agent_process.ts";

const HERE = dirname(fileURLToPath(import.meta.url));

export const CLI_SOURCE = join(HERE, "..", "..", "src", "main", "cli.ts");

export type UiRuntime = "bun" | "binary" | "deno";

export function uiRuntime(): UiRuntime {
  const r = process.env.CAUSEWAY_UI_RUNTIME ?? "bun";
  if (r !== "bun" && r !== "binary" && r !== "deno") throw new Error(`CAUSEWAY_UI_RUNTIME must be bun, binary or deno (got ${JSON.stringify(r)})`);
  return r;
}

let binary: string | undefined;

/** The command and leading arguments that run `causeway` in `runtime`. */
export function causewayCommand(runtime: UiRuntime = uiRuntime()): { cmd: string; args: string[] } {
  if (runtime === "binary") {
    if (!binary) {
      binary = join(mkdtempSync(join(tmpdir(), "causeway-ui-bin-")), "causeway");
      buildBinary("bun-linux-x64", binary);
    }
    return { cmd: binary, args: [] };
  }
  if (runtime === "deno") return { cmd: join(HERE, "..", "..", "node_modules", ".bin", "deno"), args: ["run", "-A", CLI_SOURCE] };
  return { cmd: process.execPath, args: [CLI_SOURCE] };
}

/** The ports every side-by-side test agent takes: its own HTTP, server and gossip ports; no DNS or gRPC. */
export const OWN_PORTS = ["-bind", "127.0.0.1", "-http-port", "0", "-dns-port", "-1", "-grpc-port", "-1", "-server-port", "0", "-serf-lan-port", "0", "-serf-wan-port", "0"] as const;

/** A dev agent named `node` (UI on), with `extraArgs` after the defaults; resolves once it has a leader. */
export async function startUiDevAgent(node: string, extraArgs: readonly string[] = [], token?: string): Promise<AgentProcess> {
  const { cmd, args } = causewayCommand();
  const agent = await startAgentProcess(cmd, [...args, "agent", "-dev", "-node", node, ...OWN_PORTS, ...extraArgs], { timeoutMs: 60_000 });
  await poll(() => agentCall(agent.httpUrl, "GET", "/v1/status/leader", token), (r) => r.status === 200 && r.json !== "", 30_000, "a leader");
  return agent;
}
