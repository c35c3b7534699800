/**
 * What the `causeway acl` subcommands share: the -format, -meta and -rules flags, the command shapes (flags
 * and no arguments, or flags and arguments with the agent client made on demand; a body may throw
 * CommandFailure or UsageError), printing an object pretty or as JSON, and the list command (GET a
 * collection, print it pretty or as JSON).
 */
import type { Command, CommandIo } from "../../command.ts";
import { UsageError, type FlagSpec } from "../../flags.ts";
import { commandHelp, loadDataArg, noArgsCommand, parseHttpCommandLine, usageFailure, utf8, type CliDeps } from "../support/index.ts";
import { agentClientFromFlags, type AgentHttpClient } from "../support/http_client.ts";
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

/** Policy, role and binding rule update's -no-merge. */
export const noMergeFlag = (kind: string): FlagSpec => ({
  name: "no-merge", kind: "bool",
  usage: `Do not merge the current ${kind} information with what is provided to the command. Instead overwrite all fields with the exception of the ${kind} ID which is immutable.`,
});

/** An update command's usage text (policy, role, auth method, binding rule), `args` after its name, ending with `example`. */
export const updateUsage = (kind: string, example: string, args = "[options]") => `Usage: causeway acl ${kind.replace(" ", "-")} update ${args}

  Updates ${/^[aeiou]/.test(kind) ? "an" : "a"} ${kind}. By default it will merge the ${kind}
  information with its current state so that you do not have to provide all
  parameters. This behavior can be disabled by passing -no-merge.

${example}`;

/** Thrown from a command body: its message (one line) goes to stderr and the command exits 1. */
export class CommandFailure extends Error {}

/** -format's value ("pretty" when not given); any other value is a CommandFailure naming it. */
export function formatOf(values: ReadonlyMap<string, unknown>): "pretty" | "json" {
  const f = (values.get("format") as string | undefined) ?? "pretty";
  if (f === "pretty" || f === "json") return f;
  // Consul's formatters' wording (NewFormatter); Consul checks only after the request, this before it.
  throw new CommandFailure(`Unknown format: ${f}`);
}

/** `work`'s value; a rejection becomes a CommandFailure `<prefix>: <its message>`, as Consul prints errors. */
export async function orFail<T>(prefix: string, work: Promise<T>): Promise<T> {
  try {
    return await work;
  } catch (err) {
    throw new CommandFailure(`${prefix}: ${(err as Error).message}`);
  }
}

/** Prints `value` as JSON (of `json(value)` when given: the Go struct Consul marshals) or with `pretty` (which ends its own lines). */
export function printAs<T>(io: CommandIo, format: "pretty" | "json", value: T, pretty: (v: T) => string, json: (v: T) => unknown = (v) => v): void {
  io.out(format === "json" ? jsonOut(json(value)) : pretty(value));
}

/** Prints a token as Consul's token formatter does. */
export const printToken = (io: CommandIo, format: "pretty" | "json", token: unknown, showMeta: boolean) =>
  printAs(io, format, token, (t) => formatToken(t as never, showMeta));

/** Prints a policy as Consul's policy formatter does (its rules end the output). */
export const printPolicy = (io: CommandIo, format: "pretty" | "json", policy: unknown, showMeta: boolean) =>
  printAs(io, format, policy, (p) => `${formatPolicy(p as never, showMeta)}\n`);

type Values = ReadonlyMap<string, unknown>;
type Body = (values: Values, client: AgentHttpClient, io: CommandIo) => Promise<number>;
/** `client()` is the agent client of the HTTP flags; `client(token)` the same with that ACL token instead. */
type ArgsBody = (values: Values, args: readonly string[], client: (token?: string) => AgentHttpClient, io: CommandIo) => Promise<number>;

/**
 * `work`'s exit code; a CommandFailure prints its message, a UsageError its message then `help` (as
 * Consul's `c.UI.Error(msg); c.UI.Error(c.Help())`), both exit 1. Anything else propagates.
 */
