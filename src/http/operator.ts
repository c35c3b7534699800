/**
 * Raft operator endpoints (Consul's agent/operator_endpoint.go): GET /v1/operator/raft/configuration,
 * DELETE /v1/operator/raft/peer?id=|address= and (Consul 1.15+) POST /v1/operator/raft/transfer-leader?id=.
 */
import type { Context, Hono } from "hono";
import type { HttpApiDeps } from "./deps.ts";
import { hasParam } from "./read_route.ts";
import { errorResponse, jsonResponse, textError } from "./respond.ts";
import { query, requestToken } from "./request.ts";

const UNAVAILABLE = "Raft operations are not available on this agent";

export function mountOperator(app: Hono, deps: HttpApiDeps): void {
  app.get("/v1/operator/raft/configuration", async (c) => {
    if (!deps.operator) return textError(c, 500, UNAVAILABLE);
    try {
      return jsonResponse(c, await deps.operator.raftConfiguration({ datacenter: query(c, "dc") || undefined, stale: hasParam(c, "stale"), ...tokenOf(c) }));
    } catch (err) {
      return errorResponse(c, err);
    }
  });

  app.delete("/v1/operator/raft/peer", async (c) => {
    if (!deps.operator) return textError(c, 500, UNAVAILABLE);
    const id = query(c, "id") || undefined;
    const address = query(c, "address") || undefined;
    if ((id === undefined) === (address === undefined)) {
      return textError(c, 400, "Must specify either ?id with the server's ID or ?address with IP:port of peer to remove");
    }
    try {
      await deps.operator.removePeer({ datacenter: query(c, "dc") || undefined, id, address, ...tokenOf(c) });
    } catch (err) {
      // An address that is not a peer's is the request's fault (Consul: 500); so is an ID (the RPC's NotFound).
      const unknownAddress = err instanceof Error && err.name === "Error" && err.message.endsWith("was not found in the Raft configuration");
      return unknownAddress ? textError(c, 400, err.message) : errorResponse(c, err);
    }
    return c.body(null, 200);
  });

  // Consul 1.15's OperatorRaftTransferLeader: an empty or missing ?id lets the leader pick the most
  // caught-up voter; answers {"Success":true} once leadership moved. Consul answers every refusal 500;
  // an unknown id, this leader's own id or a non-voter are the request's fault here (400, from the RPC's
  // NotFound / InvalidArgument).
  app.post("/v1/operator/raft/transfer-leader", async (c) => {
    if (!deps.operator?.transferLeader) return textError(c, 500, UNAVAILABLE);
    try {
      await deps.operator.transferLeader({ datacenter: query(c, "dc") || undefined, id: query(c, "id") || undefined, ...tokenOf(c) });
    } catch (err) {
      return errorResponse(c, err);
    }
    return jsonResponse(c, { Success: true });
  });
}

/** The request's token as an OperatorApi option (absent without one: the agent's default applies). */
function tokenOf(c: Context): { token?: string } {
  const token = requestToken(c);
  return token !== undefined ? { token } : {};
}
