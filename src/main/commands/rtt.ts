/**
 * `causeway rtt [-wan] <node> [<node>]`: Consul's `consul rtt` (command/rtt/rtt.go in hashicorp/consul).
 * Estimates the round-trip time between two nodes from their network coordinates: LAN coordinates from
 * GET /v1/coordinate/nodes (the segment both share, as lib.CoordinateSet.Intersect picks it), or with
 * -wan the servers' WAN coordinates from GET /v1/coordinate/datacenters, names given as
 * `<node>.<datacenter>`. The second node defaults to the agent's own (GET /v1/agent/self).
 */
import { distanceMs } from "../../membership/index.ts";
import type { CoordinateEntry, DatacenterMap, NetworkCoordinate } from "../../model/index.ts";
import { intersectCoordinates as intersect } from "../../server/index.ts";
import type { Command } from "../command.ts";
import { boolFlag, clientOrExit, commandHelp, parseHttpCommandLine, processCliDeps, usageFailure, type CliDeps } from "./support/index.ts";
import { HTTP_ADDR_FLAG, TOKEN_FLAG, type AgentHttpClient } from "./support/http_client.ts";
import type { FlagSpec } from "../flags.ts";

const FLAGS: FlagSpec[] = [{ name: "wan", kind: "bool", usage: "Use WAN coordinates instead of LAN coordinates." }];
const HTTP_FLAGS: readonly FlagSpec[] = [HTTP_ADDR_FLAG, TOKEN_FLAG];

const HELP = commandHelp(
  `Usage: causeway rtt [options] node1 [node2]

  Estimates the round trip time between two nodes using Causeway's network
  coordinate model of the cluster.

  At least one node name is required. If the second node name isn't given, it
  is set to the agent's node name. Note that these are node names as known to
  Causeway as "causeway members" would show, not IP addresses.

  By default, the two nodes are assumed to be nodes in the local datacenter
  and the LAN coordinates are used. If the -wan option is given, then the WAN
  coordinates are used, and the node names must be suffixed by a period and
  the datacenter (eg. "myserver.dc1").

  It is not possible to measure between LAN coordinates and WAN coordinates
  because they are maintained by independent gossip pools, so they are
  not compatible.
`,
  FLAGS,
  HTTP_FLAGS,
);

/** serf's DistanceTo as Consul prints it: a time.Duration (whole nanoseconds) in ms with 3 decimals. */
export function formatRtt(a: NetworkCoordinate, b: NetworkCoordinate): string {
  const ns = Math.trunc(distanceMs(a, b) * 1e6);
  return `${(ns / 1e6).toFixed(3)} ms`;
}

const same = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();

type Found = { readonly coords: [NetworkCoordinate | undefined, NetworkCoordinate | undefined] } | { readonly error: string };

/** The agent's self record's Config.NodeName and Config.Datacenter. */
async function agentSelf(client: AgentHttpClient): Promise<{ NodeName: string; Datacenter: string }> {
  const self = (await client.getJson("/v1/agent/self")) as { Config?: { NodeName?: string; Datacenter?: string } } | null;
  return { NodeName: self?.Config?.NodeName ?? "", Datacenter: self?.Config?.Datacenter ?? "" };
}

async function lanCoordinates(client: AgentHttpClient, nodes: [string, string]): Promise<Found> {
  let entries: CoordinateEntry[];
  try {
    entries = ((await client.getJson("/v1/coordinate/nodes")) as CoordinateEntry[] | null) ?? [];
  } catch (err) {
    return { error: `Error getting coordinates: ${(err as Error).message}` };
  }
  return { coords: intersect(entries.filter((e) => same(e.Node, nodes[0])), entries.filter((e) => same(e.Node, nodes[1]))) };
}

async function wanCoordinates(client: AgentHttpClient, nodes: [string, string]): Promise<Found> {
  const [parts1, parts2] = nodes.map((n) => n.split("."));
  if (parts1!.length !== 2 || parts2!.length !== 2) return { error: "Node names must be specified as <node name>.<datacenter> with -wan" };
  const [node1, dc1] = parts1 as [string, string];
  const [node2, dc2] = parts2 as [string, string];
  let dcs: DatacenterMap[];
  try {
    dcs = ((await client.getJson("/v1/coordinate/datacenters")) as DatacenterMap[] | null) ?? [];
  } catch (err) {
    return { error: `Error getting coordinates: ${(err as Error).message}` };
  }
  // Only coordinates of the same area are comparable.
  let area1: string | undefined, area2: string | undefined;
  let c1: NetworkCoordinate | undefined, c2: NetworkCoordinate | undefined;
  for (const dc of dcs) {
    for (const e of dc.Coordinates ?? []) {
      if (dc.Datacenter === dc1 && same(e.Node, node1)) [area1, c1] = [dc.AreaID, e.Coord];
      if (dc.Datacenter === dc2 && same(e.Node, node2)) [area2, c2] = [dc.AreaID, e.Coord];
      if (area1 === area2 && c1 && c2) return { coords: [c1, c2] };
    }
  }
  return { coords: [undefined, undefined] };
}

export function createRttCommand(deps: CliDeps = processCliDeps): Command {
  return {
    name: "rtt",
    synopsis: "Estimates network round trip time between nodes",
    async run(argv, io) {
      const parsed = parseHttpCommandLine(FLAGS, argv, io, HELP, HTTP_FLAGS);
      if (typeof parsed === "number") return parsed;
      const nodes = [...parsed.rest];
      if (nodes.length < 1 || nodes.length > 2) return usageFailure(io, "One or two node names must be specified\n", HELP);
      const client = clientOrExit(parsed, deps, io);
      if (typeof client === "number") return client;
      const wan = boolFlag(parsed, "wan");
      if (nodes.length < 2) {
        try {
          const self = await agentSelf(client);
          nodes.push(wan ? `${self.NodeName}.${self.Datacenter}` : self.NodeName);
        } catch (err) {
          io.err(`Unable to look up agent info: ${(err as Error).message}\n`);
          return 1;
        }
      }
      const pair = nodes as [string, string];
      const found = await (wan ? wanCoordinates(client, pair) : lanCoordinates(client, pair));
      if ("error" in found) {
        io.err(`${found.error}\n`);
        return 1;
      }
      const [c1, c2] = found.coords;
      for (const [c, node] of [[c1, pair[0]], [c2, pair[1]]] as const) {
        if (!c) {
          io.err(`Could not find a coordinate for node ${JSON.stringify(node)}\n`);
          return 1;
        }
      }
      io.out(`Estimated ${pair[0]} <-> ${pair[1]} rtt: ${formatRtt(c1!, c2!)} (using ${wan ? "WAN" : "LAN"} coordinates)\n`);
      return 0;
    },
  };
}

/** `causeway rtt` against the process environment and the runtime's fetch. */
export const rttCommand: Command = createRttCommand();
