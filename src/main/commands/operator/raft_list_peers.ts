/**
 * `causeway operator raft list-peers`: Consul 1.8's `consul operator raft list-peers`
 * (command/operator/raft/listpeers in hashicorp/consul): GET /v1/operator/raft/configuration (`?stale=`,
 * `?dc=`), answered as `{"Servers":[{"ID","Node","Address","Leader","Voter","ProtocolVersion"}],"Index"}`,
 * printed as the columnized table `Node ID Address State Voter RaftProtocol` (State `leader`/`follower`,
 * an empty protocol version shown as `<=1`).
 */
import type { Command } from "../../command.ts";
import { columnizeRows, commandHelp, noArgsCommand, processCliDeps, staleQuery, type CliDeps } from "../support/index.ts";

/** One server of the Raft configuration (the Go API's `RaftServer`). */
export interface RaftServer {
  readonly ID: string;
  readonly Node: string;
  readonly Address: string;
  readonly Leader: boolean;
  readonly Voter: boolean;
  readonly ProtocolVersion?: string;
}

const HELP = commandHelp(
  `Usage: causeway operator raft list-peers [options]

  Displays the current Raft peer configuration.

  The -stale argument defaults to "false" which means the leader provides the
  result. If the cluster is in an outage state without a leader, you may need
  to set -stale to "true" to get the configuration from a non-leader server.
`,
  [],
);

/** The table Consul 1.8 prints for a Raft configuration. */
export function peersTable(servers: readonly RaftServer[]): string {
  const rows = [["Node", "ID", "Address", "State", "Voter", "RaftProtocol"]];
  for (const s of servers) rows.push([s.Node, s.ID, s.Address, s.Leader ? "leader" : "follower", String(Boolean(s.Voter)), s.ProtocolVersion || "<=1"]);
  return columnizeRows(rows);
}

export function createRaftListPeersCommand(deps: CliDeps = processCliDeps): Command {
  return {
    name: "list-peers",
    synopsis: "Display the current Raft peer configuration",
    async run(argv, io) {
      const started = noArgsCommand([], argv, io, HELP, deps);
      if (typeof started === "number") return started;
      const { parsed, client } = started;
      let servers: RaftServer[];
      try {
        const reply = (await client.request("GET", "/v1/operator/raft/configuration", { query: staleQuery(parsed) })).json() as { Servers?: RaftServer[] | null } | null;
        servers = reply?.Servers ?? [];
      } catch (err) {
        io.err(`Error getting peers: Failed to retrieve raft configuration: ${(err as Error).message}\n`);
        return 1;
      }
      io.out(`${peersTable(servers)}\n`);
      return 0;
    },
  };
}
