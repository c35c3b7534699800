/**
 * `causeway kv get`: Consul's `consul kv get` (command/kv/get/kv_get.go in hashicorp/consul) over
 * GET /v1/kv/<key> (`?recurse=`, `?keys=&separator=`, `?stale=`, `?dc=`). A missing key is
 * `Error! No key exists at: KEY`, exit 1; an empty prefix listing prints nothing, exit 0.
 */
import type { Command } from "../../command.ts";
import type { FlagSpec } from "../../flags.ts";
import { escapeKeyPath } from "../support/http_client.ts";
import { boolFlag, clientOrExit, commandHelp, processCliDeps, staleQuery, stringFlag, utf8, parseHttpCommandLine, type CliDeps } from "../support/index.ts";
import { pairValue, prettyPair, stripLeadingSlash, type KvPair } from "./pair.ts";

const FLAGS: FlagSpec[] = [
  { name: "base64", kind: "bool", usage: "Base64 encode the value. The default value is false." },
  { name: "detailed", kind: "bool", usage: "Provide additional metadata about the key in addition to the value such as the ModifyIndex and any flags that may have been set on the key. The default value is false." },
  { name: "keys", kind: "bool", usage: "List keys which start with the given prefix, but not their values. This is especially useful if you only need the key names themselves. This option is commonly combined with the -separator option. The default value is false." },
  { name: "recurse", kind: "bool", usage: "Recursively look at all keys prefixed with the given path. The default value is false." },
  { name: "separator", kind: "string", arg: "<string>", usage: 'String to use as a separator between keys. The default value is "/", but this option is only taken into account when paired with the -keys flag.' },
];

const HELP = commandHelp(
  `Usage: causeway kv get [options] [KEY_OR_PREFIX]

  Retrieves the value from the key-value store at the given key name. If no
  key exists with that name, an error is returned. If a key exists with that
  name but has no data, nothing is returned. If the name or prefix is omitted,
  it defaults to "" which is the root of the key-value store.

      $ causeway kv get foo

  To view detailed information about the key (ModifyIndex, flags, session):

      $ causeway kv get -detailed foo

  To list all key-value pairs under a prefix, or only their keys:

      $ causeway kv get -recurse foo
      $ causeway kv get -keys foo

  Values are printed as UTF-8 text; use -base64 for binary values.
`,
  FLAGS,
);

export function createKvGetCommand(deps: CliDeps = processCliDeps): Command {
  return {
    name: "get",
    synopsis: "Retrieves or lists data from the KV store",
    async run(argv, io) {
      const parsed = parseHttpCommandLine(FLAGS, argv, io, HELP);
      if (typeof parsed === "number") return parsed;
      if (parsed.rest.length > 1) {
        io.err(`Too many arguments (expected 1, got ${parsed.rest.length})\n`);
        return 1;
      }
      const key = stripLeadingSlash(parsed.rest[0] ?? "");
      const [keys, recurse, detailed, base64] = ["keys", "recurse", "detailed", "base64"].map((n) => boolFlag(parsed, n));
      if (key === "" && !(recurse || keys)) {
        io.err("Error! Missing KEY argument\n");
        return 1;
      }
      const client = clientOrExit(parsed, deps, io);
      if (typeof client === "number") return client;
      const path = `/v1/kv/${escapeKeyPath(key)}`;
      const query: Record<string, string> = staleQuery(parsed);
      if (keys) {
        query.keys = "";
        const separator = stringFlag(parsed, "separator") ?? "/";
        if (separator !== "") query.separator = separator;
      } else if (recurse) query.recurse = "";
      let result: unknown;
      try {
        const res = await client.request("GET", path, { query, accept: [404] });
        result = res.status === 404 ? null : res.json();
      } catch (err) {
        io.err(`Error querying the agent: ${(err as Error).message}\n`);
        return 1;
      }
      try {
        if (keys) {
          for (const k of (result as string[] | null) ?? []) io.out(`${k}\n`);
          return 0;
        }
        const pairs = (result as KvPair[] | null) ?? [];
        if (recurse) {
          pairs.forEach((pair, i) => {
            if (detailed) io.out(`${prettyPair(pair, base64)}\n${i < pairs.length - 1 ? "\n" : ""}`);
            else io.out(`${pair.Key}:${base64 ? (pair.Value ?? "") : utf8(pairValue(pair))}\n`);
          });
          return 0;
        }
        const pair = pairs[0];
        if (!pair) {
          io.err(`Error! No key exists at: ${key}\n`);
          return 1;
        }
        io.out(`${detailed ? prettyPair(pair, base64) : base64 ? (pair.Value ?? "") : utf8(pairValue(pair))}\n`);
        return 0;
      } catch (err) {
        io.err(`Error rendering KV pair: ${(err as Error).message}\n`);
        return 1;
      }
    },
  };
}
