import type { Command } from "../command.ts";
import { parseFlags, UsageError } from "../flags.ts";
import { REVISION, VERSION } from "../version.ts";
import { runtimeDescription } from "../runtime.ts";

export const versionCommand: Command = {
  name: "version",
  synopsis: "Prints the Causeway version",
  async run(argv, io) {
    let parsed;
    try {
      parsed = parseFlags([], argv);
    } catch (err) {
      if (err instanceof UsageError) {
        io.err(`${err.message}\n${HELP}`);
        return 1;
      }
      throw err;
    }
    if (parsed.help) {
      io.out(HELP);
      return 0;
    }
    io.out(`Causeway v${VERSION}\n`);
    io.out(`Revision ${REVISION || "unknown (built from source)"}\n`);
    io.out(`Runtime ${runtimeDescription()}\n`);
    return 0;
  },
};

const HELP = `Usage: causeway version

  Prints the version of this Causeway build, its source revision and the JavaScript runtime.
`;
