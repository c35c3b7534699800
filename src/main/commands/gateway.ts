/** `causeway gateway`: Causeway's own gateway data planes. So far `gateway mesh`. */
import type { Command } from "../command.ts";
import { createGatewayMeshCommand } from "./gateway/mesh.ts";
import { createCommandGroup, processCliDeps, type CliDeps } from "./support/index.ts";

const HELP = `Usage: causeway gateway <subcommand> [options] [args]

  This command has subcommands for running Causeway's built-in gateways,
  which need no Envoy on the host.

  Register and run a mesh gateway:

      $ causeway gateway mesh -register -address 10.0.0.5:8443 -wan-address 198.51.100.5:443

  For more examples, ask for subcommand help.
`;

/** Builds `causeway gateway` over the given environment. */
export function createGatewayCommand(deps: CliDeps = processCliDeps): Command {
  return createCommandGroup({ name: "gateway", synopsis: "Runs a built-in gateway (mesh) without Envoy", help: HELP, subcommands: [createGatewayMeshCommand(deps)] });
}

export const gatewayCommand: Command = createGatewayCommand();
