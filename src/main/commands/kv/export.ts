/**
 * `causeway kv export`: Consul's `consul kv export` (command/kv/exp/kv_export.go in hashicorp/consul):
 * GET /v1/kv/<prefix>?recurse= and the pairs printed as a tab-indented JSON array of
 * `{"key","flags","value"}` (value base64), Go's `json.MarshalIndent` layout; `[]` when nothing matches.
 */
import type { Uint64 } from "../../../lib/index.ts";
import type { Command } from "../../command.ts";
import { escapeKeyPath } from "../support/http_client.ts";
import { clientOrExit, commandHelp, encodeBase64, goJsonIndent, processCliDeps, staleQuery, parseHttpCommandLine, type CliDeps } from "../support/index.ts";
import { pairValue, stripLeadingSlash, type KvPair } from "./pair.ts";

/** One exported entry (command/kv/impexp.Entry). */
export interface KvExportEntry {
  readonly key: string;
  readonly flags: Uint64;
  /** Base64 of the value. */
  readonly value: string;
}

const HELP = commandHelp(
  `Usage: causeway kv export [options] [KEY_OR_PREFIX]

  Retrieves key-value pairs for the given prefix from the key-value store, and
  writes a JSON representation to stdout. This can be used with the command
  "causeway kv import" to move entire trees between clusters.

      $ causeway kv export vault
`,
  [],
);

export function createKvExportCommand(deps: CliDeps = processCliDeps): Command {
  return {
    name: "export",
    synopsis: "Exports a tree from the KV store as JSON",
    async run(argv, io) {
      const parsed = parseHttpCommandLine([], argv, io, HELP);
      if (typeof parsed === "number") return parsed;
      if (parsed.rest.length > 1) {
        io.err(`Too many arguments (expected 1, got ${parsed.rest.length})\n`);
        return 1;
      }
      const prefix = stripLeadingSlash(parsed.rest[0] ?? "");
      const client = clientOrExit(parsed, deps, io);
      if (typeof client === "number") return client;
      let pairs: KvPair[];
      try {
        const res = await client.request("GET", `/v1/kv/${escapeKeyPath(prefix)}`, { query: { ...staleQuery(parsed), recurse: "" }, accept: [404] });
        pairs = res.status === 404 ? [] : ((res.json() as KvPair[] | null) ?? []);
      } catch (err) {
        io.err(`Error querying the agent: ${(err as Error).message}\n`);
        return 1;
      }
      let entries: KvExportEntry[];
      try {
        entries = pairs.map((p) => ({ key: p.Key, flags: p.Flags ?? 0, value: encodeBase64(pairValue(p)) }));
      } catch (err) {
        io.err(`Error exporting KV data: ${(err as Error).message}\n`);
        return 1;
      }
      io.out(`${goJsonIndent(entries)}\n`);
      return 0;
    },
  };
}
