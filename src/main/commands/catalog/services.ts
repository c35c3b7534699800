/**
 * `causeway catalog services`: Consul's `consul catalog services`
 * (command/catalog/list/services/catalog_list_services.go in hashicorp/consul): GET
 * /v1/catalog/services (`{"name": ["tag", ...]}`), or GET /v1/catalog/node/<node> with -node (its
 * `Services` map, tags merged per service name), with `?node-meta=k:v`, `?stale=` and `?dc=`. Prints the
 * names sorted, or with -tags a tabwriter block `name  tag,tag`. No match is a note on stderr, exit 0.
 */
import type { Command } from "../../command.ts";
import type { FlagSpec } from "../../flags.ts";
import { boolFlag, clientOrExit, commandHelp, nodeMetaQuery, nodeMetaWithoutArgs, parseHttpCommandLine, processCliDeps, staleQuery, stringFlag, tabwrite, type CliDeps } from "../support/index.ts";

const FLAGS: FlagSpec[] = [
  { name: "node", kind: "string", arg: "<id or name>", usage: "Node id or name for which to list services." },
  { name: "node-meta", kind: "strings", arg: "<key=value>", usage: "Metadata to filter nodes with the given key=value pairs. If specified, only services running on nodes matching the given metadata will be returned." },
  { name: "tags", kind: "bool", usage: "Display each service's tags as a comma-separated list beside each service entry." },
];

const HELP = commandHelp(
  `Usage: causeway catalog services [options]

  Retrieves the list of services registered in a given datacenter. By default,
  the datacenter of the local agent is queried.

      $ causeway catalog services
      $ causeway catalog services -tags
      $ causeway catalog services -node=web
      $ causeway catalog services -node-meta="foo=bar"
`,
  FLAGS,
);

/** The part of GET /v1/catalog/node/<node> used here. */
interface CatalogNode {
  readonly Services?: Readonly<Record<string, { readonly Service: string; readonly Tags?: readonly string[] | null }>> | null;
}

const byteOrder = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** What Consul prints for a service map: sorted names, or with tags a tabwriter block trimmed of outer space. */
export function servicesListing(services: Readonly<Record<string, readonly string[] | null>>, withTags: boolean): string {
  const names = Object.keys(services).sort(byteOrder);
  if (!withTags) return names.map((n) => `${n}\n`).join("");
  const block = tabwrite(names.map((n) => `${n}\t${[...(services[n] ?? [])].sort(byteOrder).join(",")}\n`).join(""));
  return `${block.trim()}\n`;
}

export function createCatalogServicesCommand(deps: CliDeps = processCliDeps): Command {
  return {
    name: "services",
    synopsis: "Lists all registered services in a datacenter",
    async run(argv, io) {
      const parsed = parseHttpCommandLine(FLAGS, argv, io, HELP);
      if (typeof parsed === "number") return parsed;
      const meta = nodeMetaWithoutArgs(parsed, io, HELP);
      if (typeof meta === "number") return meta;
      const client = clientOrExit(parsed, deps, io);
      if (typeof client === "number") return client;
      const query: Record<string, string | string[]> = staleQuery(parsed);
      if (Object.keys(meta).length > 0) query["node-meta"] = nodeMetaQuery(meta);
      const node = stringFlag(parsed, "node");
      let services: Record<string, string[]> = {};
      try {
        if (node) {
          const res = await client.request("GET", `/v1/catalog/node/${encodeURIComponent(node)}`, { query, accept: [404] });
          const found = res.status === 404 ? null : (res.json() as CatalogNode | null);
          for (const s of Object.values(found?.Services ?? {})) services[s.Service] = [...(services[s.Service] ?? []), ...(s.Tags ?? [])];
        } else {
          services = ((await client.request("GET", "/v1/catalog/services", { query })).json() as Record<string, string[]> | null) ?? {};
        }
      } catch (err) {
        io.err(`${node ? "Error listing services for node" : "Error listing services"}: ${(err as Error).message}\n`);
        return 1;
      }
      if (Object.keys(services).length === 0) {
        io.err("No services match the given query - try expanding your search.\n");
        return 0;
      }
      io.out(servicesListing(services, boolFlag(parsed, "tags")));
      return 0;
    },
  };
}
