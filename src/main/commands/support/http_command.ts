/**
 * What the HTTP-speaking data-plane commands (kv, catalog, services, snapshot, operator) share: their
 * dependencies, Consul's help layout (`HTTP API Options` / `Command Options`), flag values Consul parses
 * itself (`key=value` maps, unsigned integers) and its `DATA` argument forms (`@file`, `-` for stdin).
 */
import { readFile } from "node:fs/promises";
import process from "node:process";
import type { CommandIo } from "../../command.ts";
import { concatBytes, type Uint64 } from "../../../lib/index.ts";
import { formatFlags, parseCommandLine, UsageError, type FlagSpec, type ParsedFlags } from "../../flags.ts";
import { agentClientFromFlags, HTTP_API_FLAGS, processHttpDeps, type AgentHttpClient, type HttpCommandDeps } from "./http_client.ts";

/** The environment, fetch, and standard input of a command; tests pass their own. */
export interface CliDeps extends HttpCommandDeps {
  /** Reads standard input to its end (for a `-` DATA argument). */
  readonly readStdin: () => Promise<Uint8Array>;
}

/** Reads the process's standard input to its end (works on Bun, Deno and Node). */
async function readProcessStdin(): Promise<Uint8Array> {
  const chunks: Uint8Array[] = [];
  for await (const chunk of process.stdin) chunks.push(typeof chunk === "string" ? new TextEncoder().encode(chunk) : new Uint8Array(chunk));
  return concatBytes(chunks);
}

/** The process environment, the runtime's fetch and the process's stdin. */
export const processCliDeps: CliDeps = { ...processHttpDeps, readStdin: readProcessStdin };

/**
 * A command's help as Consul's `flags.Usage` lays it out: the usage text, then the HTTP API options,
 * then the command's own options (when it has any).
 */
export function commandHelp(usage: string, commandFlags: readonly FlagSpec[], httpFlags: readonly FlagSpec[] = HTTP_API_FLAGS): string {
  let help = `${usage.trimEnd()}\n`;
  if (httpFlags.length > 0) help += `\nHTTP API Options\n\n${formatFlags(httpFlags)}\n`;
  if (commandFlags.length > 0) help += `\nCommand Options\n\n${formatFlags(commandFlags)}\n`;
  return help;
}

/** Prints a usage error with the help on stderr; returns exit code 1. */
export function usageFailure(io: CommandIo, message: string, help: string): number {
  io.err(`${message}\n${help}`);
  return 1;
}

/** A string flag's value, if given. */
export function stringFlag(parsed: ParsedFlags, name: string): string | undefined {
  const v = parsed.values.get(name);
  return typeof v === "string" ? v : undefined;
}

/** A boolean flag's value (false when not given). */
export function boolFlag(parsed: ParsedFlags, name: string): boolean {
  return parsed.values.get(name) === true;
}

/**
 * An unsigned integer flag (Go's `Uint64Var`; declare it with kind "uint64"): 0 when not given, exact
 * over the whole uint64 range. A flag declared "int" still works, refusing negative or inexact values.
 */
export function uintFlag(parsed: ParsedFlags, name: string): Uint64 {
  const v = parsed.values.get(name);
  if (typeof v === "bigint") return v;
  if (typeof v !== "number") return 0;
  if (v < 0 || !Number.isSafeInteger(v)) throw new UsageError(`invalid value "${v}" for flag -${name}: parse error`);
  return v;
}

/**
 * A repeatable `key=value` flag (Consul's `flags.FlagMapValue`): later keys win. Throws UsageError naming
 * the flag on a value without `=`.
 */
export function mapFlag(parsed: ParsedFlags, name: string): Record<string, string> {
  const v = parsed.values.get(name);
  const out: Record<string, string> = {};
  for (const item of Array.isArray(v) ? v : []) {
    const eq = item.indexOf("=");
    if (eq < 0) throw new UsageError(`invalid value "${item}" for flag -${name}: Missing "=" value in argument: ${item}`);
    out[item.slice(0, eq)] = item.slice(eq + 1);
  }
  return out;
}

