/**
 * `causeway validate`: Consul's `consul validate` (command/validate/validate.go in hashicorp/consul).
 * Reads the config files and directories given as the agent would (-config-file / -config-dir: a
 * directory's *.json files in lexical order), builds and checks the whole configuration, and says
 * "Configuration is valid!" (nothing with -quiet) or "Config validation failed: <reason>" with exit 1.
 * Causeway reads JSON only: `-config-format hcl` is refused.
 */
import { statSync } from "node:fs";
import type { Command, CommandIo } from "../command.ts";
import { ConfigError, readConfigSources } from "../config.ts";
import { formatFlags, parseCommandLine, type FlagSpec } from "../flags.ts";
import { buildAgentConfig } from "./agent.ts";

const FLAGS: FlagSpec[] = [
  { name: "config-format", kind: "string", arg: "<string>", usage: "Config files are in this format irrespective of their extension. Must be 'json' (Causeway reads JSON only)." },
  { name: "quiet", kind: "bool", usage: "When given, a successful run will produce no output." },
];

const HELP = `Usage: causeway validate [options] FILE_OR_DIRECTORY...

  Performs a thorough sanity test on Causeway configuration files. For each file
  or directory given, the validate command will attempt to parse the contents
  just as the "causeway agent" command would, and catch any errors.

  This is useful to do a test of the configuration only, without actually
  starting the agent. This performs all of the validation the agent would, so
  this should be given the complete set of configuration files that are going
  to be loaded by the agent. This command cannot operate on partial
  configuration fragments since those won't pass the full agent validation.

  Returns 0 if the configuration is valid, or 1 if there are problems.

${formatFlags(FLAGS)}
`;

/** Whether `path` names a directory (read as -config-dir) rather than a file; a missing path is a file, whose read then fails in words. */
function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

export const validateCommand: Command = {
  name: "validate",
  synopsis: "Validate config files/directories",
  run(argv, io: CommandIo) {
    const parsed = parseCommandLine(FLAGS, argv, io, HELP, Number.POSITIVE_INFINITY);
    if (typeof parsed === "number") return Promise.resolve(parsed);
    const format = parsed.values.get("config-format") as string | undefined;
    if (format !== undefined && format !== "json") {
      io.err(format === "hcl" ? "-config-format hcl is not supported: Causeway reads JSON config files only\n" : "-config-format must be either 'hcl' or 'json'\n");
      return Promise.resolve(1);
    }
    if (parsed.rest.length < 1) {
      io.err("Must specify at least one config file or directory\n");
      return Promise.resolve(1);
    }
    try {
      buildAgentConfig(readConfigSources(parsed.rest.map((path) => ({ kind: isDirectory(path) ? "dir" as const : "file" as const, path }))));
    } catch (err) {
      if (!(err instanceof ConfigError)) throw err;
      io.err(`Config validation failed: ${err.message}\n`);
      return Promise.resolve(1);
    }
    if (parsed.values.get("quiet") !== true) io.out("Configuration is valid!\n");
    return Promise.resolve(0);
  },
};
