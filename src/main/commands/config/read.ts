/**
 * `causeway config read`: Consul's `consul config read` (command/config/read) over
 * GET /v1/config/<kind>/<name>; prints the entry as JSON indented by four spaces.
 */
import type { Command } from "../../command.ts";
import type { FlagSpec } from "../../flags.ts";
import { clientOrExit, commandHelp, parseHttpCommandLine, processCliDeps, type CliDeps } from "../support/index.ts";
import { configPath, kindAndName, kindFlag, nameFlag } from "./kind_name.ts";

const FLAGS: FlagSpec[] = [kindFlag("read"), nameFlag("read")];

const HELP = commandHelp(
  `Usage: causeway config read [options] -kind <config kind> -name <config name>

  Reads the config entry specified by the given kind and name and outputs its
  JSON representation.

  Example:

    $ causeway config read -kind proxy-defaults -name global
`,
  FLAGS,
);

/** Go's json.MarshalIndent(v, "", "    ") for plain data (with its HTML-safe escapes). */
export function goJsonIndent4(value: unknown): string {
  return JSON.stringify(value, null, 4).replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

export function createConfigReadCommand(deps: CliDeps = processCliDeps): Command {
  return {
    name: "read",
    synopsis: "Read a centralized config entry",
    async run(argv, io) {
      const parsed = parseHttpCommandLine(FLAGS, argv, io, HELP);
      if (typeof parsed === "number") return parsed;
      const target = kindAndName(parsed, io, true);
      if (typeof target === "number") return target;
      const client = clientOrExit(parsed, deps, io);
      if (typeof client === "number") return client;
      let entry: unknown;
      try {
        entry = (await client.request("GET", configPath(target.kind, target.name))).json();
      } catch (err) {
        io.err(`Error reading config entry ${JSON.stringify(target.kind)} / ${JSON.stringify(target.name)}: ${(err as Error).message}\n`);
        return 1;
      }
      io.out(`${goJsonIndent4(entry)}\n`);
      return 0;
    },
  };
}
