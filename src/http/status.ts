import type { Hono } from "hono";
import type { RaftStatus } from "./deps.ts";
import { datacenterNameError } from "./datacenter.ts";
import { query } from "./request.ts";
import { errorResponse, jsonResponse, textError } from "./respond.ts";

/**
 * /v1/status/leader (a JSON string, "" without a leader) and /v1/status/peers (a JSON array); with
 * `?dc=` those of that datacenter, asked of its servers (Consul forwards Status.Leader and
 * Status.Peers the same way). A name that cannot be a datacenter is a 400; an unknown one is the RPC
 * layer's "No path to datacenter" (400 here, as on every read).
 */
export function mountStatus(app: Hono, raft: RaftStatus): void {
  app.get("/v1/status/leader", async (c) => {
    try {
      const dc = query(c, "dc") || undefined;
      const bad = dc === undefined ? undefined : datacenterNameError(dc);
      if (bad) return textError(c, 400, bad);
      return jsonResponse(c, await (dc ? raft.leader(dc) : raft.leader()));
    } catch (err) {
      return errorResponse(c, err);
    }
  });
  app.get("/v1/status/peers", async (c) => {
    try {
      const dc = query(c, "dc") || undefined;
      const bad = dc === undefined ? undefined : datacenterNameError(dc);
      if (bad) return textError(c, 400, bad);
      return jsonResponse(c, [...(await (dc ? raft.peers(dc) : raft.peers()))]);
    } catch (err) {
      return errorResponse(c, err);
    }
  });
}
