/**
 * What the `causeway acl` subcommands share: the -format, -meta and -rules flags, a command shape that takes
 * flags and no arguments (whose body may throw CommandFailure), printing an object pretty or as JSON,
 * and the list command (GET a collection, print it pretty or as JSON).
 */
import type { Command, CommandIo } from "../../command.ts";
import type { FlagSpec } from "../../flags.ts";
import { commandHelp, loadDataArg, noArgsCommand, utf8, type CliDeps } from "../support/index.ts";
import type { AgentHttpClient } from "../support/http_client.ts";
import { formatPolicy, formatToken, jsonOut } from "./format.ts";

export const FORMAT: FlagSpec = { name: "format", kind: "string", arg: "<pretty|json>", usage: 'Output format: "pretty" (default) or "json".' };
export const META: FlagSpec = { name: "meta", kind: "bool", usage: "Indicates that metadata such as the content hash and raft indices should be shown for each entry." };

/** Policy create's and update's -valid-datacenter. */
export const VALID_DATACENTER: FlagSpec = { name: "valid-datacenter", kind: "strings", arg: "<dc>", usage: "Datacenter that the policy should be valid within." };

/** Policy create's and update's -rules. */
export const RULES: FlagSpec = {
  name: "rules", kind: "string", arg: "<rules>",
  usage: "The policy rules. May be prefixed with '@' to indicate that the value is a file path to load the rules from. '-' may also be given to indicate that the rules are available on stdin",
};

/** -rules' text, from the value, `@file` or `-` (stdin); "" when not given. A load failure is "Error loading rules: ...". */
export async function rulesOf(values: ReadonlyMap<string, unknown>, deps: CliDeps): Promise<string> {
  const arg = values.get("rules") as string | undefined;
  return arg ? utf8(await orFail("Error loading rules", loadDataArg(arg, deps))) : "";
}

/** Policy and role update's -no-merge. */
export const noMergeFlag = (kind: string): FlagSpec => ({
  name: "no-merge", kind: "bool",
  usage: `Do not merge the current ${kind} information with what is provided to the command. Instead overwrite all fields with the exception of the ${kind} ID which is immutable.`,
});

/** Policy and role update's usage text, ending with `example`. */
export const updateUsage = (kind: string, example: string) => `Usage: causeway acl ${kind} update [options]

  Updates a ${kind}. By default it will merge the ${kind} information with its
  current state so that you do not have to provide all parameters. This
  behavior can be disabled by passing -no-merge.

${example}`;

/** Thrown from a command body: its message (one line) goes to stderr and the command exits 1. */
export class CommandFailure extends Error {}

/** -format's value ("pretty" when not given); any other value is a CommandFailure naming it. */
export function formatOf(values: ReadonlyMap<string, unknown>): "pretty" | "json" {
  const f = (values.get("format") as string | undefined) ?? "pretty";
  if (f === "pretty" || f === "json") return f;
  throw new CommandFailure(`Invalid format: ${f}`);
}

/** `work`'s value; a rejection becomes a CommandFailure `<prefix>: <its message>`, as Consul prints errors. */
export async function orFail<T>(prefix: string, work: Promise<T>): Promise<T> {
  try {
    return await work;
  } catch (err) {
    throw new CommandFailure(`${prefix}: ${(err as Error).message}`);
  }
}

/** Prints `value` as JSON or with `pretty` (which ends its own lines). */
export function printAs<T>(io: CommandIo, format: "pretty" | "json", value: T, pretty: (v: T) => string): void {
  io.out(format === "json" ? jsonOut(value) : pretty(value));
}

/** Prints a token as Consul's token formatter does. */
export const printToken = (io: CommandIo, format: "pretty" | "json", token: unknown, showMeta: boolean) =>
  printAs(io, format, token, (t) => formatToken(t as never, showMeta));

/** Prints a policy as Consul's policy formatter does (its rules end the output). */
export const printPolicy = (io: CommandIo, format: "pretty" | "json", policy: unknown, showMeta: boolean) =>
  printAs(io, format, policy, (p) => `${formatPolicy(p as never, showMeta)}\n`);

type Body = (values: ReadonlyMap<string, unknown>, client: AgentHttpClient, io: CommandIo) => Promise<number>;

/** A command that takes flags, no arguments, and talks to the agent; a CommandFailure from `body` exits 1. */
export function aclCommand(name: string, synopsis: string, flags: FlagSpec[], usage: string, deps: CliDeps, body: Body): Command {
  const help = commandHelp(usage, flags);
  return {
    name,
    synopsis,
    async run(argv, io) {
      const ready = noArgsCommand(flags, argv, io, help, deps);
      if (typeof ready === "number") return ready;
      try {
        return await body(ready.parsed.values, ready.client, io);
      } catch (err) {
        if (!(err instanceof CommandFailure)) throw err;
        io.err(`${err.message}\n`);
        return 1;
      }
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
    const format = formatOf(values);
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
