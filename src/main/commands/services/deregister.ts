/**
 * `causeway services deregister`: Consul's `consul services deregister` (command/services/deregister in
 * hashicorp/consul): PUT /v1/agent/service/deregister/<id> for the -id given, or for each service in the
 * definition files (its ID, else its name). Prints `Deregistered service: ID`; exit 1 at the first failure.
 */
import type { Command } from "../../command.ts";
import type { FlagSpec } from "../../flags.ts";
import { clientOrExit, commandHelp, goQuote, parseHttpCommandLine, processCliDeps, stringFlag, type CliDeps } from "../support/index.ts";
import { servicesFromFiles } from "./definition.ts";

const FLAGS: FlagSpec[] = [{ name: "id", kind: "string", arg: "<id>", usage: "ID to delete. This must not be set if arguments are given." }];

const HELP = commandHelp(
  `Usage: causeway services deregister [options] [FILE...]

  Deregister one or more services that were previously registered with the
  local agent.

      $ causeway services deregister web.json db.json

  The -id flag may be used to deregister a single service by ID:

      $ causeway services deregister -id=web

  Services are deregistered from the local agent catalog. This command must be
  run against the same agent where the service was registered.
`,
  FLAGS,
);

export function createServicesDeregisterCommand(deps: CliDeps = processCliDeps): Command {
  return {
    name: "deregister",
    synopsis: "Deregister services with the local agent",
    async run(argv, io) {
      const parsed = parseHttpCommandLine(FLAGS, argv, io, HELP);
      if (typeof parsed === "number") return parsed;
      const id = stringFlag(parsed, "id") ?? "";
      const files = parsed.rest;
      if (files.length === 0 && id === "") {
        io.err("Service deregistration requires at least one argument or -id.\n");
        return 1;
      }
      if (files.length > 0 && id !== "") {
        io.err("Service deregistration requires arguments or -id, not both.\n");
        return 1;
      }
      let ids = [id];
      if (files.length > 0) {
        try {
          ids = (await servicesFromFiles(files)).map((svc) => String(svc.ID || svc.Name || ""));
        } catch (err) {
          io.err(`Error: ${(err as Error).message}\n`);
          return 1;
        }
      }
      const client = clientOrExit(parsed, deps, io);
      if (typeof client === "number") return client;
      for (const one of ids) {
        if (one === "") continue;
        try {
          await client.request("PUT", `/v1/agent/service/deregister/${encodeURIComponent(one)}`);
        } catch (err) {
          io.err(`Error deregistering service ${goQuote(one)}: ${(err as Error).message}\n`);
          return 1;
        }
        io.out(`Deregistered service: ${one}\n`);
      }
      return 0;
    },
  };
}
