/**
 * Consul-style command-line flags: single or double dash, `-name=value` or `-name value`,
 * booleans as `-name` or `-name=true|false`, repeatable string flags. Errors name the flag.
 */
import { goUint64Of } from "../lib/index.ts";

/** `uint64`: digits only, up to 2^64 - 1, kept exact (a bigint past 2^53), as Go's flag.Uint64 reads it. */
export type FlagKind = "string" | "int" | "uint64" | "bool" | "strings";

export interface FlagSpec {
  readonly name: string;
  readonly kind: FlagKind;
  readonly usage: string;
  /** Placeholder shown in help, e.g. "<port>". */
  readonly arg?: string;
}

export type FlagValues = Map<string, string | number | bigint | boolean | string[]>;

export class UsageError extends Error {}

export interface ParsedFlags {
  /** Only the flags that were given on the command line. */
  readonly values: FlagValues;
  /** Arguments after the flags (or after `--`). */
  readonly rest: readonly string[];
  readonly help: boolean;
}

/** Parses argv against specs. Throws UsageError naming the flag on an unknown flag or a bad value. */
export function parseFlags(specs: readonly FlagSpec[], argv: readonly string[]): ParsedFlags {
  const byName = new Map(specs.map((s) => [s.name, s]));
  const values: FlagValues = new Map();
  let help = false;
  let i = 0;
  for (; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === "--") {
      i++;
      break;
    }
    if (!arg.startsWith("-") || arg === "-") break;
    const body = arg.replace(/^--?/, "");
    const eq = body.indexOf("=");
    const name = eq < 0 ? body : body.slice(0, eq);
    let raw: string | undefined = eq < 0 ? undefined : body.slice(eq + 1);
    if (name === "h" || name === "help") {
      help = true;
      continue;
    }
    const spec = byName.get(name);
    if (!spec) throw new UsageError(`flag provided but not defined: -${name}`);
    if (spec.kind === "bool") {
      if (raw === undefined) values.set(name, true);
      else if (raw === "true" || raw === "false") values.set(name, raw === "true");
      else throw new UsageError(`invalid boolean value "${raw}" for flag -${name}`);
      continue;
    }
    if (raw === undefined) {
      if (i + 1 >= argv.length) throw new UsageError(`flag needs an argument: -${name}`);
      raw = argv[++i]!;
    }
    if (spec.kind === "uint64") {
      const n = goUint64Of(raw);
      if (n === undefined) throw new UsageError(`invalid value "${raw}" for flag -${name}: parse error`);
      values.set(name, n);
    } else if (spec.kind === "int") {
      if (!/^-?\d+$/.test(raw)) throw new UsageError(`invalid value "${raw}" for flag -${name}: not an integer`);
      values.set(name, Number.parseInt(raw, 10));
    } else if (spec.kind === "strings") {
      const prev = values.get(name);
      values.set(name, [...(Array.isArray(prev) ? prev : []), raw]);
    } else {
      values.set(name, raw);
    }
  }
  return { values, rest: argv.slice(i), help };
}

/** Renders the option list of a command's help text. */
export function formatFlags(specs: readonly FlagSpec[]): string {
  return specs
    .map((s) => {
      const head = `  -${s.name}${s.kind === "bool" ? "" : `=${s.arg ?? "<value>"}`}`;
      return `${head}\n      ${s.usage}${s.kind === "strings" ? " May be given more than once." : ""}`;
    })
    .join("\n\n");
}

/**
 * The common start of a command: parses flags, answers -h/--help with `help` (exit 0), and turns a
 * usage error into its message plus `help` on stderr (exit 1). Returns the parsed flags to go on with,
 * or the exit code to return at once. `maxArgs` bounds the positional arguments (default: none allowed).
 */
export function parseCommandLine(
  specs: readonly FlagSpec[],
  argv: readonly string[],
  io: { out(text: string): void; err(text: string): void },
  help: string,
  maxArgs = 0,
): ParsedFlags | number {
  let parsed: ParsedFlags;
  try {
    parsed = parseFlags(specs, argv);
    if (!parsed.help && parsed.rest.length > maxArgs) {
      throw new UsageError(maxArgs === 0 ? `this command takes no arguments (got ${parsed.rest.length})` : `too many arguments (got ${parsed.rest.length}, at most ${maxArgs})`);
    }
  } catch (err) {
    if (err instanceof UsageError) {
      io.err(`${err.message}\n${help}`);
      return 1;
    }
    throw err;
  }
  if (parsed.help) {
    io.out(help);
    return 0;
  }
  return parsed;
}
