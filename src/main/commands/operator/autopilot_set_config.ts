/**
 * `causeway operator autopilot set-config`: Consul 1.8's `consul operator autopilot set-config`
 * (command/operator/autopilot/set in hashicorp/consul): reads the configuration, changes the fields
 * whose flags were given, and writes it back with `?cas=<ModifyIndex>`. Prints `Configuration
 * updated!`, or `Configuration could not be atomically updated, please try again` (exit 1) when another
 * change came in between.
 */
import type { Command } from "../../command.ts";
import { UsageError, type FlagSpec } from "../../flags.ts";
import { formatGoDuration, GoError, parseGoDuration } from "../../../lib/index.ts";
import { boolFlag, commandHelp, noArgsCommand, processCliDeps, stringFlag, uintFlag, usageFailure, type CliDeps } from "../support/index.ts";
import type { AutopilotConfiguration } from "./autopilot_get_config.ts";

const FLAGS: FlagSpec[] = [
  { name: "cleanup-dead-servers", kind: "bool", usage: "Controls whether Causeway will automatically remove dead servers when new ones are successfully added. Must be one of `true|false`." },
  { name: "max-trailing-logs", kind: "uint64", arg: "<value>", usage: "Controls the maximum number of log entries that a server can trail the leader by before being considered unhealthy." },
  { name: "min-quorum", kind: "uint64", arg: "<value>", usage: "Sets the minimum number of servers required in a cluster before autopilot is allowed to prune dead servers." },
  { name: "last-contact-threshold", kind: "string", arg: "<value>", usage: "Controls the maximum amount of time a server can go without contact from the leader before being considered unhealthy. Must be a duration value such as `200ms`." },
  { name: "server-stabilization-time", kind: "string", arg: "<value>", usage: "Controls the minimum amount of time a server must be stable in the 'healthy' state before being added to the cluster. Must be a duration value such as `10s`." },
  { name: "redundancy-zone-tag", kind: "string", arg: "<value>", usage: "(Enterprise-only) Controls the node_meta tag name used for separating servers into different redundancy zones." },
  { name: "disable-upgrade-migration", kind: "bool", usage: "(Enterprise-only) Controls whether Causeway will avoid promoting new servers until it can perform a migration. Must be one of `true|false`." },
  { name: "upgrade-version-tag", kind: "string", arg: "<value>", usage: "(Enterprise-only) The node_meta tag to use for version info when performing upgrade migrations. If left blank, the Causeway version will be used." },
];

const HELP = commandHelp(
  `Usage: causeway operator autopilot set-config [options]

  Modifies the current Autopilot configuration.
`,
  FLAGS,
);

/** The changes the given flags ask for; throws UsageError with Go's flag wording for a bad value. */
function changesOf(parsed: Parameters<typeof stringFlag>[0]): Partial<AutopilotConfiguration> {
  const out: Partial<AutopilotConfiguration> = {};
  const given = (name: string) => parsed.values.has(name);
  if (given("cleanup-dead-servers")) out.CleanupDeadServers = boolFlag(parsed, "cleanup-dead-servers");
  if (given("disable-upgrade-migration")) out.DisableUpgradeMigration = boolFlag(parsed, "disable-upgrade-migration");
  if (given("redundancy-zone-tag")) out.RedundancyZoneTag = stringFlag(parsed, "redundancy-zone-tag") ?? "";
  if (given("upgrade-version-tag")) out.UpgradeVersionTag = stringFlag(parsed, "upgrade-version-tag") ?? "";
  const count = (name: string) => {
    const v = uintFlag(parsed, name);
    if (typeof v === "bigint") throw new UsageError(`invalid value "${v}" for flag -${name}: value out of range`);
    return v;
  };
  if (given("max-trailing-logs")) out.MaxTrailingLogs = count("max-trailing-logs");
  if (given("min-quorum")) out.MinQuorum = count("min-quorum");
  const duration = (name: string) => {
    const raw = stringFlag(parsed, name) ?? "";
    try {
      return formatGoDuration(parseGoDuration(raw));
    } catch (err) {
      throw new UsageError(`invalid value "${raw}" for flag -${name}: ${err instanceof GoError ? err.message : String(err)}`);
    }
  };
  if (given("last-contact-threshold")) out.LastContactThreshold = duration("last-contact-threshold");
  if (given("server-stabilization-time")) out.ServerStabilizationTime = duration("server-stabilization-time");
  return out;
}

export function createAutopilotSetConfigCommand(deps: CliDeps = processCliDeps): Command {
  return {
    name: "set-config",
    synopsis: "Modify the current Autopilot configuration",
    async run(argv, io) {
      const started = noArgsCommand(FLAGS, argv, io, HELP, deps);
      if (typeof started === "number") return started;
      const { parsed, client } = started;
      let changes: Partial<AutopilotConfiguration>;
      try {
        changes = changesOf(parsed);
      } catch (err) {
        if (err instanceof UsageError) return usageFailure(io, err.message, HELP);
        throw err;
      }
      const path = "/v1/operator/autopilot/configuration";
      let current: AutopilotConfiguration;
      try {
        current = (await client.request("GET", path)).json() as AutopilotConfiguration;
      } catch (err) {
        io.err(`Error querying Autopilot configuration: ${(err as Error).message}\n`);
        return 1;
      }
      const next = { ...current, ...changes };
      let updated: boolean;
      try {
        const res = await client.request("PUT", path, { query: { cas: String(current.ModifyIndex) }, body: JSON.stringify(next) });
        // The Go client reads the answer as "contains true".
        updated = res.text().includes("true");
      } catch (err) {
        io.err(`Error setting Autopilot configuration: ${(err as Error).message}\n`);
        return 1;
      }
      if (updated) {
        io.out("Configuration updated!\n");
        return 0;
      }
      io.out("Configuration could not be atomically updated, please try again\n");
      return 1;
    },
  };
}
