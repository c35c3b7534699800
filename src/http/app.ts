import { Hono } from "hono";
import { mountAgent } from "./agent.ts";
import { mountAgentMetrics } from "./agent_metrics.ts";
import { mountAcl } from "./acl.ts";
import { mountAclPolicies } from "./acl_policies.ts";
import { mountAclLegacy } from "./acl_legacy.ts";
import { mountAclAuthMethods } from "./acl_auth_methods.ts";
import { agentAclMiddleware, requestAuthorizer } from "./acl_agent_rules.ts";
import { mountAgentMonitor } from "./agent_monitor.ts";
import { mountAgentToken } from "./agent_token.ts";
import { mountAgentServices } from "./agent_services.ts";
import { mountCatalog } from "./catalog.ts";
import { mountCoordinate } from "./coordinate.ts";
import { mountHealth } from "./health.ts";
import { mountInternalUi } from "./internal_ui.ts";
import { mountSession } from "./session.ts";
import { mountTxn } from "./txn.ts";
import { mountKeyring } from "./keyring.ts";
import { mountKv } from "./kv.ts";
import { mountSnapshot } from "./snapshot.ts";
import { mountOperator } from "./operator.ts";
import { mountOperatorAutopilot } from "./operator_autopilot.ts";
import { mountEvents } from "./event.ts";
import { mountConnectCa } from "./connect_ca.ts";
import { mountConfig } from "./config.ts";
import { mountDiscoveryChain } from "./discovery_chain.ts";
import { mountFederationState } from "./federation_state.ts";
import { mountIntentions } from "./intentions.ts";
import { mountAgentReload, mountMembers } from "./members.ts";
import { mountQuery } from "./query.ts";
import type { HttpApiDeps } from "./deps.ts";
import { datacenterNameError } from "./datacenter.ts";
import { query } from "./request.ts";
import { errorResponse, serverErrorOf, textError } from "./respond.ts";
import { requestTimer } from "./request_metrics.ts";
import { mountStatus } from "./status.ts";

/**
 * Builds the Consul-compatible `/v1` HTTP API over its dependencies. Returns a Hono app; serve it with
 * any fetch-style server (`app.fetch`). Unknown paths answer 404 and a known path with the wrong
 * method answers 405, with Go's net/http wording that Consul clients expect. A `?dc=` that cannot be a
 * datacenter name is refused with 400 before any route runs; an error a route throws is answered by
 * errorResponse; every 500 errorResponse wrote (in a route or for a thrown error) is reported once to
 * `deps.logError`.
 */
export function createHttpApi(deps: HttpApiDeps): Hono {
  const app = new Hono();
  const metrics = deps.metrics;
  const timeRequest = metrics ? requestTimer(metrics) : undefined;
  app.use(async (c, next) => {
    const dc = query(c, "dc");
    const bad = dc ? datacenterNameError(dc) : undefined;
    if (bad) return textError(c, 400, bad);
    const started = metrics ? metrics.monotonic() : 0;
    await next();
    timeRequest?.(c.req.method, c.req.routePath, started);
    const err = c.res.status >= 500 ? serverErrorOf(c) : undefined;
    if (err !== undefined) deps.logError?.(err, { method: c.req.method, path: c.req.path });
  });
  app.onError((err, c) => errorResponse(c, err));
  app.use(agentAclMiddleware(deps));
  mountAgent(app, deps.agent, deps.membership, deps.coordinates);
  mountAgentMetrics(app, deps.metrics);
  mountAcl(app, deps);
  mountAclPolicies(app, deps);
  mountAclLegacy(app, deps);
  mountAclAuthMethods(app, deps);
  mountAgentMonitor(app, deps.monitor);
  mountAgentToken(app, deps);
  mountAgentServices(app, deps);
  mountStatus(app, deps.raft);
  mountMembers(app, deps.membership, deps.agent, (c) => requestAuthorizer(c, deps));
  mountAgentReload(app, deps.agentReload);
  mountCatalog(app, deps);
  mountHealth(app, deps);
  mountInternalUi(app, deps);
  mountCoordinate(app, deps);
  mountSession(app, deps);
  mountTxn(app, deps);
  mountKeyring(app, deps.keyring);
  mountKv(app, deps);
  mountSnapshot(app, deps);
  mountOperator(app, deps);
  mountOperatorAutopilot(app, { state: deps.state, autopilot: deps.autopilot, random: deps.random });
  mountEvents(app, deps);
  mountConnectCa(app, deps);
  mountConfig(app, deps);
  mountDiscoveryChain(app, deps);
  mountIntentions(app, deps);
  mountQuery(app, deps);
  mountFederationState(app, deps);
  app.notFound((c) => {
    const known = app.routes.some((r) => r.path === c.req.path);
    return known ? textError(c, 405, `method ${c.req.method} not allowed`) : textError(c, 404, "404 page not found");
  });
  return app;
}
