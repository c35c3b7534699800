/**
 * `causeway operator raft remove-peer`: Consul's `consul operator raft remove-peer`
 * (command/operator/raft/removepeer in hashicorp/consul): DELETE /v1/operator/raft/peer with `?id=` or
 * `?address=` (exactly one of -id / -address). Prints `Removed peer with id "ID"` (or address).
 */
import type { Command } from "../../command.ts";
import type { FlagSpec } from "../../flags.ts";
import { clientOrExit, commandHelp, goQuote, parseHttpCommandLine, processCliDeps, stringFlag, type CliDeps } from "../support/index.ts";

const FLAGS: FlagSpec[] = [
  { name: "address", kind: "string", arg: "<ip:port>", usage: "The address to remove from the Raft configuration." },
  { name: "id", kind: "string", arg: "<id>", usage: "The ID to remove from the Raft configuration." },
];

const HELP = commandHelp(
  `Usage: causeway operator raft remove-peer [options]

  Remove the server with given -id (or -address) from the Raft configuration.

  There are rare cases where a peer may be left behind in the Raft quorum even
  though the server is no longer present and known to the cluster. This command
  can be used to remove the failed server so that it no longer affects the Raft
  quorum. If the server still shows in the output of the "causeway members"
  command, it is preferable to clean up by running "causeway force-leave"
  instead of this command.
`,
  FLAGS,
);

export function createRaftRemovePeerCommand(deps: CliDeps = processCliDeps): Command {
  return {
    name: "remove-peer",
    synopsis: "Remove a server from the Raft configuration",
    async run(argv, io) {
      const parsed = parseHttpCommandLine(FLAGS, argv, io, HELP);
      if (typeof parsed === "number") return parsed;
      if (parsed.rest.length > 0) {
        io.err(`Too many arguments (expected 0, got ${parsed.rest.length})\n`);
        return 1;
      }
      const address = stringFlag(parsed, "address") ?? "";
      const id = stringFlag(parsed, "id") ?? "";
      const problem = address === "" && id === "" ? "an address or id is required for the peer to remove" : address !== "" && id !== "" ? "cannot give both an address and id" : undefined;
      if (problem) {
        io.err(`Error removing peer: ${problem}\n`);
        return 1;
      }
      const client = clientOrExit(parsed, deps, io);
      if (typeof client === "number") return client;
      try {
        await client.request("DELETE", "/v1/operator/raft/peer", { query: address ? { address } : { id } });
      } catch (err) {
        io.err(`Error removing peer: ${(err as Error).message}\n`);
        return 1;
      }
      io.out(address ? `Removed peer with address ${goQuote(address)}\n` : `Removed peer with id ${goQuote(id)}\n`);
      return 0;
    },
  };
}
