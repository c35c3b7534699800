/**
 * `causeway config list`: Consul's `consul config list` (command/config/list) over GET /v1/config/<kind>;
 * prints the entries' names, one a line.
 */
import type { Command } from "../../command.ts";
import type { FlagSpec } from "../../flags.ts";
import { clientOrExit, commandHelp, parseHttpCommandLine, processCliDeps, type CliDeps } from "../support/index.ts";
import { configPath, kindAndName } from "./kind_name.ts";

const FLAGS: FlagSpec[] = [{ name: "kind", kind: "string", arg: "<kind>", usage: "The kind of configurations to list." }];

const HELP = commandHelp(
  `Usage: causeway config list [options] -kind <config kind>

  Lists all of the config entries for a given kind. The -kind parameter
  is required.

  Example:

    $ causeway config list -kind service-defaults
`,
  FLAGS,
);

export function createConfigListCommand(deps: CliDeps = processCliDeps): Command {
  return {
    name: "list",
    synopsis: "List centralized config entries of a given kind",
    async run(argv, io) {
      const parsed = parseHttpCommandLine(FLAGS, argv, io, HELP);
      if (typeof parsed === "number") return parsed;
      const target = kindAndName(parsed, io, false);
      if (typeof target === "number") return target;
      const client = clientOrExit(parsed, deps, io);
      if (typeof client === "number") return client;
      let entries: { Name?: string }[];
      try {
        entries = ((await client.request("GET", configPath(target.kind))).json() as { Name?: string }[] | null) ?? [];
      } catch (err) {
        io.err(`Error listing config entries for kind ${JSON.stringify(target.kind)}: ${(err as Error).message}\n`);
        return 1;
      }
      for (const entry of entries) io.out(`${entry.Name ?? ""}\n`);
      return 0;
    },
  };
}
