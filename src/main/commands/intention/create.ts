/**
 * `causeway intention create`: Consul 1.8's `consul intention create` (command/intention/create):
 * POST /v1/connect/intentions for `SRC DST` (or each `-file`), printing `Created: web => db (allow)`.
 * With -replace an existing intention for the same pair is replaced (PUT .../:id) silently.
 */
import { readFile } from "node:fs/promises";
import type { Command } from "../../command.ts";
import { UsageError, type FlagSpec } from "../../flags.ts";
import { boolFlag, clientOrExit, commandHelp, mapFlag, parseHttpCommandLine, processCliDeps, usageFailure, utf8, type CliDeps } from "../support/index.ts";
import { createFinder, destinationString, intentionString, sourceString, type IntentionView } from "./finder.ts";

const FLAGS: FlagSpec[] = [
  { name: "allow", kind: "bool", usage: "Create an intention that allows when matched." },
  { name: "deny", kind: "bool", usage: "Create an intention that denies when matched." },
  { name: "file", kind: "bool", usage: "Read intention data from one or more files." },
  { name: "replace", kind: "bool", usage: "Replace matching intentions." },
  { name: "meta", kind: "strings", arg: "<key=value>", usage: "Metadata to set on the intention, formatted as key=value. This flag may be specified multiple times to set multiple meta fields." },
];

const HELP = commandHelp(
  `Usage: causeway intention create [options] SRC DST
Usage: causeway intention create [options] -file FILE...

  Create one or more intentions. The data can be specified as a single
  source and destination pair or via a set of files when the "-file" flag
  is specified.

      $ causeway intention create web db

  To consume data from a set of files:

      $ causeway intention create -file one.json two.json

  When specifying the "-file" flag, "-" may be used once to read from stdin:

      $ echo "{ ... }" | causeway intention create -file -

  An "allow" intention is created by default (allowlist). To create a
  "deny" intention, the "-deny" flag should be specified.

  If a conflicting intention is found, creation will fail. To replace any
  conflicting intentions, specify the "-replace" flag. This will replace any
  conflicting intentions with the intention specified in this command.
  Metadata and any other fields of the previous intention will not be
  preserved.
`,
  FLAGS,
);

/** create.ParseIntentionTarget: `ns/name` or `name` (namespace left to the agent). */
function parseTarget(input: string): { ns: string; name: string } {
  const idx = input.indexOf("/");
  if (idx === -1) return { ns: "", name: input };
  const name = input.slice(idx + 1);
  if (name.includes("/")) throw new Error("target can contain at most one '/'");
  return { ns: input.slice(0, idx), name };
}

type Body = IntentionView & Record<string, unknown>;

async function fromFiles(paths: readonly string[], deps: CliDeps): Promise<Body[]> {
  const out: Body[] = [];
  for (const path of paths) {
    const text = path === "-" ? utf8(await deps.readStdin()) : await readFile(path, "utf8");
    out.push(JSON.parse(text) as Body);
  }
  return out;
}

function fromArgs(args: readonly string[], action: string, meta: Record<string, string> | null): Body[] {
  if (args.length !== 2) throw new Error("Must specify two arguments: source and destination");
  let src, dst;
  try {
    src = parseTarget(args[0]!);
  } catch (err) {
    throw new Error(`Invalid intention source: ${(err as Error).message}`);
  }
  try {
    dst = parseTarget(args[1]!);
  } catch (err) {
    throw new Error(`Invalid intention destination: ${(err as Error).message}`);
  }
  return [{ SourceNS: src.ns, SourceName: src.name, DestinationNS: dst.ns, DestinationName: dst.name, SourceType: "consul", Action: action, Meta: meta }];
}

export function createIntentionCreateCommand(deps: CliDeps = processCliDeps): Command {
  return {
    name: "create",
    synopsis: "Create intentions for service connections.",
    async run(argv, io) {
      const parsed = parseHttpCommandLine(FLAGS, argv, io, HELP);
      if (typeof parsed === "number") return parsed;
      let meta: Record<string, string>;
      try {
        meta = mapFlag(parsed, "meta");
      } catch (err) {
        if (err instanceof UsageError) return usageFailure(io, err.message, HELP);
        throw err;
      }
      const deny = boolFlag(parsed, "deny");
      if (boolFlag(parsed, "allow") && deny) {
        io.err("Only one of -allow or -deny may be specified.\n");
        return 1;
      }
      let ixns: Body[];
      try {
        ixns = boolFlag(parsed, "file")
          ? await fromFiles(parsed.rest, deps)
          : fromArgs(parsed.rest, deny ? "deny" : "allow", parsed.values.has("meta") ? meta : null);
      } catch (err) {
        io.err(`Error: ${(err as Error).message}\n`);
        return 1;
      }
      const client = clientOrExit(parsed, deps, io);
      if (typeof client === "number") return client;
      const finder = createFinder(client);
      for (const ixn of ixns) {
        const pair = `source ${JSON.stringify(sourceString(ixn))} and destination ${JSON.stringify(destinationString(ixn))}`;
        if (boolFlag(parsed, "replace")) {
          let old: IntentionView | undefined;
          try {
            old = await finder.find(sourceString(ixn), destinationString(ixn));
          } catch (err) {
            io.err(`Error looking up intention for replacement with ${pair}: ${(err as Error).message}\n`);
            return 1;
          }
          if (old) {
            try {
              await client.request("PUT", `/v1/connect/intentions/${encodeURIComponent(old.ID ?? "")}`, { body: JSON.stringify({ ...ixn, ID: old.ID }) });
            } catch (err) {
              io.err(`Error replacing intention with ${pair}: ${(err as Error).message}\n`);
              return 1;
            }
            continue;
          }
        }
        try {
          await client.request("POST", "/v1/connect/intentions", { body: JSON.stringify(ixn) });
        } catch (err) {
          io.err(`Error creating intention ${JSON.stringify(intentionString(ixn))}: ${(err as Error).message}\n`);
          return 1;
        }
        io.out(`Created: ${intentionString(ixn)}\n`);
      }
      return 0;
    },
  };
}
