/**
 * `causeway connect ca get-config` and `set-config`: Consul's command/connect/ca/get and
 * command/connect/ca/set, over GET and PUT /v1/connect/ca/configuration.
 */
import { readFile } from "node:fs/promises";
import type { Command } from "../../command.ts";
import type { FlagSpec } from "../../flags.ts";
import {
  clientOrExit, commandHelp, noArgsCommand, parseHttpCommandLine, processCliDeps, staleQuery, stringFlag, type CliDeps,
} from "../support/index.ts";

const GET_HELP = commandHelp(
  `Usage: causeway connect ca get-config [options]

  Displays the current service mesh Certificate Authority (CA) configuration.

      $ causeway connect ca get-config
`,
  [],
);

const CONFIG_FILE_FLAG: FlagSpec = {
  name: "config-file",
  kind: "string",
  arg: "<path>",
  usage: "The path to the config file to use.",
};

const SET_HELP = commandHelp(
  `Usage: causeway connect ca set-config [options]

  Modifies the current service mesh Certificate Authority (CA) configuration.
  A new PrivateKey (and RootCert) in the configuration rotates the root: the
  new root is cross-signed by the old one, which stays trusted meanwhile.

      $ causeway connect ca set-config -config-file ca.json
`,
  [CONFIG_FILE_FLAG],
);

/** Go's `json.MarshalIndent(v, "", "\\t")`. */
function goIndent(v: unknown): string {
  return JSON.stringify(v, null, "\t");
}

export function createCaGetConfigCommand(deps: CliDeps = processCliDeps): Command {
  return {
    name: "get-config",
    synopsis: "Display the current Connect Certificate Authority (CA) configuration",
    async run(argv, io) {
      const started = noArgsCommand([], argv, io, GET_HELP, deps);
      if (typeof started === "number") return started;
      const { parsed, client } = started;
      let config: unknown;
      try {
        config = (await client.request("GET", "/v1/connect/ca/configuration", { query: staleQuery(parsed) })).json();
      } catch (err) {
        io.err(`Error request CA configuration: ${(err as Error).message}\n`);
        return 1;
      }
      io.out(`${goIndent(config)}\n`);
      return 0;
    },
  };
}

export function createCaSetConfigCommand(deps: CliDeps = processCliDeps): Command {
  return {
    name: "set-config",
    synopsis: "Modify the current Connect CA configuration",
    async run(argv, io) {
      const parsed = parseHttpCommandLine([CONFIG_FILE_FLAG], argv, io, SET_HELP);
      if (typeof parsed === "number") return parsed;
      const file = stringFlag(parsed, "config-file");
      if (!file) {
        io.err("The -config-file flag is required\n");
        return 1;
      }
      const client = clientOrExit(parsed, deps, io);
      if (typeof client === "number") return client;
      let text: string;
      try {
        text = await readFile(file, "utf8");
      } catch (err) {
        io.err(`Error reading config file: ${(err as Error).message}\n`);
        return 1;
      }
      let config: unknown;
      try {
        config = JSON.parse(text);
      } catch (err) {
        io.err(`Error parsing config file: ${(err as Error).message}\n`);
        return 1;
      }
      try {
        await client.request("PUT", "/v1/connect/ca/configuration", { body: JSON.stringify(config) });
      } catch (err) {
        io.err(`Error setting CA configuration: ${(err as Error).message}\n`);
        return 1;
      }
      io.out("Configuration updated!\n");
      return 0;
    },
  };
}
