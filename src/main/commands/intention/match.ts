/**
 * `causeway intention match`: Consul 1.8's `consul intention match` (command/intention/match):
 * GET /v1/connect/intentions/match?by=destination|source&name=NAME; prints each matching intention
 * (`web => db (allow)`) in the order they would be evaluated.
 */
import type { Command } from "../../command.ts";
import type { FlagSpec } from "../../flags.ts";
import { boolFlag, clientOrExit, commandHelp, parseHttpCommandLine, processCliDeps, type CliDeps } from "../support/index.ts";
import { intentionString, type IntentionView } from "./finder.ts";

const FLAGS: FlagSpec[] = [
  { name: "destination", kind: "bool", usage: "Match intentions with the given destination." },
  { name: "source", kind: "bool", usage: "Match intentions with the given source." },
];

const HELP = commandHelp(
  `Usage: causeway intention match [options] SRC|DST

  Show the list of intentions that would be enforced for a given source
  or destination. The intentions are listed in the order they would be
  evaluated.

      $ causeway intention match db
      $ causeway intention match -source web
`,
  FLAGS,
);

export function createIntentionMatchCommand(deps: CliDeps = processCliDeps): Command {
  return {
    name: "match",
    synopsis: "Show intentions that match a source or destination.",
    async run(argv, io) {
      const parsed = parseHttpCommandLine(FLAGS, argv, io, HELP);
      if (typeof parsed === "number") return parsed === 0 ? 0 : 2;
      if (parsed.rest.length !== 1) {
        io.err("Error: command requires exactly one argument: src or dst\n");
        return 1;
      }
      const source = boolFlag(parsed, "source");
      if (source && boolFlag(parsed, "destination")) {
        io.err("Error: only one of -source or -destination may be specified\n");
        return 1;
      }
      const client = clientOrExit(parsed, deps, io);
      if (typeof client === "number") return client;
      const name = parsed.rest[0]!;
      let matches: Record<string, IntentionView[] | null>;
      try {
        const query = { by: source ? "source" : "destination", name };
        matches = (await client.request("GET", "/v1/connect/intentions/match", { query })).json() as Record<string, IntentionView[] | null>;
      } catch (err) {
        io.err(`Error matching the connection: ${(err as Error).message}\n`);
        return 1;
      }
      for (const ixn of matches[name] ?? []) io.out(`${intentionString(ixn)}\n`);
      return 0;
    },
  };
}
