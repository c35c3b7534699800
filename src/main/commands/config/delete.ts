/**
 * `causeway config delete`: Consul's `consul config delete` (command/config/delete) over
 * DELETE /v1/config/<kind>/<name>; prints `Config entry deleted: KIND/NAME`.
 */
import type { Command } from "../../command.ts";
import type { FlagSpec } from "../../flags.ts";
import { clientOrExit, commandHelp, parseHttpCommandLine, processCliDeps, type CliDeps } from "../support/index.ts";
import { configPath, kindAndName, kindFlag, nameFlag } from "./kind_name.ts";

const FLAGS: FlagSpec[] = [kindFlag("delete"), nameFlag("delete")];

const HELP = commandHelp(
  `Usage: causeway config delete [options] -kind <config kind> -name <config name>

  Deletes the configuration entry specified by the kind and name.

  Example:

    $ causeway config delete -kind service-defaults -name web
`,
  FLAGS,
);

export function createConfigDeleteCommand(deps: CliDeps = processCliDeps): Command {
  return {
    name: "delete",
    synopsis: "Delete a centralized config entry",
    async run(argv, io) {
      const parsed = parseHttpCommandLine(FLAGS, argv, io, HELP);
      if (typeof parsed === "number") return parsed;
      const target = kindAndName(parsed, io, true);
      if (typeof target === "number") return target;
      const client = clientOrExit(parsed, deps, io);
      if (typeof client === "number") return client;
      try {
        await client.request("DELETE", configPath(target.kind, target.name));
      } catch (err) {
        io.err(`Error deleting config entry ${target.kind}/${target.name}: ${(err as Error).message}\n`);
        return 1;
      }
      io.out(`Config entry deleted: ${target.kind}/${target.name}\n`);
      return 0;
    },
  };
}
