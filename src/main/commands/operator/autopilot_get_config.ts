/**
 * `causeway operator autopilot get-config`: Consul 1.8's `consul operator autopilot get-config`
 * (command/operator/autopilot/get in hashicorp/consul): GET /v1/operator/autopilot/configuration
 * (`?stale=`, `?dc=`), printed as `Name = value` lines, strings Go-quoted.
 */
import type { Command } from "../../command.ts";
import { commandHelp, goQuote, noArgsCommand, processCliDeps, staleQuery, type CliDeps } from "../support/index.ts";

/** The configuration as the agent answers it (the Go API's `AutopilotConfiguration`). */
export interface AutopilotConfiguration {
  CleanupDeadServers: boolean;
  LastContactThreshold: string;
  MaxTrailingLogs: number;
  MinQuorum: number;
  ServerStabilizationTime: string;
  RedundancyZoneTag: string;
  DisableUpgradeMigration: boolean;
  UpgradeVersionTag: string;
  CreateIndex: number;
  ModifyIndex: number;
}

const HELP = commandHelp(
  `Usage: causeway operator autopilot get-config [options]

  Displays the current Autopilot configuration.
`,
  [],
);

/** The lines Consul 1.8 prints for a configuration. */
export function configLines(c: AutopilotConfiguration): string {
  return [
    `CleanupDeadServers = ${c.CleanupDeadServers}`,
    `LastContactThreshold = ${c.LastContactThreshold}`,
    `MaxTrailingLogs = ${c.MaxTrailingLogs}`,
    `MinQuorum = ${c.MinQuorum}`,
    `ServerStabilizationTime = ${c.ServerStabilizationTime}`,
    `RedundancyZoneTag = ${goQuote(c.RedundancyZoneTag)}`,
    `DisableUpgradeMigration = ${c.DisableUpgradeMigration}`,
    `UpgradeVersionTag = ${goQuote(c.UpgradeVersionTag)}`,
    "",
  ].join("\n");
}

export function createAutopilotGetConfigCommand(deps: CliDeps = processCliDeps): Command {
  return {
    name: "get-config",
    synopsis: "Display the current Autopilot configuration",
    async run(argv, io) {
      const started = noArgsCommand([], argv, io, HELP, deps);
      if (typeof started === "number") return started;
      const { parsed, client } = started;
      let config: AutopilotConfiguration;
      try {
        config = (await client.request("GET", "/v1/operator/autopilot/configuration", { query: staleQuery(parsed) })).json() as AutopilotConfiguration;
      } catch (err) {
        io.err(`Error querying Autopilot configuration: ${(err as Error).message}\n`);
        return 1;
      }
      io.out(configLines(config));
      return 0;
    },
  };
}
