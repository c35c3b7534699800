/**
 * `causeway intention delete`: Consul 1.8's `consul intention delete` (command/intention/delete):
 * DELETE /v1/connect/intentions/:id for an ID, or for `SRC DST` found in the list; prints
 * `Intention deleted.`.
 */
import type { Command } from "../../command.ts";
import { commandHelp, processCliDeps, type CliDeps } from "../support/index.ts";
import { intentionTarget } from "./finder.ts";

const HELP = commandHelp(
  `Usage: causeway intention delete [options] SRC DST
Usage: causeway intention delete [options] ID

  Delete an intention. This cannot be reversed. The intention can be looked
  up via an exact source/destination match or via the unique intention ID.

      $ causeway intention delete web db
`,
  [],
);

export function createIntentionDeleteCommand(deps: CliDeps = processCliDeps): Command {
  return {
    name: "delete",
    synopsis: "Delete an intention.",
    async run(argv, io) {
      const target = await intentionTarget(argv, io, HELP, deps);
      if (typeof target === "number") return target;
      const { client, id } = target;
      try {
        await client.request("DELETE", `/v1/connect/intentions/${encodeURIComponent(id)}`);
      } catch (err) {
        io.err(`Error deleting the intention: ${(err as Error).message}\n`);
        return 1;
      }
      io.out("Intention deleted.\n");
      return 0;
    },
  };
}
