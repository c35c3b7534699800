/**
 * `causeway config`: Consul's `consul config` (command/config in hashicorp/consul), the centralized
 * configuration entries' subcommands `write`, `read`, `list` and `delete`, each an HTTP client of /v1/config.
 */
import type { Command } from "../command.ts";
import { createConfigDeleteCommand } from "./config/delete.ts";
import { createConfigListCommand } from "./config/list.ts";
import { createConfigReadCommand } from "./config/read.ts";
import { createConfigWriteCommand } from "./config/write.ts";
import { createCommandGroup, processCliDeps, type CliDeps } from "./support/index.ts";

const HELP = `Usage: causeway config <subcommand> [options] [args]

  This command has subcommands for interacting with the centralized
  configuration system. Here are some simple examples, and more detailed
  examples are available in the subcommands or the documentation.

  Write a config:

    $ causeway config write web.serviceconf.json

  Read a config:

    $ causeway config read -kind service-defaults -name web

  List all configs for a type:

    $ causeway config list -kind service-defaults

  Delete a config:

    $ causeway config delete -kind service-defaults -name web

  For more examples, ask for subcommand help or view the documentation.
`;

/** Builds `causeway config` over the given environment, fetch and stdin. */
export function createConfigCommand(deps: CliDeps = processCliDeps): Command {
  return createCommandGroup({
    name: "config",
    synopsis: "Interact with the centralized configuration entries",
    help: HELP,
    subcommands: [createConfigDeleteCommand(deps), createConfigListCommand(deps), createConfigReadCommand(deps), createConfigWriteCommand(deps)],
  });
}

/** `causeway config` against the process environment. */
export const configCommand: Command = createConfigCommand();
