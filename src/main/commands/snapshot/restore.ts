/**
 * `causeway snapshot restore`: Consul's `consul snapshot restore` (command/snapshot/restore in
 * hashicorp/consul): PUT /v1/snapshot with the file's bytes as the body (`?dc=`). Prints
 * `Restored snapshot`; the server's refusal is `Error restoring snapshot: ...`, exit 1.
 */
import { readFile } from "node:fs/promises";
import type { Command } from "../../command.ts";
import { clientOrExit, commandHelp, parseHttpCommandLine, processCliDeps, type CliDeps } from "../support/index.ts";

const HELP = commandHelp(
  `Usage: causeway snapshot restore [options] FILE

  Restores an atomic, point-in-time snapshot of the state of the servers, which
  includes key/value entries, the service catalog, prepared queries, sessions,
  and ACLs. The file is sent to the servers as it is.

  Restores involve a potentially dangerous low-level Raft operation that is not
  designed to handle server failures during a restore. This command is primarily
  intended to be used when recovering from a disaster, restoring into a fresh
  cluster of servers.

      $ causeway snapshot restore backup.snap
`,
  [],
);

export function createSnapshotRestoreCommand(deps: CliDeps = processCliDeps): Command {
  return {
    name: "restore",
    synopsis: "Restores snapshot of server state",
    async run(argv, io) {
      const parsed = parseHttpCommandLine([], argv, io, HELP);
      if (typeof parsed === "number") return parsed;
      if (parsed.rest.length !== 1) {
        io.err(parsed.rest.length === 0 ? "Missing FILE argument\n" : `Too many arguments (expected 1, got ${parsed.rest.length})\n`);
        return 1;
      }
      const client = clientOrExit(parsed, deps, io);
      if (typeof client === "number") return client;
      let bytes: Uint8Array;
      try {
        bytes = new Uint8Array(await readFile(parsed.rest[0]!));
      } catch (err) {
        io.err(`Error opening snapshot file: ${(err as Error).message}\n`);
        return 1;
      }
      try {
        await client.request("PUT", "/v1/snapshot", { body: bytes });
      } catch (err) {
        io.err(`Error restoring snapshot: ${(err as Error).message}\n`);
        return 1;
      }
      io.out("Restored snapshot\n");
      return 0;
    },
  };
}
