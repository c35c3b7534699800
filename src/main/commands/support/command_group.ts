/**
 * A command that only holds subcommands (`causeway kv`, `causeway operator raft`), as mitchellh/cli runs
 * Consul's parent commands: no subcommand prints the help on stderr with exit 1, `-h`/`--help` prints it
 * on stdout with exit 0, an unknown subcommand is named on stderr before the help, exit 1.
 */
import type { Command } from "../../command.ts";

export interface CommandGroupSpec {
  readonly name: string;
  readonly synopsis: string;
  /** The help text before the generated "Subcommands:" list; ends with a newline. */
  readonly help: string;
  readonly subcommands: readonly Command[];
}

/** The help of a group: its text, then its subcommands sorted by name with their synopses (as mitchellh/cli). */
export function groupHelp(spec: CommandGroupSpec): string {
  const subs = [...spec.subcommands].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const width = Math.max(...subs.map((c) => c.name.length));
  return `${spec.help}\nSubcommands:\n${subs.map((c) => `    ${c.name.padEnd(width)}    ${c.synopsis}`).join("\n")}\n`;
}

/** Builds the group command; each run dispatches on the first argument. */
export function createCommandGroup(spec: CommandGroupSpec): Command {
  const help = groupHelp(spec);
  return {
    name: spec.name,
    synopsis: spec.synopsis,
    async run(argv, io) {
      const [sub, ...rest] = argv;
      if (sub === undefined) {
        io.err(help);
        return 1;
      }
      if (sub === "-h" || sub === "-help" || sub === "--help") {
        io.out(help);
        return 0;
      }
      const command = spec.subcommands.find((c) => c.name === sub);
      if (!command) {
        io.err(`${sub.startsWith("-") ? "flag provided but not defined" : "unknown subcommand"}: ${sub}\n\n${help}`);
        return 1;
      }
      return command.run(rest, io);
    },
  };
}
