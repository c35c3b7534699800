/**
 * `causeway kv`: Consul's `consul kv` (command/kv in hashicorp/consul), the key-value store's
 * subcommands `get`, `put`, `delete`, `export` and `import`, each an HTTP client of /v1/kv.
 */
import type { Command } from "../command.ts";
import { createKvDeleteCommand } from "./kv/delete.ts";
import { createKvExportCommand } from "./kv/export.ts";
import { createKvGetCommand } from "./kv/get.ts";
import { createKvImportCommand } from "./kv/import.ts";
import { createKvPutCommand } from "./kv/put.ts";
import { createCommandGroup, processCliDeps, type CliDeps } from "./support/index.ts";

const HELP = `Usage: causeway kv <subcommand> [options] [args]

  This command has subcommands for interacting with the key-value store.
  Here are some simple examples, and more detailed examples are available
  in the subcommands or the documentation.

  Create or update the key named "redis/config/connections" with the value "5":

      $ causeway kv put redis/config/connections 5

  Read this value back:

      $ causeway kv get redis/config/connections

  Or get detailed key information:

      $ causeway kv get -detailed redis/config/connections

  Finally, delete the key:

      $ causeway kv delete redis/config/connections

  For more examples, ask for subcommand help.
`;

/** Builds `causeway kv` over the given environment, fetch and stdin. */
export function createKvCommand(deps: CliDeps = processCliDeps): Command {
  return createCommandGroup({
    name: "kv",
    synopsis: "Interact with the key-value store",
    help: HELP,
    subcommands: [createKvDeleteCommand(deps), createKvExportCommand(deps), createKvGetCommand(deps), createKvImportCommand(deps), createKvPutCommand(deps)],
  });
}

/** `causeway kv` against the process environment. */
export const kvCommand: Command = createKvCommand();