async function reporting(io: CommandIo, help: string, work: () => Promise<number>): Promise<number> {
  try {
    return await work();
  } catch (err) {
    if (err instanceof UsageError) return usageFailure(io, err.message, help);
    if (!(err instanceof CommandFailure)) throw err;
    io.err(`${err.message}\n`);
    return 1;
  }
}

type Start = (argv: readonly string[], io: CommandIo, help: string, report: (work: () => Promise<number>) => Promise<number>) => Promise<number>;

/** A command with Consul's help for `usage` and `flags`; `start` parses and runs, `report` runs a body as `reporting` does. */
function reportingCommand(name: string, synopsis: string, flags: FlagSpec[], usage: string, start: Start): Command {
  const help = commandHelp(usage, flags);
  return { name, synopsis, run: (argv, io) => start(argv, io, help, (work) => reporting(io, help, work)) };
}

/** A command that takes flags, no arguments, and talks to the agent; a CommandFailure or UsageError from `body` exits 1. */
export function aclCommand(name: string, synopsis: string, flags: FlagSpec[], usage: string, deps: CliDeps, body: Body): Command {
  return reportingCommand(name, synopsis, flags, usage, async (argv, io, help, report) => {
    const ready = noArgsCommand(flags, argv, io, help, deps);
    return typeof ready === "number" ? ready : await report(() => body(ready.parsed.values, ready.client, io));
  });
}

/**
 * A command that takes flags and arguments (`body` checks their count with Consul's messages) and makes
 * the agent client only when `body` calls `client()`, as Consul's commands that may not need an agent
 * do; a bad agent address is then the CommandFailure "Error connecting to the agent: ...".
 */
export function aclArgsCommand(name: string, synopsis: string, flags: FlagSpec[], usage: string, deps: CliDeps, body: ArgsBody): Command {
  return reportingCommand(name, synopsis, flags, usage, async (argv, io, help, report) => {
    const parsed = parseHttpCommandLine(flags, argv, io, help);
    if (typeof parsed === "number") return parsed;
    const client = (token?: string) => {
      try {
        return agentClientFromFlags(token === undefined ? parsed.values : new Map([...parsed.values, ["token", token]]), deps);
      } catch (err) {
        throw new CommandFailure(`Error connecting to the agent: ${(err as Error).message}`);
      }
    };
    return await report(() => body(parsed.values, parsed.rest, client, io));
  });
}

/** What a list command may add to GET-and-print. */
export interface ListOptions {
  /** Each entry as -format=json prints it (the Go api struct Consul decodes it into); the entry as served when absent. */
  readonly shape?: (entry: unknown) => unknown;
  /** A string flag whose value, when not empty, is sent as the query parameter `param` (binding-rule list's -method). */
  readonly filter?: { readonly flag: FlagSpec; readonly param: string };
  /** The -meta flag's spec (META when absent). */
  readonly meta?: FlagSpec;
}

/** `list`: GET `path`, print the array with `pretty` (given the shaped entries) or as JSON; failures start with `failure`. */
export function aclListCommand(
  synopsis: string,
  usage: string,
  path: string,
  pretty: (list: never[], showMeta: boolean) => string,
  failure: string,
  deps: CliDeps,
  options: ListOptions = {},
): Command {
  const { shape = (entry: unknown) => entry, filter, meta = META } = options;
  return aclCommand("list", synopsis, [...(filter ? [filter.flag] : []), meta, FORMAT], usage, deps, async (values, client, io) => {
    const format = formatOf(values);
    const given = filter && (values.get(filter.flag.name) as string | undefined);
    try {
      const served = (await client.request("GET", path, given ? { query: { [filter.param]: given } } : {})).json() as unknown[];
      const list = served.map(shape) as never[];
      io.out(format === "json" ? jsonOut(list) : pretty(list, values.get("meta") === true));
      return 0;
    } catch (err) {
      io.err(`${failure}: ${(err as Error).message}\n`);
      return 1;
    }
  });
}
