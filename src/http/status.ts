import type { Hono } from "hono";
import type { RaftStatus } from "./deps.ts";
import { jsonResponse } from "./respond.ts";

/** /v1/status/leader (a JSON string, "" without a leader) and /v1/status/peers (a JSON array). */
export function mountStatus(app: Hono, raft: RaftStatus): void {
  app.get("/v1/status/leader", (c) => jsonResponse(c, raft.leader()));
  app.get("/v1/status/peers", (c) => jsonResponse(c, [...raft.peers()]));
}
