/**
 * `causeway join`: Consul's `consul join [-wan] <address>...` (command/join/join.go in
 * hashicorp/consul): one PUT /v1/agent/join/<address> per address, an error line for each that fails,
 * and `Successfully joined cluster by contacting N nodes.` where N counts the addresses that worked.
 * Exit 1 when none worked or no address was given.
 */
import type { Command } from "../command.ts";
import { formatFlags, parseCommandLine, type FlagSpec } from "../flags.ts";
import { agentClientFor, HTTP_ADDR_FLAG, processHttpDeps, type HttpCommandDeps } from "./support/http_client.ts";

const FLAGS: FlagSpec[] = [{ name: "wan", kind: "bool", usage: "Joins a server to another server in the WAN pool." }, HTTP_ADDR_FLAG];

const HELP = `Usage: causeway join [options] address ...

  Tells a running agent (with "causeway agent") to join the cluster
  by specifying at least one existing member.

${formatFlags(FLAGS)}
`;

export function createJoinCommand(deps: HttpCommandDeps = processHttpDeps): Command {
  return {
    name: "join",
    synopsis: "Tell the agent to join a cluster",
    async run(argv, io) {
      const parsed = parseCommandLine(FLAGS, argv, io, HELP, Number.POSITIVE_INFINITY);
      if (typeof parsed === "number") return parsed;
      const addrs = parsed.rest;
      if (addrs.length === 0) {
        io.err(`At least one address to join must be specified.\n\n${HELP}`);
        return 1;
      }
      let client;
      try {
        client = agentClientFor(parsed.values.get("http-addr") as string | undefined, deps);
      } catch (err) {
        io.err(`Error connecting to the agent: ${(err as Error).message}\n`);
        return 1;
      }
      const query: Record<string, string> = parsed.values.get("wan") ? { wan: "1" } : {};
      let joins = 0;
      for (const addr of addrs) {
        try {
          await client.put(`/v1/agent/join/${encodeURIComponent(addr)}`, query);
          joins++;
        } catch (err) {
          io.err(`Error joining address '${addr}': ${(err as Error).message}\n`);
        }
      }
      if (joins === 0) {
        io.err("Failed to join any nodes.\n");
        return 1;
      }
      io.out(`Successfully joined cluster by contacting ${joins} nodes.\n`);
      return 0;
    },
  };
}

/** `causeway join` against the process environment. */
export const joinCommand: Command = createJoinCommand();
