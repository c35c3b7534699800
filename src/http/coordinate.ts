/**
 * The coordinate endpoints (Consul 1.8 agent/coordinate_endpoint.go and agent/consul/coordinate_endpoint.go):
 * GET /v1/coordinate/datacenters (servers' WAN coordinates by datacenter, from the serving agent's WAN
 * pool), /v1/coordinate/nodes and /v1/coordinate/node/:node (LAN coordinates from the catalog, blocking,
 * `?segment=` filters) and PUT /v1/coordinate/update (queued on a server, applied in its next batch).
 * With coordinates disabled every route answers 401 "Coordinate support disabled".
 */
import type { Context, Hono } from "hono";
import { slice, struct } from "../lib/index.ts";
import { coordinateProblem, ERR_INVALID_COORDINATE, type CoordinateEntry, type NetworkCoordinate } from "../model/index.ts";
import type { HttpApiDeps } from "./deps.ts";
import { serveRead, serveWrite } from "./read_route.ts";
import { errorResponse, jsonResponse, textError } from "./respond.ts";
import { badPath, goStructBody, otherMethodsNotAllowed, pathTail } from "./route_params.ts";
import { query } from "./request.ts";

/** structs.CoordinateUpdateRequest as the HTTP body carries it. */
const UPDATE_REQUEST = struct("structs.CoordinateUpdateRequest", {
  Datacenter: "string",
  Node: "string",
  Segment: "string",
  Coord: struct("coordinate.Coordinate", { Vec: slice("float64"), Error: "float64", Adjustment: "float64", Height: "float64" }),
}).struct;

interface RawUpdate {
  readonly Datacenter?: string;
  readonly Node?: string;
  readonly Segment?: string;
  readonly Coord?: { readonly Vec?: readonly number[] | null; readonly Error?: number; readonly Adjustment?: number; readonly Height?: number };
}

/** Consul's filterCoordinates: with `?segment` (even empty), only that segment's entries. */
function bySegment(c: Context, entries: readonly CoordinateEntry[]): CoordinateEntry[] {
  const segment = query(c, "segment");
  return segment === undefined ? [...entries] : entries.filter((e) => e.Segment === segment);
}

/**
 * The body's update as a coordinate entry, or Consul's refusal: a missing Coord (a nil pointer in Go) or a
 * non-finite component is "invalid coordinate", another dimensionality "incompatible coordinate".
 */
export function coordinateUpdateOf(raw: RawUpdate): CoordinateEntry | string {
  if (raw.Coord === undefined) return ERR_INVALID_COORDINATE;
  const coord: NetworkCoordinate = {
    Vec: raw.Coord.Vec ?? [], Error: raw.Coord.Error ?? 0, Adjustment: raw.Coord.Adjustment ?? 0, Height: raw.Coord.Height ?? 0,
  };
  return coordinateProblem(coord) ?? { Node: raw.Node ?? "", Segment: raw.Segment ?? "", Coord: coord };
}

export function mountCoordinate(app: Hono, deps: HttpApiDeps): void {
  const disabled = (c: Context) => (deps.coordinates && !deps.coordinates.enabled ? textError(c, 401, "Coordinate support disabled") : undefined);

  app.get("/v1/coordinate/datacenters", async (c) => {
    const off = disabled(c);
    if (off) return off;
    const api = deps.coordinates;
    if (!api?.datacenters) return textError(c, 500, "WAN coordinates are not available on this agent");
    try {
      return jsonResponse(c, [...(await api.datacenters())]);
    } catch (err) {
      return errorResponse(c, err);
    }
  });

  app.get("/v1/coordinate/nodes", (c) => disabled(c) ?? serveRead(c, deps, () => ({ type: "coordinate-nodes" }), (entries) => jsonResponse(c, bySegment(c, entries))));
  otherMethodsNotAllowed(app, "/v1/coordinate/nodes");

  app.get("/v1/coordinate/node/*", (c) =>
    disabled(c) ??
      serveRead(c, deps, () => {
        const node = pathTail(c, "/v1/coordinate/node/");
        if (node === undefined) return badPath(c);
        return { type: "coordinate-node", node };
      }, (entries) => {
        const out = bySegment(c, entries);
        return out.length === 0 ? c.body(null, 404) : jsonResponse(c, out);
      }));
  otherMethodsNotAllowed(app, "/v1/coordinate/node/*");

  app.put("/v1/coordinate/update", async (c) => {
    const off = disabled(c);
    if (off) return off;
    const raw = await goStructBody<RawUpdate>(c, UPDATE_REQUEST);
    if (raw instanceof Response) return raw;
    const update = coordinateUpdateOf(raw);
    if (typeof update === "string") return textError(c, 400, update);
    return serveWrite(c, deps, { type: "coordinate-batch", updates: [update] }, () => c.body(null, 200));
  });
  otherMethodsNotAllowed(app, "/v1/coordinate/update");
}
