/**
 * `causeway intention check`: Consul 1.8's `consul intention check` (command/intention/check):
 * GET /v1/connect/intentions/check. Prints `Allowed` (exit 0) or `Denied` (exit 1); any error exits 2,
 * as Consul's does (its check_test.go asserts 1 for a denied connection).
 */
import type { Command } from "../../command.ts";
import { clientOrExit, commandHelp, parseHttpCommandLine, processCliDeps, type CliDeps } from "../support/index.ts";

const HELP = commandHelp(
  `Usage: causeway intention check [options] SRC DST

  Check whether a connection between SRC and DST would be allowed by
  Connect given the current configuration.

      $ causeway intention check web db
`,
  [],
);

export function createIntentionCheckCommand(deps: CliDeps = processCliDeps): Command {
  return {
    name: "check",
    synopsis: "Check whether a connection between two services is allowed.",
    async run(argv, io) {
      const parsed = parseHttpCommandLine([], argv, io, HELP);
      if (typeof parsed === "number") return parsed === 0 ? 0 : 2;
      if (parsed.rest.length !== 2) {
        io.err("Error: command requires exactly two arguments: src and dst\n");
        return 2;
      }
      const client = clientOrExit(parsed, deps, io);
      if (typeof client === "number") return 2;
      let allowed: boolean;
      try {
        const query = { source: parsed.rest[0]!, destination: parsed.rest[1]!, "source-type": "consul" };
        allowed = ((await client.request("GET", "/v1/connect/intentions/check", { query })).json() as { Allowed?: boolean }).Allowed === true;
      } catch (err) {
        io.err(`Error checking the connection: ${(err as Error).message}\n`);
        return 2;
      }
      io.out(allowed ? "Allowed\n" : "Denied\n");
      return allowed ? 0 : 1;
    },
  };
}
