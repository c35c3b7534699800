/**
 * For CLI command tests: an agent's HTTP API on a loopback port over a fake membership, and a runner
 * that captures a command's output and exit code.
 */
import { createHttpApi, type MembershipApi } from "../../src/http/index.ts";
import { serveHttp, type HttpServerHandle } from "../../src/platform/index.ts";
import type { Command } from "../../src/main/command.ts";

/** Serves the HTTP API of a fake agent (a server unless `server` is false) with `membership` (or none). */
export function startFakeAgent(membership: MembershipApi | undefined, server = true, nodeName = "s1"): Promise<HttpServerHandle> {
  const app = createHttpApi({
    agent: { datacenter: "dc1", primaryDatacenter: "dc1", nodeName, nodeId: "id", server, version: "0.1.0", revision: "", advertiseAddr: "10.0.0.1", serfLanPort: 8301, serverPort: 8300, nodeMeta: {}, debugConfig: {}, stats: () => ({}) },
    raft: { leader: () => "", peers: () => [] },
    membership,
  });
  return serveHttp({ host: "127.0.0.1", port: 0, handler: (req) => app.fetch(req) });
}

/** Runs a command with captured stdout and stderr. */
export async function runCommand(command: Command, argv: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = "", err = "";
  const code = await command.run(argv, { out: (t) => void (out += t), err: (t) => void (err += t) });
  return { code, out, err };
}
