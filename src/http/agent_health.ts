/**
 * Local service health (Consul 1.8 agent/agent_endpoint.go AgentHealthServiceByID / AgentHealthServiceByName;
 * https://developer.hashicorp.com/consul/api-docs/agent/service#get-local-service-health): the aggregated
 * status of a local service's checks as an HTTP status code, for load balancers that probe the agent.
 * Mounted by mountAgentServices.
 */
import type { Context, Hono } from "hono";
import { ownEntry } from "../lib/index.ts";
import { plain, withLocalAgent } from "./agent_local.ts";
import type { HttpApiDeps, LocalAgentApi, LocalAgentCheckView, LocalAgentServiceView } from "./deps.ts";
import { jsonResponse } from "./respond.ts";
import { badPath, otherMethodsNotAllowed, pathTail } from "./route_params.ts";
import { query } from "./request.ts";

/** Consul's structs.NodeMaint and structs.ServiceMaintPrefix: maintenance checks count as "maintenance". */
const NODE_MAINT = "_node_maintenance";
const SERVICE_MAINT_PREFIX = "_service_maintenance:";

/**
 * api.HealthCheckDefinition's zero value as its MarshalJSON writes it (api/health.go: the three durations
 * as strings first, then the other fields); Consul 1.8 copies only the check's identity, status and
 * output into these answers, never its definition.
 */
const ZERO_DEFINITION = {
  Interval: "0s", Timeout: "0s", DeregisterCriticalServiceAfter: "0s",
  HTTP: "", Header: null, Method: "", Body: "", TLSSkipVerify: false, TCP: "",
} as const;

/**
 * api.HealthChecks.AggregatedStatus: any maintenance check wins, then critical, warning, passing (also
 * for no checks); an unknown status makes the aggregate "".
 */
export function aggregatedStatus(checks: readonly Pick<LocalAgentCheckView, "CheckID" | "Status">[]): string {
  let maintenance = false, critical = false, warning = false;
  for (const check of checks) {
    if (check.CheckID === NODE_MAINT || check.CheckID.startsWith(SERVICE_MAINT_PREFIX)) {
      maintenance = true;
      continue;
    }
    if (check.Status === "critical") critical = true;
    else if (check.Status === "warning") warning = true;
    else if (check.Status !== "passing") return "";
  }
  return maintenance ? "maintenance" : critical ? "critical" : warning ? "warning" : "passing";
}

/** agentHealthService's mapping: passing 200, warning 429, anything else (critical, maintenance, "") 503. */
export function healthCode(status: string): number {
  return status === "passing" ? 200 : status === "warning" ? 429 : 503;
}

interface ServiceHealth {
  readonly code: number;
  readonly status: string;
  readonly body: { AggregatedStatus: string; Service: LocalAgentServiceView; Checks: unknown[] };
}

/** One service's api.AgentServiceChecksInfo: its checks and the node's checks (ChecksForService(id, true)), by CheckID. */
function serviceHealth(service: LocalAgentServiceView, checks: readonly LocalAgentCheckView[]): ServiceHealth {
  const mine = checks.filter((ch) => ch.ServiceID === service.ID || ch.ServiceID === "").sort((a, b) => (a.CheckID < b.CheckID ? -1 : a.CheckID > b.CheckID ? 1 : 0));
  const status = aggregatedStatus(mine);
  const body = {
    AggregatedStatus: status,
    Service: service,
    Checks: mine.map((ch) => ({
      Node: ch.Node, CheckID: ch.CheckID, Name: ch.Name, Status: ch.Status, Notes: ch.Notes, Output: ch.Output,
      ServiceID: ch.ServiceID, ServiceName: ch.ServiceName, ServiceTags: ch.ServiceTags, Type: "",
      Definition: ZERO_DEFINITION, CreateIndex: 0, ModifyIndex: 0,
    })),
  };
  return { code: healthCode(status), status, body };
}

/** Consul's returnTextPlain: an `Accept: text/plain...` header, else `?format=text`. */
function wantsText(c: Context): boolean {
  if ((c.req.header("accept") ?? "").startsWith("text/plain")) return true;
  return query(c, "format") === "text";
}

/**
 * Writes a CodeWithPayloadError answer (agent/http.go): the code, `X-Consul-Reason: <reason>`, and the
 * payload as JSON, or as bare text when the content type is text/plain.
 */
function payload(c: Context, code: number, reason: string, body: unknown, text: boolean): Response {
  // A header value must be ByteString-safe here; Go would send raw UTF-8, which fetch's Headers refuses.
  if (/^[\x20-\x7e]*$/.test(reason)) c.header("X-Consul-Reason", reason);
  if (text) return c.body(String(body), code as 200, { "Content-Type": "text/plain" });
  return jsonResponse(c, body, code);
}

/**
 * GET /v1/agent/health/service/id/<id>[?format=text] and GET /v1/agent/health/service/name/<name>[?format=text].
 *
 * By ID: 200/429/503 by the aggregated status with `{AggregatedStatus, Service, Checks}`; an unknown ID is
 * 404 with `{AggregatedStatus: "critical", Service: null, Checks: null}`, or, asked for text, the reason
 * as a JSON string (Consul labels that payload application/json). By name: the worst code over all
 * instances with their list ([] and 404 "ServiceName <name> Not Found" when none). An empty ID or name
 * is 400 "Missing serviceID" / "Missing service Name".
 */
export function mountAgentHealth(app: Hono, deps: HttpApiDeps): void {
  const byId = "/v1/agent/health/service/id/";
  app.get(`${byId}*`, withLocalAgent(deps, (c, agent) => {
    const id = pathTail(c, byId);
    if (id === undefined) return badPath(c);
    if (id === "") return plain(c, 400, "Missing serviceID");
    const text = wantsText(c);
    const services = agent.agentServices();
    const service = ownEntry(services, id);
    if (service === undefined) {
      const reason = `ServiceId ${id} not found`;
      return payload(c, 404, reason, text ? reason : { AggregatedStatus: "critical", Service: null, Checks: null }, false);
    }
    const health = serviceHealth(service, checksOf(agent));
    return payload(c, health.code, health.status, text ? health.status : health.body, text);
  }));
  otherMethodsNotAllowed(app, `${byId}*`);

  const byName = "/v1/agent/health/service/name/";
  app.get(`${byName}*`, withLocalAgent(deps, (c, agent) => {
    const name = pathTail(c, byName);
    if (name === undefined) return badPath(c);
    if (name === "") return plain(c, 400, "Missing service Name");
    let code = 404;
    let status = `ServiceName ${name} Not Found`;
    const checks = checksOf(agent);
    const services = Object.values(agent.agentServices()).filter((s) => s.Service === name).sort((a, b) => (a.ID < b.ID ? -1 : a.ID > b.ID ? 1 : 0));
    const result = services.map((service) => {
      const health = serviceHealth(service, checks);
      // The first instance replaces the 404; after that the worst code wins (passing 200 < warning 429 < critical 503).
      if (code === 404 || code < health.code) [code, status] = [health.code, health.status];
      return health.body;
    });
    const text = wantsText(c);
    return payload(c, code, status, text ? status : result, text);
  }));
  otherMethodsNotAllowed(app, `${byName}*`);
}

function checksOf(agent: LocalAgentApi): LocalAgentCheckView[] {
  return Object.values(agent.agentChecks());
}
