/**
 * `causeway operator`: Consul's `consul operator` (command/operator in hashicorp/consul), cluster-level
 * tools for operators. So far `operator raft list-peers`, `remove-peer` and `transfer-leader`, over
 * /v1/operator/raft/*, and `operator autopilot get-config` and `set-config`, over
 * /v1/operator/autopilot/configuration.
 */
import type { Command } from "../command.ts";
import { createAutopilotGetConfigCommand } from "./operator/autopilot_get_config.ts";
import { createAutopilotSetConfigCommand } from "./operator/autopilot_set_config.ts";
import { createRaftListPeersCommand } from "./operator/raft_list_peers.ts";
import { createRaftRemovePeerCommand } from "./operator/raft_remove_peer.ts";
import { createRaftTransferLeaderCommand } from "./operator/raft_transfer_leader.ts";
import { createCommandGroup, processCliDeps, type CliDeps } from "./support/index.ts";

const HELP = `Usage: causeway operator <subcommand> [options]

  Provides cluster-level tools for operators, such as interacting with the Raft
  subsystem. NOTE: Use this command with extreme caution, as improper use could
  lead to a cluster outage and potential data loss.

  Run causeway operator <subcommand> with no arguments for help on that
  subcommand.
`;

const RAFT_HELP = `Usage: causeway operator raft <subcommand> [options]

  The Raft operator command is used to interact with the Raft subsystem. The
  command can be used to verify Raft peers or in rare cases to recover quorum by
  removing invalid peers.
`;

const AUTOPILOT_HELP = `Usage: causeway operator autopilot <subcommand> [options]

  The Autopilot operator command is used to interact with Causeway's Autopilot
  subsystem. The command can be used to view or modify the current configuration.
`;

/** Builds `causeway operator` over the given environment and fetch. */
export function createOperatorCommand(deps: CliDeps = processCliDeps): Command {
  const raft = createCommandGroup({
    name: "raft",
    synopsis: "Provides cluster-level tools for operators",
    help: RAFT_HELP,
    subcommands: [createRaftListPeersCommand(deps), createRaftRemovePeerCommand(deps), createRaftTransferLeaderCommand(deps)],
  });
  const autopilot = createCommandGroup({
    name: "autopilot",
    synopsis: "Provides tools for modifying Autopilot configuration",
    help: AUTOPILOT_HELP,
    subcommands: [createAutopilotGetConfigCommand(deps), createAutopilotSetConfigCommand(deps)],
  });
  return createCommandGroup({ name: "operator", synopsis: "Provides cluster-level tools for operators", help: HELP, subcommands: [autopilot, raft] });
}

/** `causeway operator` against the process environment. */
export const operatorCommand: Command = createOperatorCommand();
