import { Hono } from "hono";
import { mountAgent } from "./agent.ts";
import { mountCatalog } from "./catalog.ts";
import { mountMembers } from "./members.ts";
import type { HttpApiDeps } from "./deps.ts";
import { textError } from "./respond.ts";
import { mountStatus } from "./status.ts";

/**
 * Builds the Consul-compatible `/v1` HTTP API over its dependencies. Returns a Hono app; serve it with
 * any fetch-style server (`app.fetch`). Unknown paths answer 404 and a known path with the wrong
 * method answers 405, with Go's net/http wording that Consul clients expect.
 */
export function createHttpApi(deps: HttpApiDeps): Hono {
  const app = new Hono();
  mountAgent(app, deps.agent);
  mountStatus(app, deps.raft);
  mountMembers(app, deps.membership, deps.agent);
  mountCatalog(app, deps.catalog);
  app.notFound((c) => {
    const known = app.routes.some((r) => r.path === c.req.path);
    return known ? textError(c, 405, `method ${c.req.method} not allowed`) : textError(c, 404, "404 page not found");
  });
  return app;
}
