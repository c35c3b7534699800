/**
 * What the intention commands share (Consul 1.8 command/intention/finder and api.Intention's String
 * methods): the `ns/name` display form that omits the default namespace, and the lookup of an intention's
 * ID from `SRC DST` by listing every intention once.
 */
import type { CommandIo } from "../../command.ts";
import type { AgentHttpClient } from "../support/http_client.ts";
import { clientOrExit, parseHttpCommandLine, type CliDeps } from "../support/index.ts";

/** The fields of an api.Intention the commands read. */
export interface IntentionView {
  readonly ID?: string;
  readonly Description?: string;
  readonly SourceNS?: string;
  readonly SourceName?: string;
  readonly DestinationNS?: string;
  readonly DestinationName?: string;
  readonly Action?: string;
  readonly Meta?: Readonly<Record<string, string>> | null;
  readonly CreatedAt?: string;
}

const DEFAULT_NS = "default";

/** api.Intention.partString: `ns/name`, or just `name` in the default (or no) namespace. */
export function partString(ns: string | undefined, name: string | undefined): string {
  return ns && ns !== DEFAULT_NS ? `${ns}/${name ?? ""}` : (name ?? "");
}

export const sourceString = (i: IntentionView): string => partString(i.SourceNS, i.SourceName);
export const destinationString = (i: IntentionView): string => partString(i.DestinationNS, i.DestinationName);

/** api.Intention.String: `web => db (allow)`. */
export function intentionString(i: IntentionView): string {
  return `${sourceString(i)} => ${destinationString(i)} (${i.Action ?? ""})`;
}

/** finder.StripDefaultNS: `default/web` -> `web`. */
export function stripDefaultNs(v: string): string {
  const idx = v.indexOf("/");
  return idx > 0 && v.slice(0, idx) === DEFAULT_NS ? v.slice(idx + 1) : v;
}

/** finder.Finder: downloads the intentions once and finds one by exact source and destination. */
export function createFinder(client: AgentHttpClient): { find(src: string, dst: string): Promise<IntentionView | undefined> } {
  let all: IntentionView[] | undefined;
  return {
    async find(src, dst) {
      all ??= ((await client.request("GET", "/v1/connect/intentions")).json() as IntentionView[] | null) ?? [];
      const [s, d] = [stripDefaultNs(src), stripDefaultNs(dst)];
      return all.find((i) => sourceString(i) === s && destinationString(i) === d);
    },
  };
}

/** finder.IDFromArgs: one argument is an ID; two are SRC DST looked up. Rejects with Consul's messages. */
export async function idFromArgs(client: AgentHttpClient, args: readonly string[]): Promise<string> {
  if (args.length === 1) return args[0]!;
  if (args.length !== 2) throw new Error("command requires exactly 1 or 2 arguments");
  const ixn = await createFinder(client).find(args[0]!, args[1]!);
  if (!ixn) throw new Error(`Intention with source ${JSON.stringify(args[0])} and destination ${JSON.stringify(args[1])} not found.`);
  return ixn.ID ?? "";
}

/**
 * The common start of `intention get` and `intention delete`: flags, the agent client and the
 * intention's ID (given, or looked up from SRC DST). The exit code when any of it fails (already reported).
 */
export async function intentionTarget(
  argv: readonly string[],
  io: CommandIo,
  help: string,
  deps: CliDeps,
): Promise<{ client: AgentHttpClient; id: string } | number> {
  const parsed = parseHttpCommandLine([], argv, io, help);
  if (typeof parsed === "number") return parsed;
  const client = clientOrExit(parsed, deps, io);
  if (typeof client === "number") return client;
  try {
    return { client, id: await idFromArgs(client, parsed.rest) };
  } catch (err) {
    io.err(`Error: ${(err as Error).message}\n`);
    return 1;
  }
}
