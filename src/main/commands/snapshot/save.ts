/**
 * `causeway snapshot save`: Consul's `consul snapshot save` (command/snapshot/save in hashicorp/consul):
 * GET /v1/snapshot (`?stale=`, `?dc=`), whose body is the snapshot file as the server wrote it and whose
 * `X-Consul-Index` header is the index it covers. The download must be non-empty and, when the response
 * has a Content-Length (and no Content-Encoding), exactly that long. It is written to `FILE.unverified`
 * (mode 0600, fsynced), read back and verified (checksums, sizes, version; see format.ts), then renamed to
 * FILE, so FILE is never left half-written. Prints `Saved and verified snapshot to index N`.
 */
import { open, readFile, rename, rm } from "node:fs/promises";
import type { Command } from "../../command.ts";
import { clientOrExit, commandHelp, parseHttpCommandLine, processCliDeps, staleQuery, type CliDeps } from "../support/index.ts";
import { readSnapshotMeta } from "./format.ts";

const HELP = commandHelp(
  `Usage: causeway snapshot save [options] FILE

  Retrieves an atomic, point-in-time snapshot of the state of the servers,
  which includes key/value entries, the service catalog, prepared queries,
  sessions, and ACLs, and saves it to FILE.

  The download is checked for completeness (Content-Length, non-empty), written
  to FILE.unverified, verified (the archive's meta.json and SHA256SUMS, or the
  JSON header line; see "causeway snapshot inspect -h") and only then renamed
  to FILE.

      $ causeway snapshot save backup.snap

  To create a potentially stale snapshot from any available server (useful if no
  leader is available):

      $ causeway snapshot save -stale backup.snap
`,
  [],
);

/** Writes `bytes` to `path` (created or truncated, mode 0600) and fsyncs before closing. */
async function writeDurably(path: string, bytes: Uint8Array): Promise<void> {
  const handle = await open(path, "w", 0o600);
  try {
    await handle.writeFile(bytes);
    await handle.sync();
  } finally {
    await handle.close();
  }
}

export function createSnapshotSaveCommand(deps: CliDeps = processCliDeps): Command {
  return {
    name: "save",
    synopsis: "Saves snapshot of server state",
    async run(argv, io) {
      const parsed = parseHttpCommandLine([], argv, io, HELP);
      if (typeof parsed === "number") return parsed;
      if (parsed.rest.length !== 1) {
        io.err(parsed.rest.length === 0 ? "Missing FILE argument\n" : `Too many arguments (expected 1, got ${parsed.rest.length})\n`);
        return 1;
      }
      const file = parsed.rest[0]!;
      const client = clientOrExit(parsed, deps, io);
      if (typeof client === "number") return client;
      let body: Uint8Array, index: number;
      try {
        const res = await client.request("GET", "/v1/snapshot", { query: staleQuery(parsed) });
        body = res.body;
        const length = res.headers.get("content-length");
        if (length !== null && !res.headers.has("content-encoding") && Number(length) !== body.length) {
          throw new Error(`incomplete download: got ${body.length} of ${length} bytes`);
        }
        if (body.length === 0) throw new Error("the agent returned an empty snapshot");
        index = Number.parseInt(res.headers.get("x-consul-index") ?? "0", 10) || 0;
      } catch (err) {
        io.err(`Error saving snapshot: ${(err as Error).message}\n`);
        return 1;
      }
      const unverified = `${file}.unverified`;
      try {
        await writeDurably(unverified, body);
      } catch (err) {
        io.err(`Error writing unverified snapshot file: ${(err as Error).message}\n`);
        await rm(unverified, { force: true }).catch(() => {});
        return 1;
      }
      try {
        const written = new Uint8Array(await readFile(unverified));
        if (written.length !== body.length) throw new Error(`wrote ${written.length} of ${body.length} bytes`);
        readSnapshotMeta(written);
      } catch (err) {
        io.err(`Error verifying snapshot file: ${(err as Error).message}\n`);
        await rm(unverified, { force: true }).catch(() => {});
        return 1;
      }
      try {
        await rename(unverified, file);
      } catch (err) {
        io.err(`Error renaming "${unverified}" to "${file}": ${(err as Error).message}\n`);
        await rm(unverified, { force: true }).catch(() => {});
        return 1;
      }
      io.out(`Saved and verified snapshot to index ${index}\n`);
      return 0;
    },
  };
}
