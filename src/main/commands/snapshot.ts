/**
 * `causeway snapshot`: Consul's `consul snapshot` (command/snapshot in hashicorp/consul): `save` and
 * `restore` over GET/PUT /v1/snapshot, and `inspect` of a saved file.
 */
import type { Command } from "../command.ts";
import { createSnapshotInspectCommand } from "./snapshot/inspect.ts";
import { createSnapshotRestoreCommand } from "./snapshot/restore.ts";
import { createSnapshotSaveCommand } from "./snapshot/save.ts";
import { createCommandGroup, processCliDeps, type CliDeps } from "./support/index.ts";

const HELP = `Usage: causeway snapshot <subcommand> [options] [args]

  This command has subcommands for saving, restoring, and inspecting the state
  of the servers for disaster recovery. These are atomic, point-in-time
  snapshots which include key/value entries, the service catalog, prepared
  queries, sessions, and ACLs.

  Create a snapshot:

      $ causeway snapshot save backup.snap

  Restore a snapshot:

      $ causeway snapshot restore backup.snap

  Inspect a snapshot:

      $ causeway snapshot inspect backup.snap

  For more examples, ask for subcommand help.
`;

/** Builds `causeway snapshot` over the given environment and fetch. */
export function createSnapshotCommand(deps: CliDeps = processCliDeps): Command {
  return createCommandGroup({
    name: "snapshot",
    synopsis: "Saves, restores and inspects snapshots of server state",
    help: HELP,
    subcommands: [createSnapshotInspectCommand(), createSnapshotRestoreCommand(deps), createSnapshotSaveCommand(deps)],
  });
}

/** `causeway snapshot` against the process environment. */
export const snapshotCommand: Command = createSnapshotCommand();
