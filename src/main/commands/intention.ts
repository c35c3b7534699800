/**
 * `causeway intention`: Consul's `consul intention` (command/intention in hashicorp/consul, 1.8), the
 * subcommands `create`, `delete`, `get`, `check` and `match`, each an HTTP client of /v1/connect/intentions.
 */
import type { Command } from "../command.ts";
import { createIntentionCheckCommand } from "./intention/check.ts";
import { createIntentionCreateCommand } from "./intention/create.ts";
import { createIntentionDeleteCommand } from "./intention/delete.ts";
import { createIntentionGetCommand } from "./intention/get.ts";
import { createIntentionMatchCommand } from "./intention/match.ts";
import { createCommandGroup, processCliDeps, type CliDeps } from "./support/index.ts";

const HELP = `Usage: causeway intention <subcommand> [options] [args]

  This command has subcommands for interacting with intentions. Intentions
  are permissions describing which services are allowed to communicate via
  Connect. Here are some simple examples, and more detailed examples are
  available in the subcommands or the documentation.

  Create an intention to allow "web" to talk to "db":

      $ causeway intention create web db

  Test whether a "web" is allowed to connect to "db":

      $ causeway intention check web db

  Find all intentions for communicating to the "db" service:

      $ causeway intention match db

  For more examples, ask for subcommand help or view the documentation.
`;

/** Builds `causeway intention` over the given environment, fetch and stdin. */
export function createIntentionCommand(deps: CliDeps = processCliDeps): Command {
  return createCommandGroup({
    name: "intention",
    synopsis: "Interact with Connect service intentions",
    help: HELP,
    subcommands: [
      createIntentionCheckCommand(deps), createIntentionCreateCommand(deps), createIntentionDeleteCommand(deps),
      createIntentionGetCommand(deps), createIntentionMatchCommand(deps),
    ],
  });
}

/** `causeway intention` against the process environment. */
export const intentionCommand: Command = createIntentionCommand();
