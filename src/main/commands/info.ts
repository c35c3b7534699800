/**
 * `causeway info`: Consul's `consul info` (command/info/info.go in hashicorp/consul): GET /v1/agent/self
 * and its `Stats`, each section (agent, build, raft, serf_lan...) as `<section>:` followed by its
 * `\t<key> = <value>` lines, sections and keys sorted.
 */
import type { Command, CommandIo } from "../command.ts";
import type { FlagSpec } from "../flags.ts";
import { clientOrExit, commandHelp, parseHttpCommandLine, processCliDeps, type CliDeps } from "./support/index.ts";
import { HTTP_ADDR_FLAG, TOKEN_FLAG } from "./support/http_client.ts";

const HTTP_FLAGS: readonly FlagSpec[] = [HTTP_ADDR_FLAG, TOKEN_FLAG];

const HELP = commandHelp(
  `Usage: causeway info [options]

  Provides debugging information for operators.
`,
  [],
  HTTP_FLAGS,
);

type Stats = Readonly<Record<string, Readonly<Record<string, unknown>> | null>>;

/** The stats as Consul's info prints them: sorted sections, sorted `\tkey = value` lines (byte order, as Go's sort.Strings). */
export function formatStats(stats: Stats): string {
  const byBytes = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
  let out = "";
  for (const section of Object.keys(stats).sort(byBytes)) {
    out += `${section}:\n`;
    const values = stats[section] ?? {};
    for (const key of Object.keys(values).sort(byBytes)) out += `\t${key} = ${String(values[key])}\n`;
  }
  return out;
}

export function createInfoCommand(deps: CliDeps = processCliDeps): Command {
  return {
    name: "info",
    synopsis: "Provides debugging information for operators",
    async run(argv, io: CommandIo) {
      const parsed = parseHttpCommandLine([], argv, io, HELP, HTTP_FLAGS);
      if (typeof parsed === "number") return parsed;
      const client = clientOrExit(parsed, deps, io);
      if (typeof client === "number") return client;
      let self: { Stats?: Stats } | null;
      try {
        self = (await client.getJson("/v1/agent/self")) as { Stats?: Stats } | null;
      } catch (err) {
        io.err(`Error querying agent: ${(err as Error).message}\n`);
        return 1;
      }
      io.out(formatStats(self?.Stats ?? {}));
      return 0;
    },
  };
}

/** `causeway info` against the process environment. */
export const infoCommand: Command = createInfoCommand();
