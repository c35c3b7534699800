/**
 * `causeway kv delete`: Consul's `consul kv delete` (command/kv/del/kv_delete.go in hashicorp/consul)
 * over DELETE /v1/kv/<key>, with `?recurse=` for a prefix or `?cas=N` for a check-and-set delete (the
 * agent answers `true` or `false`).
 */
import type { Uint64 } from "../../../lib/index.ts";
import type { Command } from "../../command.ts";
import { UsageError, type FlagSpec } from "../../flags.ts";
import { escapeKeyPath } from "../support/http_client.ts";
import { boolFlag, clientOrExit, commandHelp, processCliDeps, uintFlag, usageFailure, parseHttpCommandLine, type CliDeps } from "../support/index.ts";
import { stripLeadingSlash } from "./pair.ts";

const FLAGS: FlagSpec[] = [
  { name: "cas", kind: "bool", usage: "Perform a Check-And-Set operation. Specifying this value also requires the -modify-index flag to be set. The default value is false." },
  { name: "modify-index", kind: "uint64", arg: "<uint>", usage: "Unsigned integer representing the ModifyIndex of the key. This is used in combination with the -cas flag." },
  { name: "recurse", kind: "bool", usage: "Recursively delete all keys with the path. The default value is false." },
];

const HELP = commandHelp(
  `Usage: causeway kv delete [options] KEY_OR_PREFIX

  Removes the value from the key-value store at the given path. If no key
  exists at the path, no action is taken.

      $ causeway kv delete foo

  To delete all keys which start with "foo", specify the -recurse option:

      $ causeway kv delete -recurse foo

  This will delete the keys named "foo", "food", and "foo/bar/zip" if they
  existed.
`,
  FLAGS,
);

export function createKvDeleteCommand(deps: CliDeps = processCliDeps): Command {
  return {
    name: "delete",
    synopsis: "Removes data from the KV store",
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
      if (parsed.rest.length > 1) {
        io.err(`Too many arguments (expected 1, got ${parsed.rest.length})\n`);
        return 1;
      }
      const key = stripLeadingSlash(parsed.rest[0] ?? "");
      const cas = boolFlag(parsed, "cas");
      const recurse = boolFlag(parsed, "recurse");
      const problem =
        key === "" && !recurse ? "Error! Missing KEY argument"
        : cas && modifyIndex === 0 ? "Cannot delete a key that does not exist. Provide a -modify-index greater than than 0."
        : modifyIndex !== 0 && !cas ? "Cannot specify -modify-index without -cas!"
        : recurse && cas ? "Cannot specify both -cas and -recurse!"
        : undefined;
      if (problem) {
        io.err(`${problem}\n`);
        return 1;
      }
      const client = clientOrExit(parsed, deps, io);
      if (typeof client === "number") return client;
      const path = `/v1/kv/${escapeKeyPath(key)}`;
      try {
        if (recurse) {
          await client.request("DELETE", path, { query: { recurse: "" } }).catch((err: Error) => {
            throw new Error(`Error! Did not delete prefix ${key}: ${err.message}`);
          });
          io.out(`Success! Deleted keys with prefix: ${key}\n`);
        } else if (cas) {
          const res = await client.request("DELETE", path, { query: { cas: String(modifyIndex) } }).catch((err: Error) => {
            throw new Error(`Error! Did not delete key ${key}: ${err.message}`);
          });
          if (!res.text().includes("true")) throw new Error(`Error! Did not delete key ${key}: CAS failed`);
          io.out(`Success! Deleted key: ${key}\n`);
        } else {
          await client.request("DELETE", path).catch((err: Error) => {
            throw new Error(`Error deleting key ${key}: ${err.message}`);
          });
          io.out(`Success! Deleted key: ${key}\n`);
        }
      } catch (err) {
        io.err(`${(err as Error).message}\n`);
        return 1;
      }
      return 0;
    },
  };
}
