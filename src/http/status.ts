import type { Hono } from "hono";
import type { RaftStatus } from "./deps.ts";
import { errorResponse, jsonResponse } from "./respond.ts";

/** /v1/status/leader (a JSON string, "" without a leader) and /v1/status/peers (a JSON array). */
export function mountStatus(app: Hono, raft: RaftStatus): void {
  app.get("/v1/status/leader", async (c) => {
    try {
      return jsonResponse(c, await raft.leader());
    } catch (err) {
      return errorResponse(c, err);
    }
  });
  app.get("/v1/status/peers", async (c) => {
    try {
      return jsonResponse(c, [...(await raft.peers())]);
    } catch (err) {
      return errorResponse(c, err);
    }
  });
}
