/**
 * `causeway leave`: Consul's `consul leave` (command/leave/leave.go in hashicorp/consul): PUT
 * /v1/agent/leave, then `Graceful leave complete`. The agent leaves its gossip pools and shuts down.
 */
import type { Command } from "../command.ts";
import { formatFlags, parseCommandLine, type FlagSpec } from "../flags.ts";
import { agentClientFor, HTTP_ADDR_FLAG, processHttpDeps, type HttpCommandDeps } from "./support/http_client.ts";

const FLAGS: FlagSpec[] = [HTTP_ADDR_FLAG];

const HELP = `Usage: causeway leave [options]

  Causes the agent to gracefully leave the cluster and shutdown.

${formatFlags(FLAGS)}
`;

export function createLeaveCommand(deps: HttpCommandDeps = processHttpDeps): Command {
  return {
    name: "leave",
    synopsis: "Gracefully leaves the cluster and shuts down",
    async run(argv, io) {
      const parsed = parseCommandLine(FLAGS, argv, io, HELP, Number.POSITIVE_INFINITY);
      if (typeof parsed === "number") return parsed;
      if (parsed.rest.length > 0) {
        io.err(`Error found unexpected args: [${parsed.rest.join(" ")}]\n`);
        io.out(HELP);
        return 1;
      }
      try {
        await agentClientFor(parsed.values.get("http-addr") as string | undefined, deps).put("/v1/agent/leave");
      } catch (err) {
        io.err(`Error leaving: ${(err as Error).message}\n`);
        return 1;
      }
      io.out("Graceful leave complete\n");
      return 0;
    },
  };
}

/** `causeway leave` against the process environment. */
export const leaveCommand: Command = createLeaveCommand();
