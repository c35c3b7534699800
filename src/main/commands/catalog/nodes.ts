/**
 * `causeway catalog nodes`: Consul's `consul catalog nodes`
 * (command/catalog/list/nodes/catalog_list_nodes.go in hashicorp/consul): GET /v1/catalog/nodes, or
 * GET /v1/catalog/service/<name> with -service, with `?near=`, `?node-meta=k:v` (repeated), `?filter=`,
 * `?stale=` and `?dc=`. Prints the columnized table `Node ID Address DC` (the ID cut at its first "-"),
 * or with -detailed `Node ID Address DC TaggedAddresses Meta`. No match is a note on stderr, exit 0.
 */
import type { Command } from "../../command.ts";
import type { FlagSpec } from "../../flags.ts";
import { boolFlag, clientOrExit, columnizeRows, commandHelp, nodeMetaQuery, nodeMetaWithoutArgs, parseHttpCommandLine, processCliDeps, staleQuery, stringFlag, type CliDeps } from "../support/index.ts";

/** The fields of a catalog node used here (GET /v1/catalog/nodes entries; `NodeMeta` on service entries). */
interface NodeEntry {
  readonly ID?: string;
  readonly Node: string;
  readonly Address?: string;
  readonly Datacenter?: string;
  readonly TaggedAddresses?: Readonly<Record<string, string>> | null;
  readonly Meta?: Readonly<Record<string, string>> | null;
  readonly NodeMeta?: Readonly<Record<string, string>> | null;
}

const FLAGS: FlagSpec[] = [
  { name: "detailed", kind: "bool", usage: "Output detailed information about the nodes including their addresses and metadata." },
  { name: "filter", kind: "string", arg: "<expression>", usage: "Filter to use with the request." },
  { name: "near", kind: "string", arg: "<node>", usage: 'Node name to sort the node list in ascending order based on estimated round-trip time from that node. Passing "_agent" will use this agent\'s node for sorting.' },
  { name: "node-meta", kind: "strings", arg: "<key=value>", usage: "Metadata to filter nodes with the given key=value pairs." },
  { name: "service", kind: "string", arg: "<id or name>", usage: "Service id or name to filter nodes. Only nodes which are providing the given service will be returned." },
];

const HELP = commandHelp(
  `Usage: causeway catalog nodes [options]

  Retrieves the list of nodes registered in a given datacenter. By default, the
  datacenter of the local agent is queried.

      $ causeway catalog nodes
      $ causeway catalog nodes -detailed
      $ causeway catalog nodes -service=web
      $ causeway catalog nodes -node-meta="foo=bar"
      $ causeway catalog nodes -near=node-web
`,
  FLAGS,
);

/** Consul's `mapToKV`: `k=v` pairs sorted by key, joined by ", ". */
function mapToKv(m: Readonly<Record<string, string>> | null | undefined): string {
  return Object.keys(m ?? {})
    .sort()
    .map((k) => `${k}=${m![k]}`)
    .join(", ");
}

/** The table Consul prints for `nodes`. */
export function nodesTable(nodes: readonly NodeEntry[], detailed: boolean): string {
  const rows: string[][] = [detailed ? ["Node", "ID", "Address", "DC", "TaggedAddresses", "Meta"] : ["Node", "ID", "Address", "DC"]];
  for (const n of nodes) {
    const id = n.ID ?? "";
    if (detailed) rows.push([n.Node, id, n.Address ?? "", n.Datacenter ?? "", mapToKv(n.TaggedAddresses), mapToKv(n.Meta ?? n.NodeMeta)]);
    else rows.push([n.Node, id.indexOf("-") > 0 ? id.slice(0, id.indexOf("-")) : id, n.Address ?? "", n.Datacenter ?? ""]);
  }
  return columnizeRows(rows);
}

export function createCatalogNodesCommand(deps: CliDeps = processCliDeps): Command {
  return {
    name: "nodes",
    synopsis: "Lists all nodes in the given datacenter",
    async run(argv, io) {
      const parsed = parseHttpCommandLine(FLAGS, argv, io, HELP);
      if (typeof parsed === "number") return parsed;
      const meta = nodeMetaWithoutArgs(parsed, io, HELP);
      if (typeof meta === "number") return meta;
      const client = clientOrExit(parsed, deps, io);
      if (typeof client === "number") return client;
      const query: Record<string, string | string[]> = staleQuery(parsed);
      const near = stringFlag(parsed, "near"), filter = stringFlag(parsed, "filter"), service = stringFlag(parsed, "service");
      if (near) query.near = near;
      if (filter) query.filter = filter;
      if (Object.keys(meta).length > 0) query["node-meta"] = nodeMetaQuery(meta);
      let nodes: NodeEntry[];
      try {
        const path = service ? `/v1/catalog/service/${encodeURIComponent(service)}` : "/v1/catalog/nodes";
        nodes = ((await client.request("GET", path, { query })).json() as NodeEntry[] | null) ?? [];
      } catch (err) {
        io.err(`${service ? "Error listing nodes for service" : "Error listing nodes"}: ${(err as Error).message}\n`);
        return 1;
      }
      if (nodes.length === 0) {
        io.err("No nodes match the given query - try expanding your search.\n");
        return 0;
      }
      io.out(`${nodesTable(nodes, boolFlag(parsed, "detailed"))}\n`);
      return 0;
    },
  };
}
