/**
 * `causeway catalog datacenters`: Consul's `consul catalog datacenters`
 * (command/catalog/list/dc/catalog_list_datacenters.go in hashicorp/consul): GET /v1/catalog/datacenters
 * (a JSON array of names, nearest first) and one name per line. Unlike Consul, a failed request is exit 1.
 */
import type { Command } from "../../command.ts";
import { commandHelp, noArgsCommand, processCliDeps, type CliDeps } from "../support/index.ts";

const HELP = commandHelp(
  `Usage: causeway catalog datacenters [options]

  Retrieves the list of all known datacenters. The datacenters are sorted in
  ascending order based on the estimated median round trip time from the servers
  in this datacenter to the servers in the other datacenters.

      $ causeway catalog datacenters
`,
  [],
);

export function createCatalogDatacentersCommand(deps: CliDeps = processCliDeps): Command {
  return {
    name: "datacenters",
    synopsis: "Lists all known datacenters",
    async run(argv, io) {
      const started = noArgsCommand([], argv, io, HELP, deps);
      if (typeof started === "number") return started;
      const { client } = started;
      let dcs: string[];
      try {
        dcs = ((await client.getJson("/v1/catalog/datacenters")) as string[] | null) ?? [];
      } catch (err) {
        io.err(`Error listing datacenters: ${(err as Error).message}\n`);
        return 1;
      }
      for (const dc of dcs) io.out(`${dc}\n`);
      return 0;
    },
  };
}
