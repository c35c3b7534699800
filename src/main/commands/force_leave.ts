/**
 * `causeway force-leave`: Consul's `consul force-leave [-prune] [-wan] <node>`
 * (command/forceleave/forceleave.go in hashicorp/consul): PUT /v1/agent/force-leave/<node> with
 * `prune=1` / `wan=1`. Prints nothing on success; `Error force leaving: ...` and exit 1 on failure.
 */
import type { Command } from "../command.ts";
import { formatFlags, parseCommandLine, type FlagSpec } from "../flags.ts";
import { agentClientFor, HTTP_ADDR_FLAG, processHttpDeps, type HttpCommandDeps } from "./support/http_client.ts";

const FLAGS: FlagSpec[] = [
  { name: "prune", kind: "bool", usage: "Remove agent forcibly from list of members" },
  { name: "wan", kind: "bool", usage: "Exclusively leave the agent from the WAN serf pool." },
  HTTP_ADDR_FLAG,
];

const HELP = `Usage: causeway force-leave [options] name

  Forces a member of a cluster to enter the "left" state. Note
  that if the member is still actually alive, it will eventually rejoin
  the cluster. This command is most useful for cleaning out "failed" nodes
  that are never coming back. If you do not force leave a failed node,
  the agent will attempt to reconnect to those failed nodes for some period of
  time before eventually reaping them.

${formatFlags(FLAGS)}
`;

export function createForceLeaveCommand(deps: HttpCommandDeps = processHttpDeps): Command {
  return {
    name: "force-leave",
    synopsis: 'Forces a member of the cluster to enter the "left" state',
    async run(argv, io) {
      const parsed = parseCommandLine(FLAGS, argv, io, HELP, Number.POSITIVE_INFINITY);
      if (typeof parsed === "number") return parsed;
      if (parsed.rest.length !== 1) {
        io.err(`A single node name must be specified to force leave.\n\n${HELP}`);
        return 1;
      }
      const query: Record<string, string> = {};
      if (parsed.values.get("prune")) query.prune = "1";
      if (parsed.values.get("wan")) query.wan = "1";
      try {
        const client = agentClientFor(parsed.values.get("http-addr") as string | undefined, deps);
        await client.put(`/v1/agent/force-leave/${encodeURIComponent(parsed.rest[0]!)}`, query);
      } catch (err) {
        io.err(`Error force leaving: ${(err as Error).message}\n`);
        return 1;
      }
      return 0;
    },
  };
}

/** `causeway force-leave` against the process environment. */
export const forceLeaveCommand: Command = createForceLeaveCommand();
