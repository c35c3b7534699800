import type { Command } from "../command.ts";
import { parseCommandLine } from "../flags.ts";
import { REVISION, VERSION } from "../version.ts";
import { runtimeDescription } from "../runtime.ts";

export const versionCommand: Command = {
  name: "version",
  synopsis: "Prints the Causeway version",
  async run(argv, io) {
    const parsed = parseCommandLine([], argv, io, HELP);
    if (typeof parsed === "number") return parsed;
    io.out(`Causeway v${VERSION}\n`);
    io.out(`Revision ${REVISION || "unknown (built from source)"}\n`);
    io.out(`Runtime ${runtimeDescription()}\n`);
    return 0;
  },
};

const HELP = `Usage: causeway version

  Prints the version of this Causeway build, its source revision and the JavaScript runtime.
`;
