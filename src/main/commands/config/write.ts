/**
 * `causeway config write`: Consul's `consul config write` (command/config/write) over PUT /v1/config
 * [?cas=N]. The entry is read from a file or from stdin (`-`), decoded (JSON; HCL is not supported) with
 * the same decoder the server uses, so a bad entry fails before any request. The agent answers true or
 * false; false is `Config entry not updated: KIND/NAME`, exit 1.
 */
import type { Uint64 } from "../../../lib/index.ts";
import { readFile } from "node:fs/promises";
import { decodeConfigEntry, type ConfigEntry } from "../../../connect/index.ts";
import type { Command } from "../../command.ts";
import { UsageError, type FlagSpec } from "../../flags.ts";
import { boolFlag, clientOrExit, commandHelp, parseHttpCommandLine, processCliDeps, uintFlag, usageFailure, utf8, type CliDeps } from "../support/index.ts";

const FLAGS: FlagSpec[] = [
  { name: "cas", kind: "bool", usage: "Perform a Check-And-Set operation. Specifying this value also requires the -modify-index flag to be set. The default value is false." },
  { name: "modify-index", kind: "uint64", arg: "<uint>", usage: "Unsigned integer representing the ModifyIndex of the config entry. This is used in combination with the -cas flag." },
];

const HELP = commandHelp(
  `Usage: causeway config write [options] <configuration>

  Request a config entry to be created or updated. The configuration
  argument is either a file path or '-' to indicate that the config
  should be read from stdin. The data should be in JSON form.

  Example (from file):

    $ causeway config write web.service.json

  Example (from stdin):

    $ causeway config write -
`,
  FLAGS,
);

/** helpers.LoadDataSourceNoRaw: `-` is stdin, anything else a file path. */
async function loadData(arg: string, deps: CliDeps): Promise<string> {
  if (arg === "") throw new Error("Failed to load data: must specify a file path or '-' for stdin");
  if (arg === "-") {
    try {
      return utf8(await deps.readStdin());
    } catch (err) {
      throw new Error(`Failed to read stdin: ${(err as Error).message}`);
    }
  }
  try {
    return await readFile(arg, "utf8");
  } catch (err) {
    throw new Error(`Failed to read file: ${(err as Error).message}`);
  }
}

export function createConfigWriteCommand(deps: CliDeps = processCliDeps): Command {
  return {
    name: "write",
    synopsis: "Create or update a centralized config entry",
    async run(argv, io) {
      const parsed = parseHttpCommandLine(FLAGS, argv, io, HELP);
      if (typeof parsed === "number") return parsed;
      let modifyIndex: Uint64;
      try {
        modifyIndex = uintFlag(parsed, "modify-index");
      } catch (err) {
        if (err instanceof UsageError) return usageFailure(io, err.message, HELP);
        throw err;
      }
      if (parsed.rest.length !== 1) {
        io.err("Must provide exactly one positional argument to specify the config entry to write\n");
        return 1;
      }
      let data: string;
      try {
        data = await loadData(parsed.rest[0]!, deps);
      } catch (err) {
        io.err(`Failed to load data: ${(err as Error).message}\n`);
        return 1;
      }
      let entry: ConfigEntry;
      try {
        entry = decodeConfigEntry(data);
      } catch (err) {
        io.err(`Failed to decode config entry input: ${(err as Error).message}\n`);
        return 1;
      }
      const client = clientOrExit(parsed, deps, io);
      if (typeof client === "number") return client;
      const what = `${entry.Kind}/${entry.Name}`;
      let written: boolean;
      try {
        const query = boolFlag(parsed, "cas") ? { cas: String(modifyIndex) } : undefined;
        written = (await client.request("PUT", "/v1/config", { query, body: JSON.stringify(entry) })).text().trim() === "true";
      } catch (err) {
        io.err(`Error writing config entry ${what}: ${(err as Error).message}\n`);
        return 1;
      }
      if (!written) {
        io.err(`Config entry not updated: ${what}\n`);
        return 1;
      }
      io.out(`Config entry written: ${what}\n`);
      return 0;
    },
  };
}
