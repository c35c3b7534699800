/**
 * `/v1/snapshot` (Consul's agent/snapshot_endpoint.go): GET saves the state as a snapshot archive
 * (served by the leader unless ?stale), PUT restores one, replacing the whole state of the cluster.
 * The archive of a restore is limited to BODY_LIMITS.snapshot bytes (413 past it, read no further).
 */
import type { Hono } from "hono";
import type { HttpApiDeps } from "./deps.ts";
import { BODY_LIMITS, readBodyBytes } from "./body.ts";
import { parseReadOptions, setQueryMeta } from "./query_options.ts";
import { errorResponse, textError } from "./respond.ts";
import { query, requestToken } from "./request.ts";

export function mountSnapshot(app: Hono, deps: HttpApiDeps): void {
  app.get("/v1/snapshot", async (c) => {
    if (!deps.snapshots) return textError(c, 500, "Snapshots are not available on this agent");
    try {
      const { archive, meta } = await deps.snapshots.save(parseReadOptions(c, () => 0));
      setQueryMeta(c, meta);
      return c.body(archive as Uint8Array<ArrayBuffer>, 200, { "Content-Type": "application/octet-stream" });
    } catch (err) {
      return errorResponse(c, err);
    }
  });

  app.put("/v1/snapshot", async (c) => {
    if (!deps.snapshots) return textError(c, 500, "Snapshots are not available on this agent");
    let archive: Uint8Array;
    try {
      archive = await readBodyBytes(c, BODY_LIMITS.snapshot);
    } catch (err) {
      return errorResponse(c, err);
    }
    if (archive.length === 0) return textError(c, 400, "Missing snapshot: the request body is empty");
    try {
      await deps.snapshots.restore(archive, query(c, "dc") || undefined, requestToken(c));
    } catch (err) {
      // A file that is not a snapshot, or a damaged one, is the client's mistake; nothing was restored.
      if (err instanceof Error && /^(not a snapshot|snapshot is damaged|unsupported snapshot)/.test(err.message)) return textError(c, 400, err.message);
      return errorResponse(c, err);
    }
    return c.body(null, 200);
  });
}
