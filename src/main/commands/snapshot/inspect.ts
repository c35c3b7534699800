/**
 * `causeway snapshot inspect`: Consul's `consul snapshot inspect` (command/snapshot/inspect in
 * hashicorp/consul): reads a snapshot file (no agent involved), verifies it and prints its ID, Size,
 * Index, Term and Version as a tabwriter block followed by a blank line.
 */
import { readFile } from "node:fs/promises";
import type { Command } from "../../command.ts";
import { parseCommandLine } from "../../flags.ts";
import { commandHelp, tabwrite } from "../support/index.ts";
import { readSnapshotMeta, type SnapshotMeta } from "./format.ts";

const HELP = commandHelp(
  `Usage: causeway snapshot inspect [options] FILE

  Displays information about a snapshot file on disk: its ID, Size (bytes of
  state), Index and Term (of the last Raft entry it covers) and Version.

      $ causeway snapshot inspect backup.snap

  The file is the gzipped tar that /v1/snapshot serves: meta.json (the fields
  above), state.bin and SHA256SUMS; every checksum is verified.
`,
  [],
  [],
);

/** The block Consul prints. */
export function formatSnapshotMeta(meta: SnapshotMeta): string {
  return `${tabwrite(`ID\t${meta.ID}\nSize\t${meta.Size}\nIndex\t${meta.Index}\nTerm\t${meta.Term}\nVersion\t${meta.Version}\n`)}\n`;
}

export function createSnapshotInspectCommand(): Command {
  return {
    name: "inspect",
    synopsis: "Displays information about a snapshot file",
    async run(argv, io) {
      const parsed = parseCommandLine([], argv, io, HELP, Number.POSITIVE_INFINITY);
      if (typeof parsed === "number") return parsed;
      if (parsed.rest.length !== 1) {
        io.err(parsed.rest.length === 0 ? "Missing FILE argument\n" : `Too many arguments (expected 1, got ${parsed.rest.length})\n`);
        return 1;
      }
      let bytes: Uint8Array;
      try {
        bytes = new Uint8Array(await readFile(parsed.rest[0]!));
      } catch (err) {
        io.err(`Error opening snapshot file: ${(err as Error).message}\n`);
        return 1;
      }
      let meta: SnapshotMeta;
      try {
        meta = readSnapshotMeta(bytes);
      } catch (err) {
        io.err(`Error verifying snapshot: ${(err as Error).message}\n`);
        return 1;
      }
      io.out(formatSnapshotMeta(meta));
      return 0;
    },
  };
}
