/**
 * Consul's internal endpoints for its web UI (agent/ui_endpoint.go, v1.8) that Causeway serves:
 * GET /v1/internal/ui/services, a summary per service, and /v1/internal/ui/nodes, every node with its
 * services and checks (both blocking, `?dc=`, ACL-filtered by the servers).
 */
import type { Hono } from "hono";
import type { HttpApiDeps } from "./deps.ts";
import { serveRead } from "./read_route.ts";
import { jsonResponse } from "./respond.ts";

export function mountInternalUi(app: Hono, deps: HttpApiDeps): void {
  app.get("/v1/internal/ui/services", (c) => serveRead(c, deps, () => ({ type: "ui-services" }), (summaries) => jsonResponse(c, summaries)));
  app.get("/v1/internal/ui/nodes", (c) => serveRead(c, deps, () => ({ type: "ui-nodes" }), (nodes) => jsonResponse(c, nodes)));
}
