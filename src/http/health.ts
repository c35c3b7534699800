/**
 * The health endpoints (Consul's agent/health_endpoint.go and agent/consul/health_endpoint.go, v1.8):
 * GET /v1/health/node/:node, /checks/:service, /state/:state, /service/:service and /connect/:service.
 * Lists are `[]`, never null, and so are null tags and a null Checks list. `?near=<node>|_agent` on
 * /checks, /state, /service and /connect sorts by estimated round-trip time from that node (see catalog.ts).
 */
import type { Context, Hono } from "hono";
import { CHECK_SERVICE_NODE_SCHEMA, HEALTH_CHECK_SCHEMA, type Filter } from "../connect/index.ts";
import type { CheckServiceNode, HealthCheck, HealthStateFilter, ReadQuery } from "../model/index.ts";
import { parseGoBool } from "../lib/index.ts";
import type { HttpApiDeps } from "./deps.ts";
import { serveRead } from "./read_route.ts";
import { jsonResponse, textError } from "./respond.ts";
import { applyFilter, badPath, filterParam, nearParam, nodeMetaParam, otherMethodsNotAllowed, pathTail, tagsParam } from "./route_params.ts";
import { query } from "./request.ts";

const STATES: readonly string[] = ["any", "passing", "warning", "critical"];

/** The reads that answer a list of health checks. */
type CheckListRead = Extract<ReadQuery, { type: "health-node-checks" | "health-service-checks" | "health-state" }>;

const checkWithTags = (c: HealthCheck): HealthCheck => (c.ServiceTags === null ? { ...c, ServiceTags: [] } : c);

/** Consul's empty-list fixups for /v1/health/service: Checks, each check's and the service's tags. */
function instanceBody(n: CheckServiceNode): CheckServiceNode {
  const service = n.Service.Tags === null ? { ...n.Service, Tags: [] } : n.Service;
  return { Node: n.Node, Service: service, Checks: (n.Checks ?? []).map(checkWithTags) };
}

/**
 * Consul's getBoolQueryParam: absent is false, present without a value is true, else strconv.ParseBool;
 * a bad value answers 400 "Invalid value for ?<name>".
 */
function boolParam(c: Context, name: string): boolean | Response {
  const raw = query(c, name);
  if (raw === undefined) return false;
  if (raw === "") return true;
  return parseGoBool(raw) ?? textError(c, 400, `Invalid value for ?${name}`);
}

/**
 * A health-check list route: `name` is the path after `prefix` ("" answers 400 `missing`), `build` makes
 * the read; `?filter` applies to each HealthCheck and `keep` (if any) narrows the result further.
 */
function checksRoute(
  app: Hono,
  deps: HttpApiDeps,
  prefix: string,
  missing: string,
  build: (c: Context, name: string) => { query: CheckListRead; keep?: (h: HealthCheck) => boolean },
): void {
  app.get(`${prefix}*`, (c) => {
    let filter: Filter | undefined;
    let keep: ((h: HealthCheck) => boolean) | undefined;
    return serveRead(c, deps, () => {
      const name = pathTail(c, prefix);
      if (name === undefined) return badPath(c);
      if (name === "") return textError(c, 400, missing);
      const f = filterParam(c, HEALTH_CHECK_SCHEMA);
      if (f instanceof Response) return f;
      filter = f;
      const built = build(c, name);
      keep = built.keep;
      return built.query;
    }, async (checks) => {
      const kept = keep ? (checks as readonly HealthCheck[]).filter(keep) : (checks as readonly HealthCheck[]);
      return jsonResponse(c, (await applyFilter(c, kept, filter)).map(checkWithTags));
    });
  });
  otherMethodsNotAllowed(app, `${prefix}*`);
}

export function mountHealth(app: Hono, deps: HttpApiDeps): void {
  checksRoute(app, deps, "/v1/health/node/", "Missing node name", (_c, node) => ({ query: { type: "health-node-checks", node } }));

  checksRoute(app, deps, "/v1/health/checks/", "Missing service name", (c, service) => {
    const nodeMeta = nodeMetaParam(c);
    return { query: { type: "health-service-checks", service, ...(nodeMeta ? { nodeMeta } : {}), ...nearParam(c, deps.agent.nodeName) } };
  });

  // Consul does not validate the state: an unknown one (or one in another case) matches no check and
  // answers 200 with []. The read of "any" keeps the checks table's index and watch for it.
  checksRoute(app, deps, "/v1/health/state/", "Missing check state", (c, state) => {
    const nodeMeta = nodeMetaParam(c);
    const known = STATES.includes(state);
    return {
      query: { type: "health-state", state: (known ? state : "any") as HealthStateFilter, ...(nodeMeta ? { nodeMeta } : {}), ...nearParam(c, deps.agent.nodeName) },
      keep: known ? undefined : (h) => h.Status === state,
    };
  });

  for (const connect of [false, true]) {
    const prefix = connect ? "/v1/health/connect/" : "/v1/health/service/";
    app.get(`${prefix}*`, (c) => {
      let filter: Filter | undefined;
      return serveRead(c, deps, () => {
        const service = pathTail(c, prefix);
        if (service === undefined) return badPath(c);
        if (service === "") return textError(c, 400, "Missing service name");
        const passingOnly = boolParam(c, "passing");
        if (passingOnly instanceof Response) return passingOnly;
        const f = filterParam(c, CHECK_SERVICE_NODE_SCHEMA);
        if (f instanceof Response) return f;
        filter = f;
        const tags = tagsParam(c);
        const nodeMeta = nodeMetaParam(c);
        return {
          type: "health-service-nodes", service, passingOnly, connect, ...(tags ? { tags } : {}), ...(nodeMeta ? { nodeMeta } : {}),
          ...nearParam(c, deps.agent.nodeName),
        };
      }, async (nodes) => jsonResponse(c, (await applyFilter(c, nodes, filter)).map(instanceBody)));
    });
    otherMethodsNotAllowed(app, `${prefix}*`);
  }
}
