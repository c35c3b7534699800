/**
 * `causeway operator raft transfer-leader`: Consul 1.15+'s `consul operator raft transfer-leader`
 * (command/operator/raft/transferleader in hashicorp/consul): POST /v1/operator/raft/transfer-leader,
 * with `?id=` when -id is given (Consul 1.15 itself dropped -id; later releases send it), answered
 * `{"Success":true}`. Prints `Success`; a failure is exit 1 with Consul's (misspelt) `Error transfering
 * leadership: Failed to transfer leadership <error>`.
 */
import type { Command } from "../../command.ts";
import type { FlagSpec } from "../../flags.ts";
import { commandHelp, noArgsCommand, processCliDeps, staleQuery, stringFlag, type CliDeps } from "../support/index.ts";

const FLAGS: FlagSpec[] = [{ name: "id", kind: "string", arg: "<id>", usage: "The ID of the node to transfer leadership to." }];

const HELP = commandHelp(
  `Usage: causeway operator raft transfer-leader [options]

  Transfer raft leadership to another node.
`,
  FLAGS,
);

export function createRaftTransferLeaderCommand(deps: CliDeps = processCliDeps): Command {
  return {
    name: "transfer-leader",
    synopsis: "Transfer raft leadership to another node",
    async run(argv, io) {
      const started = noArgsCommand(FLAGS, argv, io, HELP, deps);
      if (typeof started === "number") return started;
      const { parsed, client } = started;
      const id = stringFlag(parsed, "id") ?? "";
      const fail = (detail: string) => {
        io.err(`Error transfering leadership: Failed to transfer leadership${detail}\n`);
        return 1;
      };
      let reply: { Success?: unknown } | null;
      try {
        const res = await client.request("POST", "/v1/operator/raft/transfer-leader", { query: { ...staleQuery(parsed), ...(id ? { id } : {}) } });
        reply = res.json() as { Success?: unknown } | null;
      } catch (err) {
        return fail(` ${(err as Error).message}`);
      }
      if (reply?.Success !== true) return fail("");
      io.out("Success\n");
      return 0;
    },
  };
}
