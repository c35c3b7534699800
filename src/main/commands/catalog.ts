/**
 * `causeway catalog`: Consul's `consul catalog` (command/catalog in hashicorp/consul), read-only views of
 * the catalog: `datacenters`, `nodes`, `services`, each an HTTP client of /v1/catalog.
 */
import type { Command } from "../command.ts";
import { createCatalogDatacentersCommand } from "./catalog/datacenters.ts";
import { createCatalogNodesCommand } from "./catalog/nodes.ts";
import { createCatalogServicesCommand } from "./catalog/services.ts";
import { createCommandGroup, processCliDeps, type CliDeps } from "./support/index.ts";

const HELP = `Usage: causeway catalog <subcommand> [options] [args]

  This command has subcommands for interacting with the catalog. The catalog
  should not be confused with the agent, although the APIs and responses may
  be similar.

  List all datacenters:

      $ causeway catalog datacenters

  List all nodes:

      $ causeway catalog nodes

  List all services:

      $ causeway catalog services

  For more examples, ask for subcommand help.
`;

/** Builds `causeway catalog` over the given environment and fetch. */
export function createCatalogCommand(deps: CliDeps = processCliDeps): Command {
  return createCommandGroup({
    name: "catalog",
    synopsis: "Interact with the catalog",
    help: HELP,
    subcommands: [createCatalogDatacentersCommand(deps), createCatalogNodesCommand(deps), createCatalogServicesCommand(deps)],
  });
}

/** `causeway catalog` against the process environment. */
export const catalogCommand: Command = createCatalogCommand();
