/**
 * What the `causeway acl` subcommands share: the -format and -meta flags, a command shape that takes
 * flags and no arguments, and the list command (GET a collection, print it pretty or as JSON).
 */
import type { Command, CommandIo } from "../../command.ts";
import type { FlagSpec } from "../../flags.ts";
import { commandHelp, noArgsCommand, type CliDeps } from "../support/index.ts";
import type { AgentHttpClient } from "../support/http_client.ts";
import { jsonOut } from "./format.ts";

export const FORMAT: FlagSpec = { name: "format", kind: "string", arg: "<pretty|json>", usage: 'Output format: "pretty" (default) or "json".' };
export const META: FlagSpec = { name: "meta", kind: "bool", usage: "Indicates that token metadata such as the raft indices should be shown for each entry." };

/** -format's value, or undefined after printing the usage error. */
export function formatOf(values: ReadonlyMap<string, unknown>, io: CommandIo): "pretty" | "json" | undefined {
  const f = (values.get("format") as string | undefined) ?? "pretty";
  if (f === "pretty" || f === "json") return f;
  io.err(`Invalid format: ${f}\n`);
  return undefined;
}

type Body = (values: ReadonlyMap<string, unknown>, client: AgentHttpClient, io: CommandIo) => Promise<number>;

/** A command that takes flags, no arguments, and talks to the agent. */
export function aclCommand(name: string, synopsis: string, flags: FlagSpec[], usage: string, deps: CliDeps, body: Body): Command {
  const help = commandHelp(usage, flags);
  return {
    name,
    synopsis,
    async run(argv, io) {
      const ready = noArgsCommand(flags, argv, io, help, deps);
      if (typeof ready === "number") return ready;
      return body(ready.parsed.values, ready.client, io);
    },
  };
}

/** `list`: GET `path`, print the array with `pretty` or as JSON; failures start with `failure`. */
export function aclListCommand(
  synopsis: string,
  usage: string,
  path: string,
  pretty: (list: never[], showMeta: boolean) => string,
  failure: string,
  deps: CliDeps,
): Command {
  return aclCommand("list", synopsis, [META, FORMAT], usage, deps, async (values, client, io) => {
    const format = formatOf(values, io);
    if (!format) return 1;
    try {
      const list = (await client.request("GET", path)).json() as never[];
      io.out(format === "json" ? jsonOut(list) : pretty(list, values.get("meta") === true));
      return 0;
    } catch (err) {
      io.err(`${failure}: ${(err as Error).message}\n`);
      return 1;
    }
  });
}
