/**
 * The catalog endpoints (Consul's agent/catalog_endpoint.go and agent/consul/catalog_endpoint.go, v1.8):
 * PUT /v1/catalog/register and /deregister, GET /v1/catalog/datacenters, /nodes, /services,
 * /service/:service, /connect/:service and /node/:node. Lists are `[]`, never null; a node's or an
 * instance's null tags are `[]`; an unknown node answers 200 with a `null` body, as Consul does.
 * `?near=<node>|_agent` on /nodes, /service and /connect sorts by estimated round-trip time from that
 * node (the serving server does it; no sort when the node has no coordinate, as in Consul).
 */
import type { Context, Hono } from "hono";
import { NODE_SCHEMA, NODE_SERVICE_SCHEMA, SERVICE_NODE_SCHEMA, type Filter } from "../connect/index.ts";
import type { NodeService, ServiceNode } from "../model/index.ts";
import type { StateCommand } from "../state/index.ts";
import type { GoStruct } from "../lib/index.ts";
import { deregisterRequestOf, registerRequestOf } from "./catalog_register.ts";
import { DEREGISTER_REQUEST, REGISTER_REQUEST, type RawDeregister, type RawRegister } from "./catalog_schema.ts";
import type { HttpApiDeps } from "./deps.ts";
import { serveRead, STATE_UNAVAILABLE, stateRefusal } from "./read_route.ts";
import { requestToken } from "./request.ts";
import { errorResponse, jsonResponse, textError } from "./respond.ts";
import {
  applyFilter, applyRecordFilter, badPath, filterParam, goStructBody, nearParam, nodeMetaParam, otherMethodsNotAllowed, pathTail, tagsParam,
} from "./route_params.ts";

/** A node's service with Consul's `[]` for null tags. */
const withTags = (s: NodeService): NodeService => (s.Tags === null ? { ...s, Tags: [] } : s);
const rowWithTags = (r: ServiceNode): ServiceNode => (r.ServiceTags === null ? { ...r, ServiceTags: [] } : r);

/**
 * Decodes a catalog write body (400 "Request decode failed: ..."), converts it (400 with Consul's
 * message), and writes it to the datacenter the body names (Consul routes catalog writes by the
 * request's Datacenter, not by `?dc`). Answers `true`.
 */
async function catalogWrite<R>(
  c: Context,
  deps: HttpApiDeps,
  schema: GoStruct,
  convert: (raw: R) => StateCommand,
): Promise<Response> {
  const raw = await goStructBody<R>(c, schema);
  if (raw instanceof Response) return raw;
  let command: StateCommand;
  try {
    command = convert(raw);
  } catch (err) {
    return errorResponse(c, err);
  }
  if (!deps.state) return textError(c, 500, STATE_UNAVAILABLE);
  const datacenter = (raw as { Datacenter?: string }).Datacenter || undefined;
  try {
    const result = await deps.state.write(command, datacenter, requestToken(c));
    return result.type === "error" ? stateRefusal(c, result.error) : jsonResponse(c, true);
  } catch (err) {
    return errorResponse(c, err);
  }
}

export function mountCatalog(app: Hono, deps: HttpApiDeps): void {
  const dc = deps.agent.datacenter;

  app.get("/v1/catalog/datacenters", async (c) => {
    if (!deps.catalog) return textError(c, 500, "Catalog is not available on this agent");
    try {
      return jsonResponse(c, [...(await deps.catalog.datacenters())]);
    } catch (err) {
      return errorResponse(c, err);
    }
  });

  app.put("/v1/catalog/register", (c) =>
    catalogWrite<RawRegister>(c, deps, REGISTER_REQUEST, (raw) => ({ type: "register", req: registerRequestOf(raw, dc) })));

  app.put("/v1/catalog/deregister", (c) =>
    catalogWrite<RawDeregister>(c, deps, DEREGISTER_REQUEST, (raw) => ({ type: "deregister", req: deregisterRequestOf(raw, dc) })));

  app.get("/v1/catalog/nodes", (c) => {
    let filter: Filter | undefined;
    return serveRead(c, deps, () => {
      const f = filterParam(c, NODE_SCHEMA);
      if (f instanceof Response) return f;
      filter = f;
      const nodeMeta = nodeMetaParam(c);
      return { type: "catalog-nodes", ...(nodeMeta ? { nodeMeta } : {}), ...nearParam(c, deps.agent.nodeName) };
    }, async (nodes) => jsonResponse(c, await applyFilter(c, nodes, filter)));
  });

  app.get("/v1/catalog/services", (c) =>
    serveRead(c, deps, () => {
      const nodeMeta = nodeMetaParam(c);
      return { type: "catalog-services", ...(nodeMeta ? { nodeMeta } : {}) };
    }, (services) => jsonResponse(c, services)));

  for (const connect of [false, true]) {
    const prefix = connect ? "/v1/catalog/connect/" : "/v1/catalog/service/";
    app.get(`${prefix}*`, (c) => {
      let filter: Filter | undefined;
      return serveRead(c, deps, () => {
        const service = pathTail(c, prefix);
        if (service === undefined) return badPath(c);
        if (service === "") return textError(c, 400, "Missing service name");
        const f = filterParam(c, SERVICE_NODE_SCHEMA);
        if (f instanceof Response) return f;
        filter = f;
        const tags = tagsParam(c);
        const nodeMeta = nodeMetaParam(c);
        return {
          type: "catalog-service-nodes", service, connect, ...(tags ? { tags } : {}), ...(nodeMeta ? { nodeMeta } : {}), ...nearParam(c, deps.agent.nodeName),
        };
      }, async (rows) => jsonResponse(c, (await applyFilter(c, rows, filter)).map(rowWithTags)));
    });
    otherMethodsNotAllowed(app, `${prefix}*`);
  }

  app.get("/v1/catalog/node/*", (c) => {
    let filter: Filter | undefined;
    return serveRead(c, deps, () => {
      const node = pathTail(c, "/v1/catalog/node/");
      if (node === undefined) return badPath(c);
      if (node === "") return textError(c, 400, "Missing node name");
      const f = filterParam(c, NODE_SERVICE_SCHEMA);
      if (f instanceof Response) return f;
      filter = f;
      return { type: "catalog-node-services", node };
    }, async (ns) => {
      if (!ns) return jsonResponse(c, null);
      const services = Object.entries(await applyRecordFilter(c, ns.Services, filter)).map(([id, s]) => [id, withTags(s)] as const);
      return jsonResponse(c, { Node: ns.Node, Services: Object.fromEntries(services) });
    });
  });
  otherMethodsNotAllowed(app, "/v1/catalog/node/*");
}
