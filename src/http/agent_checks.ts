/**
 * The local agent's check endpoints (Consul 1.8 agent/agent_endpoint.go: AgentChecks, AgentRegisterCheck,
 * AgentDeregisterCheck, AgentCheckPass/Warn/Fail, AgentCheckUpdate;
 * https://developer.hashicorp.com/consul/api-docs/agent/check). Mounted by mountAgentServices.
 */
import type { Hono } from "hono";
import { HEALTH_CHECK_SCHEMA } from "../connect/index.ts";
import { decodeGoStruct, GoError, struct } from "../lib/index.ts";
import { failure, plain, readBody, withLocalAgent, write } from "./agent_local.ts";
import type { HttpApiDeps, LocalAgentApi } from "./deps.ts";
import { checkDenial, readableChecks, withAgentAcl } from "./agent_acl.ts";
import { requestAuthorizer } from "./acl_agent_rules.ts";
import { errorResponse, jsonResponse } from "./respond.ts";
import { applyRecordFilter, badPath, filterParam, otherMethodsNotAllowed, pathTail } from "./route_params.ts";
import { query, requestToken } from "./request.ts";

/** The TTL verbs and the status each sets (api.HealthPassing, HealthWarning, HealthCritical). */
const TTL_VERBS = [["pass", "passing"], ["warn", "warning"], ["fail", "critical"]] as const;

/** AgentCheckUpdate's body type (agent_endpoint.go `checkUpdate`), named as Go's decoder names it in errors. */
const CHECK_UPDATE = struct("agent.checkUpdate", { Status: "string", Output: "string" });

/**
 * GET /v1/agent/checks[?filter=], PUT /v1/agent/check/register, PUT /v1/agent/check/deregister/<id>,
 * PUT /v1/agent/check/pass|warn|fail/<id>[?note=], PUT /v1/agent/check/update/<id> with `{Status, Output}`.
 *
 * Check IDs are the rest of the decoded path and may contain "/". Writes answer an empty 200. Quirks kept
 * from Consul: pass/warn/fail take their output from `?note=` (it becomes the check's Output, not its
 * Notes); update checks the status before it looks at the check ("Invalid check status: 'x'", 400).
 * One deliberate difference: `?filter` on /v1/agent/checks is validated against the check schema up
 * front (400 for an unknown selector), where Consul 1.8 builds the filter without a type and fails
 * (500) only while evaluating.
 */
export function mountAgentChecks(app: Hono, deps: HttpApiDeps): void {
  const route = (handler: Parameters<typeof withLocalAgent>[1]) => withLocalAgent(deps, handler);
  /** vetCheckUpdate: the existing check's service, or this node (an unknown check is the route's to refuse). */
  const checkUpdateDenial = (a: Parameters<typeof checkDenial>[0], agent: LocalAgentApi, id: string) => {
    const existing = agent.agentChecks()[id];
    return existing ? checkDenial(a, agent, deps.agent.nodeName, { serviceId: existing.ServiceID }) : undefined;
  };

  app.get("/v1/agent/checks", route(async (c, agent) => {
    const filter = filterParam(c, HEALTH_CHECK_SCHEMA);
    if (filter instanceof Response) return filter;
    const a = await requestAuthorizer(c, deps);
    if (a instanceof Response) return a;
    return applyRecordFilter(c, readableChecks(a, agent.agentChecks()), filter).then((kept) => jsonResponse(c, kept), (err) => errorResponse(c, err));
  }));

  app.put("/v1/agent/check/register", route(async (c, agent) => {
    const body = await readBody(c);
    if (body instanceof Response) return body;
    let reg: unknown;
    try {
      reg = agent.parseCheckRegistration(body);
    } catch (err) {
      return failure(c, err);
    }
    const subject = agent.checkAclSubject?.(reg);
    return withAgentAcl(c, deps, (a) => (subject ? checkDenial(a, agent, deps.agent.nodeName, subject) : undefined), () => write(c, () => agent.registerCheck(reg, { token: requestToken(c) ?? "" })));
  }));

  const deregister = "/v1/agent/check/deregister/";
  app.put(`${deregister}*`, route((c, agent) => {
    const id = pathTail(c, deregister);
    if (id === undefined) return badPath(c);
    return withAgentAcl(c, deps, (a) => checkUpdateDenial(a, agent, id), () => write(c, () => agent.deregisterCheck(id)));
  }));
  otherMethodsNotAllowed(app, `${deregister}*`);

  for (const [verb, status] of TTL_VERBS) {
    const prefix = `/v1/agent/check/${verb}/`;
    app.put(`${prefix}*`, route((c, agent) => {
      const id = pathTail(c, prefix);
      if (id === undefined) return badPath(c);
      return withAgentAcl(c, deps, (a) => checkUpdateDenial(a, agent, id), () => write(c, () => agent.updateTTL(id, status, query(c, "note") ?? "")));
    }));
    otherMethodsNotAllowed(app, `${prefix}*`);
  }

  const update = "/v1/agent/check/update/";
  app.put(`${update}*`, route(async (c, agent) => {
    const body = await readBody(c);
    if (body instanceof Response) return body;
    let args: { Status?: string; Output?: string };
    try {
      args = decodeGoStruct(body, CHECK_UPDATE.struct);
    } catch (err) {
      if (err instanceof GoError) return plain(c, 400, `Request decode failed: ${err.message}`);
      throw err;
    }
    const status = args.Status ?? "";
    if (status !== "passing" && status !== "warning" && status !== "critical") {
      return plain(c, 400, `Invalid check status: '${status}'`);
    }
    const id = pathTail(c, update);
    if (id === undefined) return badPath(c);
    return withAgentAcl(c, deps, (a) => checkUpdateDenial(a, agent, id), () => write(c, () => agent.updateTTL(id, status, args.Output ?? "")));
  }));
  otherMethodsNotAllowed(app, `${update}*`);
}
