/**
 * `causeway connect`: Consul's `consul connect` (command/connect in hashicorp/consul). So far the
 * `connect ca` subcommands, `get-config` and `set-config`, and `connect envoy` for sidecars.
 */
import type { Command } from "../command.ts";
import { createCaGetConfigCommand, createCaSetConfigCommand } from "./connect/ca.ts";
import { createConnectEnvoyCommand } from "./connect/envoy.ts";
import { createCommandGroup, processCliDeps, type CliDeps } from "./support/index.ts";

const HELP = `Usage: causeway connect <subcommand> [options] [args]

  This command has subcommands for interacting with the service mesh.

  Here are some simple examples, and more detailed examples are available
  in the subcommands or the documentation.

  View the current CA configuration:

      $ causeway connect ca get-config

  Run Envoy as the sidecar proxy of the local "web" service instance:

      $ causeway connect envoy -sidecar-for web

  For more examples, ask for subcommand help or view the documentation.
`;

const CA_HELP = `Usage: causeway connect ca <subcommand> [options] [args]

  This command has subcommands for interacting with the service mesh's
  Certificate Authority (CA).

  Here are some simple examples, and more detailed examples are available
  in the subcommands or the documentation.

  Get the configuration:

      $ causeway connect ca get-config

  Update the configuration:

      $ causeway connect ca set-config -config-file ca.json

  For more examples, ask for subcommand help or view the documentation.
`;

/** Builds `causeway connect` over the given environment and fetch. */
export function createConnectCommand(deps: CliDeps = processCliDeps): Command {
  const ca = createCommandGroup({
    name: "ca",
    synopsis: "Interact with the Consul Connect Certificate Authority (CA)",
    help: CA_HELP,
    subcommands: [createCaGetConfigCommand(deps), createCaSetConfigCommand(deps)],
  });
  return createCommandGroup({ name: "connect", synopsis: "Interact with Consul Connect", help: HELP, subcommands: [ca, createConnectEnvoyCommand(deps)] });
}

/** `causeway connect` against the process environment. */
export const connectCommand: Command = createConnectCommand();
