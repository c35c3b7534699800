/**
 * Real `causeway agent -server -bootstrap-expect N -retry-join ...` processes on loopback, each told
 * about every other (as in a real deployment), from source. Restartable on the same data dir and
 * gossip port.
 */
import { join } from "node:path";
import { freePort, poll, startAgentProcess, type AgentProcess } from "./agent_process.ts";

export const CLI = join(import.meta.dir, "..", "..", "src", "main", "cli.ts");

export interface ServerCluster {
  readonly agents: AgentProcess[];
  /** (Re)starts server `i` on its data dir and gossip port; replaces agents[i]. */
  start(i: number): Promise<AgentProcess>;
  /** Index of the agent whose server port the leader address names (-1 when none). */
  leaderIndex(): Promise<number>;
}

export const getJson = async (a: AgentProcess, path: string) => (await fetch(`${a.httpUrl}${path}`)).json() as Promise<any>;

export async function startServerCluster(o: { work: string; size: number; prefix: string; running: AgentProcess[]; extraArgs?: readonly string[] }): Promise<ServerCluster> {
  const lanPorts = await Promise.all(Array.from({ length: o.size }, () => freePort()));
  const agents: AgentProcess[] = [];
  const start = async (i: number) => {
    const a = await startAgentProcess(process.execPath, [
      CLI, "agent", "-server", "-bootstrap-expect", String(o.size), "-node", `${o.prefix}${i}`, "-data-dir", join(o.work, `${o.prefix}${i}`),
      "-bind", "127.0.0.1", "-http-port", "0", "-dns-port", "-1", "-grpc-port", "-1", "-server-port", "0", "-serf-lan-port", String(lanPorts[i]), "-serf-wan-port", "0",
      ...lanPorts.flatMap((p) => ["-retry-join", `127.0.0.1:${p}`]), "-retry-interval", "1s", ...(o.extraArgs ?? []),
    ]);
    agents[i] = a;
    o.running.push(a);
    return a;
  };
  for (let i = 0; i < o.size; i++) await start(i);
  return {
    agents,
    start,
    async leaderIndex() {
      const leader = await poll(() => getJson(agents[0]!, "/v1/status/leader"), (l) => typeof l === "string" && l !== "", 30_000, "the leader address");
      const ports = await Promise.all(agents.map(async (a) => (await getJson(a, "/v1/agent/self").catch(() => undefined))?.Member?.Tags?.port));
      return ports.findIndex((p) => p !== undefined && leader.endsWith(`:${p}`));
    },
  };
}
