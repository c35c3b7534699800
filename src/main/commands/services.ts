/**
 * `causeway services`: Consul's `consul services` (command/services in hashicorp/consul): `register` and
 * `deregister` services with the local agent over /v1/agent/service/*.
 */
import type { Command } from "../command.ts";
import { createServicesDeregisterCommand } from "./services/deregister.ts";
import { createServicesRegisterCommand } from "./services/register.ts";
import { createCommandGroup, processCliDeps, type CliDeps } from "./support/index.ts";

const HELP = `Usage: causeway services <subcommand> [options] [args]

  This command has subcommands for interacting with services. The subcommands
  default to working with services registered with the local agent. Please see
  the "causeway catalog" command for interacting with the entire catalog.

  For more examples, ask for subcommand help.
`;

/** Builds `causeway services` over the given environment and fetch. */
export function createServicesCommand(deps: CliDeps = processCliDeps): Command {
  return createCommandGroup({
    name: "services",
    synopsis: "Interact with services",
    help: HELP,
    subcommands: [createServicesDeregisterCommand(deps), createServicesRegisterCommand(deps)],
  });
}

/** `causeway services` against the process environment. */
export const servicesCommand: Command = createServicesCommand();