/** Consul's `node-meta` query values (`key:value`), sorted by key so requests are deterministic. */
export function nodeMetaQuery(meta: Readonly<Record<string, string>>): string[] {
  return Object.keys(meta)
    .sort()
    .map((k) => `${k}:${meta[k]}`);
}

/**
 * A client from the parsed HTTP API flags; on a bad address prints `Error connecting to the agent: ...`
 * and returns exit code 1 instead.
 */
export function clientOrExit(parsed: ParsedFlags, deps: HttpCommandDeps, io: CommandIo): AgentHttpClient | number {
  try {
    return agentClientFromFlags(parsed.values, deps);
  } catch (err) {
    io.err(`Error connecting to the agent: ${(err as Error).message}\n`);
    return 1;
  }
}

/** `?stale=` when `-stale` was given (Go's `QueryOptions.AllowStale`), else nothing. */
export function staleQuery(parsed: ParsedFlags): Record<string, string> {
  return boolFlag(parsed, "stale") ? { stale: "" } : {};
}

/**
 * Consul's DATA argument (command/kv/put and imp): `@path` is the file's bytes, a lone `-` is standard
 * input, anything else (including `-foo`) is the literal text. Errors read `Failed to read file: ...` /
 * `Failed to read stdin: ...`.
 */
export async function loadDataArg(arg: string, deps: CliDeps): Promise<Uint8Array> {
  if (arg.startsWith("@")) {
    try {
      return new Uint8Array(await readFile(arg.slice(1)));
    } catch (err) {
      throw new Error(`Failed to read file: ${(err as Error).message}`);
    }
  }
  if (arg === "-") {
    try {
      return await deps.readStdin();
    } catch (err) {
      throw new Error(`Failed to read stdin: ${(err as Error).message}`);
    }
  }
  return new TextEncoder().encode(arg);
}

/** Decodes UTF-8 for printing (invalid sequences become U+FFFD; use -base64 for binary values). */
export function utf8(bytes: Uint8Array): string {
  return new TextDecoder().decode(bytes);
}

/**
 * `parseCommandLine` over the command's flags plus the HTTP API flags, any number of positional
 * arguments (commands check their own counts with Consul's messages).
 */
export function parseHttpCommandLine(
  flags: readonly FlagSpec[],
  argv: readonly string[],
  io: CommandIo,
  help: string,
  httpFlags: readonly FlagSpec[] = HTTP_API_FLAGS,
): ParsedFlags | number {
  return parseCommandLine([...httpFlags, ...flags], argv, io, help, Number.POSITIVE_INFINITY);
}

/**
 * The `-node-meta key=value` flags of a command that takes no arguments (catalog nodes, catalog
 * services): the map, or the exit code after printing the usage error or the extra arguments.
 */
export function nodeMetaWithoutArgs(parsed: ParsedFlags, io: CommandIo, help: string): Record<string, string> | number {
  let meta: Record<string, string>;
  try {
    meta = mapFlag(parsed, "node-meta");
  } catch (err) {
    if (err instanceof UsageError) return usageFailure(io, err.message, help);
    throw err;
  }
  if (parsed.rest.length > 0) {
    io.err(`Too many arguments (expected 0, got ${parsed.rest.length})\n`);
    return 1;
  }
  return meta;
}

/**
 * The start of a command that takes flags but no arguments (catalog datacenters, operator raft
 * list-peers, connect ca get-config): the parsed flags and the agent client, or the exit code after
 * printing the usage error, the extra arguments or the client error.
 */
export function noArgsCommand(
  flags: readonly FlagSpec[],
  argv: readonly string[],
  io: CommandIo,
  help: string,
  deps: HttpCommandDeps,
): { parsed: ParsedFlags; client: AgentHttpClient } | number {
  const parsed = parseHttpCommandLine(flags, argv, io, help);
  if (typeof parsed === "number") return parsed;
  if (parsed.rest.length > 0) {
    io.err(`Too many arguments (expected 0, got ${parsed.rest.length})\n`);
    return 1;
  }
  const client = clientOrExit(parsed, deps, io);
  if (typeof client === "number") return client;
  return { parsed, client };
}
