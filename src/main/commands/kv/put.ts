/**
 * `causeway kv put`: Consul's `consul kv put` (command/kv/put/kv_put.go in hashicorp/consul) over
 * PUT /v1/kv/<key> with the value as the raw body and `?flags=N` (when not 0), `?cas=N`, `?acquire=ID`
 * or `?release=ID`. The agent answers `true` or `false`; a `false` CAS is `Error! Did not write to KEY:
 * CAS failed`, exit 1.
 */
import type { Uint64 } from "../../../lib/index.ts";
import type { Command } from "../../command.ts";
import { UsageError, type FlagSpec } from "../../flags.ts";
import { escapeKeyPath } from "../support/http_client.ts";
import { boolFlag, clientOrExit, commandHelp, decodeBase64, loadDataArg, processCliDeps, stringFlag, uintFlag, usageFailure, utf8, parseHttpCommandLine, type CliDeps } from "../support/index.ts";

const FLAGS: FlagSpec[] = [
  { name: "acquire", kind: "bool", usage: "Obtain a lock on the key. If the key does not exist, this operation will create the key and obtain the lock. The session must already exist and be specified via the -session flag. The default value is false." },
  { name: "base64", kind: "bool", usage: "Treat the data as base 64 encoded. The default value is false." },
  { name: "cas", kind: "bool", usage: "Perform a Check-And-Set operation. Specifying this value also requires the -modify-index flag to be set. The default value is false." },
  { name: "flags", kind: "uint64", arg: "<uint>", usage: "Unsigned integer value to assign to this key-value pair. This value is not read by the server, so clients can use this value however makes sense for their use case. The default value is 0 (no flags)." },
  { name: "modify-index", kind: "uint64", arg: "<uint>", usage: "Unsigned integer representing the ModifyIndex of the key. This is used in combination with the -cas flag." },
  { name: "release", kind: "bool", usage: "Forfeit the lock on the key at the given path. This requires the -session flag to be set. The key must be held by the session in order to be unlocked. The default value is false." },
  { name: "session", kind: "string", arg: "<id>", usage: "User-defined identifier for this session as a string. This is commonly used with the -acquire and -release operations to build robust locking, but it can be set on any key. The default value is empty (no session)." },
];

const HELP = commandHelp(
  `Usage: causeway kv put [options] KEY [DATA]

  Writes the data to the given path in the key-value store. The data can be of
  any type.

      $ causeway kv put config/redis/maxconns 5

  The data can also be consumed from a file on disk by prefixing with the "@"
  symbol, or read from stdin using the "-" symbol:

      $ causeway kv put config/program/license @license.lic
      $ echo "abcd1234" | causeway kv put config/program/license -

  The DATA argument itself is optional. If omitted, this will create an empty
  key-value pair at the specified path. If the -base64 flag is specified, the
  data will be treated as base 64 encoded.

  To perform a Check-And-Set operation, specify the -cas flag with the
  appropriate -modify-index flag corresponding to the key you want to perform
  the CAS operation on:

      $ causeway kv put -cas -modify-index=844 config/redis/maxconns 5
`,
  FLAGS,
);

export function createKvPutCommand(deps: CliDeps = processCliDeps): Command {
  return {
    name: "put",
    synopsis: "Sets or updates data in the KV store",
    async run(argv, io) {
      const parsed = parseHttpCommandLine(FLAGS, argv, io, HELP);
      if (typeof parsed === "number") return parsed;
      let kvFlags: Uint64, modifyIndex: Uint64;
      try {
        kvFlags = uintFlag(parsed, "flags");
        modifyIndex = uintFlag(parsed, "modify-index");
      } catch (err) {
        if (err instanceof UsageError) return usageFailure(io, err.message, HELP);
        throw err;
      }
      const args = parsed.rest;
      if (args.length === 0 || args.length > 2) {
        io.err(args.length === 0 ? "Error! Missing KEY argument\n" : `Error! Too many arguments (expected 1 or 2, got ${args.length})\n`);
        return 1;
      }
      const key = args[0]!;
      let data: Uint8Array;
      try {
        data = args[1] ? await loadDataArg(args[1], deps) : new Uint8Array(0);
      } catch (err) {
        io.err(`Error! ${(err as Error).message}\n`);
        return 1;
      }
      if (boolFlag(parsed, "base64")) {
        try {
          data = decodeBase64(utf8(data));
        } catch (err) {
          io.err(`Error! Cannot base 64 decode data: ${(err as Error).message}\n`);
          return 1;
        }
      }
      const session = stringFlag(parsed, "session") ?? "";
      const [cas, acquire, release] = ["cas", "acquire", "release"].map((n) => boolFlag(parsed, n));
      if ((release || acquire) && session === "") {
        io.err("Error! Missing -session (required with -acquire and -release)\n");
        return 1;
      }
      if (cas && modifyIndex === 0) {
        io.err("Must specify -modify-index with -cas!\n");
        return 1;
      }
      const client = clientOrExit(parsed, deps, io);
      if (typeof client === "number") return client;

      const query: Record<string, string> = kvFlags !== 0 ? { flags: String(kvFlags) } : {};
      if (cas) query.cas = String(modifyIndex);
      else if (acquire) query.acquire = session;
      else if (release) query.release = session;
      const failure = cas ? `Error! Did not write to ${key}: ` : "Error! Failed writing data: ";
      let ok: boolean;
      try {
        // api/kv.go refuses such keys before sending anything.
        if (key.startsWith("/")) throw new Error(`Invalid key. Key must not begin with a '/': ${key}`);
        ok = (await client.request("PUT", `/v1/kv/${escapeKeyPath(key)}`, { query, body: data })).text().includes("true");
      } catch (err) {
        io.err(`${failure}${(err as Error).message}\n`);
        return 1;
      }
      if (cas && !ok) {
        io.err(`Error! Did not write to ${key}: CAS failed\n`);
        return 1;
      }
      if (acquire && !ok) {
        io.err("Error! Did not acquire lock\n");
        return 1;
      }
      if (release && !ok) {
        io.err("Error! Did not release lock\n");
        return 1;
      }
      io.out(acquire ? `Success! Lock acquired on: ${key}\n` : release ? `Success! Lock released on: ${key}\n` : `Success! Data written to: ${key}\n`);
      return 0;
    },
  };
}
