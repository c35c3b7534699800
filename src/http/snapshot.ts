/**
 * `/v1/snapshot` (Consul's agent/snapshot_endpoint.go): GET saves the state as a snapshot archive
 * (served by the leader unless ?stale), PUT restores one, replacing the whole state of the cluster.
 */
import type { Hono } from "hono";
import type { HttpApiDeps } from "./deps.ts";
import { messageOf } from "./read_route.ts";
import { BadRequestError, parseReadOptions, setQueryMeta } from "./query_options.ts";
import { textError } from "./respond.ts";
import { query } from "./request.ts";

export function mountSnapshot(app: Hono, deps: HttpApiDeps): void {
  app.get("/v1/snapshot", async (c) => {
    if (!deps.snapshots) return textError(c, 500, "Snapshots are not available on this agent");
    let options;
    try {
      options = parseReadOptions(c, () => 0);
    } catch (err) {
      if (err instanceof BadRequestError) return textError(c, 400, err.message);
      throw err;
    }
    try {
      const { archive, meta } = await deps.snapshots.save(options);
      setQueryMeta(c, meta);
      return c.body(archive as Uint8Array<ArrayBuffer>, 200, { "Content-Type": "application/octet-stream" });
    } catch (err) {
      return textError(c, 500, messageOf(err));
    }
  });

  app.put("/v1/snapshot", async (c) => {
    if (!deps.snapshots) return textError(c, 500, "Snapshots are not available on this agent");
    const archive = new Uint8Array(await c.req.arrayBuffer());
    if (archive.length === 0) return textError(c, 400, "Missing snapshot: the request body is empty");
    try {
      await deps.snapshots.restore(archive, query(c, "dc") || undefined);
    } catch (err) {
      const message = messageOf(err);
      // A file that is not a snapshot, or a damaged one, is the client's mistake; nothing was restored.
      return textError(c, /^(not a snapshot|snapshot is damaged|unsupported snapshot)/.test(message) ? 400 : 500, message);
    }
    return c.body(null, 200);
  });
}
