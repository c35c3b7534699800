/**
 * The federation-state endpoints, read-only as in Consul 1.8 (agent/federation_state_endpoint.go; the
 * states are written by the servers' leader routines only):
 * - GET /v1/internal/federation-states: every state, by datacenter (a JSON array, [] when none);
 * - GET /v1/internal/federation-states/mesh-gateways: `{"<dc>": [CheckServiceNode...]}` for each
 *   datacenter whose state has gateways ({} when none);
 * - GET /v1/internal/federation-state/:dc: the whole FederationStateResponse, `{"State": {...}, "Index",
 *   "LastContact", "KnownLeader", "ConsistencyLevel"}`; 404 with an empty body when that datacenter has no
 *   state; 400 "Missing datacenter name" for an empty one.
 * Each is a blocking read on the federation-states table (X-Consul-Index); `?dc=` picks the datacenter
 * whose servers answer (for the single state, Consul's TargetDatacenter), as on every read.
 */
import type { Context, Hono } from "hono";
import type { HttpApiDeps, StateAccess } from "./deps.ts";
import type { QueryMeta, ReadOptions } from "./query_options.ts";
import { serveRead, type Reply } from "./read_route.ts";
import { jsonResponse, textError } from "./respond.ts";
import { badPath, otherMethodsNotAllowed, pathTail } from "./route_params.ts";

const STATE_PREFIX = "/v1/internal/federation-state/";

/**
 * Consul's QueryMeta as a response body embeds it: Index, LastContact in nanoseconds (Go's
 * time.Duration), KnownLeader and ConsistencyLevel ("leader" unless ?stale or ?consistent).
 */
export function queryMetaBody(meta: QueryMeta, options: ReadOptions): Record<string, unknown> {
  return {
    Index: meta.index,
    LastContact: Math.round(meta.lastContactMs * 1e6),
    KnownLeader: meta.knownLeader,
    ConsistencyLevel: options.consistency === "default" ? "leader" : options.consistency,
  };
}

/** `state` with every read's QueryMeta also handed to `sink` (for a body that embeds it). */
function recordingMeta(state: StateAccess, sink: (meta: QueryMeta) => void): StateAccess {
  return {
    write: (command, datacenter) => state.write(command, datacenter),
    async read(query, options) {
      const r = await state.read(query, options);
      sink(r.meta);
      return r;
    },
  };
}

/** GET /v1/internal/federation-state/:dc. */
function getOne(c: Context, deps: HttpApiDeps): Reply {
  const datacenter = pathTail(c, STATE_PREFIX);
  if (datacenter === undefined) return badPath(c);
  if (datacenter === "") return textError(c, 400, "Missing datacenter name");
  let meta: QueryMeta | undefined;
  const state = deps.state && recordingMeta(deps.state, (m) => (meta = m));
  return serveRead(c, { ...deps, state }, () => ({ type: "federation-state-get", datacenter }), (value, options) =>
    // serveRead answers only after the read, so `meta` is set. Consul writes a bare 404 (no body) when the
  // datacenter has no state.
    value === null ? c.body(null, 404) : jsonResponse(c, { State: value, ...queryMetaBody(meta!, options) }));
}

export function mountFederationState(app: Hono, deps: HttpApiDeps): void {
  app.get("/v1/internal/federation-states", (c) =>
    serveRead(c, deps, () => ({ type: "federation-state-list" }), (value) => jsonResponse(c, value)));
  app.get("/v1/internal/federation-states/mesh-gateways", (c) =>
    serveRead(c, deps, () => ({ type: "federation-state-mesh-gateways" }), (value) => jsonResponse(c, value.DatacenterNodes)));
  // Hono's `prefix/*` also matches the prefix without its slash, where Consul's name is "" as well.
  app.get(`${STATE_PREFIX}*`, (c) => getOne(c, deps));
  otherMethodsNotAllowed(app, `${STATE_PREFIX}*`);
}
