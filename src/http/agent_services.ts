/**
 * The local agent's service endpoints (Consul 1.8 agent/agent_endpoint.go: AgentServices, AgentService,
 * AgentRegisterService, AgentDeregisterService, AgentServiceMaintenance, AgentNodeMaintenance;
 * https://developer.hashicorp.com/consul/api-docs/agent/service). This module also mounts the check
 * and local health endpoints (agent_checks.ts, agent_health.ts), so the app mounts the whole local-agent
 * API with one call.
 */
import type { Context, Hono } from "hono";
import { NODE_SERVICE_SCHEMA } from "../connect/index.ts";
import { GoError, parseGoDuration } from "../lib/index.ts";
import { mountAgentChecks } from "./agent_checks.ts";
import { readableServices, serviceRegisterDenial, serviceUpdateDenial, withAgentAcl } from "./agent_acl.ts";
import { requestAuthorizer } from "./acl_agent_rules.ts";
import { mountAgentHealth } from "./agent_health.ts";
import { emptyOk, enableParam, failure, plain, readBody, refusalKind, withLocalAgent, write } from "./agent_local.ts";
import type { HttpApiDeps, LocalAgentApi, LocalAgentServiceView } from "./deps.ts";
import { DEFAULT_WAIT_MS, JITTER_FRACTION, MAX_WAIT_MS } from "./query_options.ts";
import { errorResponse, jsonResponse } from "./respond.ts";
import { applyRecordFilter, badPath, filterParam, otherMethodsNotAllowed, pathTail } from "./route_params.ts";
import { query, requestToken } from "./request.ts";

const SERVICE_PREFIX = "/v1/agent/service/";
const DEREGISTER_PREFIX = "/v1/agent/service/deregister/";
const MAINTENANCE_PREFIX = "/v1/agent/service/maintenance/";

/**
 * GET /v1/agent/services[?filter=], GET /v1/agent/service/<id>[?hash=&wait=], PUT /v1/agent/service/register
 * [?replace-existing-checks], PUT /v1/agent/service/deregister/<id>, PUT /v1/agent/service/maintenance/<id>
 * ?enable=[&reason=], PUT /v1/agent/maintenance?enable=[&reason=], plus mountAgentChecks and mountAgentHealth.
 *
 * IDs are the rest of the decoded path (Consul's `strings.TrimPrefix(req.URL.Path, ...)`), so they may
 * contain "/". Writes answer an empty 200 once the local state has changed; the catalog is updated by
 * anti-entropy, not before the answer. Without `deps.localAgent` every route answers 500.
 */
export function mountAgentServices(app: Hono, deps: HttpApiDeps): void {
  const route = (handler: Parameters<typeof withLocalAgent>[1]) => withLocalAgent(deps, handler);

  app.get("/v1/agent/services", route(async (c, agent) => {
    const filter = filterParam(c, NODE_SERVICE_SCHEMA);
    if (filter instanceof Response) return filter;
    const a = await requestAuthorizer(c, deps);
    if (a instanceof Response) return a;
    return applyRecordFilter(c, readableServices(a, agent.agentServices()), filter).then((kept) => jsonResponse(c, kept), (err) => errorResponse(c, err));
  }));

  app.put("/v1/agent/service/register", route(async (c, agent) => {
    const body = await readBody(c);
    if (body instanceof Response) return body;
    const replaceExistingChecks = replaceExisting(c);
    let reg: unknown;
    try {
      reg = agent.parseServiceRegistration(body);
    } catch (err) {
      return failure(c, err);
    }
    return withAgentAcl(c, deps, (a) => serviceRegisterDenial(a, agent, agent.serviceAclSubjects?.(reg) ?? []), () =>
      write(c, () => agent.registerService(reg, { replaceExistingChecks, token: requestToken(c) ?? "" })));
  }));
  // Registered before the GET wildcard below, which would otherwise read "register" as a service ID.
  otherMethodsNotAllowed(app, "/v1/agent/service/register");

  app.put(`${DEREGISTER_PREFIX}*`, route((c, agent) => {
    const id = pathTail(c, DEREGISTER_PREFIX);
    if (id === undefined) return badPath(c);
    return withAgentAcl(c, deps, (a) => serviceUpdateDenial(a, agent, id), () => write(c, () => agent.deregisterService(id)));
  }));
  otherMethodsNotAllowed(app, `${DEREGISTER_PREFIX}*`);

  app.put(`${MAINTENANCE_PREFIX}*`, route((c, agent) => {
    const id = pathTail(c, MAINTENANCE_PREFIX);
    return withAgentAcl(c, deps, (a) => (id === undefined ? undefined : serviceUpdateDenial(a, agent, id)), () => serviceMaintenance(c, agent));
  }));
  otherMethodsNotAllowed(app, `${MAINTENANCE_PREFIX}*`);

  app.get(`${SERVICE_PREFIX}*`, route((c, agent) => serviceById(c, agent, deps)));
  otherMethodsNotAllowed(app, `${SERVICE_PREFIX}*`);

  app.put("/v1/agent/maintenance", route((c, agent) => {
    const enable = enableParam(c);
    if (enable instanceof Response) return enable;
    return write(c, () => (enable ? agent.enableNodeMaintenance(query(c, "reason") ?? "") : agent.disableNodeMaintenance()));
  }));

  mountAgentChecks(app, deps);
  mountAgentHealth(app, deps);
}

/**
 * `?replace-existing-checks` counts when present with no value or "true" (AgentRegisterService:
 * `len(query[...]) > 0 && (Get(...) == "" || Get(...) == "true")`); "1" or "yes" do not.
 */
function replaceExisting(c: Context): boolean {
  const raw = query(c, "replace-existing-checks");
  return raw === "" || raw === "true";
}

/**
 * AgentServiceMaintenance: 400 "Missing service ID" for an empty ID (checked first), then the `enable`
 * checks; a failure of the agent call (an unknown service) is a 404 with its message, whatever its kind,
 * as Consul writes 404 for any error there.
 */
function serviceMaintenance(c: Context, agent: LocalAgentApi): Response {
  const id = pathTail(c, MAINTENANCE_PREFIX);
  if (id === undefined) return badPath(c);
  if (id === "") return plain(c, 400, "Missing service ID");
  const enable = enableParam(c);
  if (enable instanceof Response) return enable;
  try {
    if (enable) agent.enableServiceMaintenance(id, query(c, "reason") ?? "");
    else agent.disableServiceMaintenance(id);
  } catch (err) {
    return refusalKind(err) ? plain(c, 404, (err as Error).message) : failure(c, err);
  }
  return emptyOk(c);
}

/**
 * GET /v1/agent/service/<id>: the service as /v1/agent/services shows it plus ContentHash, also sent as
 * `X-Consul-ContentHash`; 404 `unknown service ID: <id>` when absent.
 *
 * Hash-based blocking (Agent.LocalBlockingQuery): with `?hash=` equal to the current ContentHash the
 * answer waits until the service changes (its hash differs, or it is removed: then 404) or the wait
 * elapses (then the unchanged service). The wait is `?wait=` (Go duration; default 5 minutes, at most
 * 10), plus up to wait/16 of jitter from `deps.random`. Any other hash, or none, answers at once.
 * `?index=` is parsed (400 "Invalid index") but not used, as in Consul. Without `deps.clock` the
 * HTTP layer cannot wait and answers at once.
 */
async function serviceById(c: Context, agent: LocalAgentApi, deps: HttpApiDeps): Promise<Response> {
  const id = pathTail(c, SERVICE_PREFIX);
  if (id === undefined) return badPath(c);
  const wait = waitParam(c);
  if (wait instanceof Response) return wait;
  const hash = query(c, "hash") ?? "";
  let service = agent.agentService(id);
  if (hash !== "" && service?.ContentHash === hash && deps.clock) {
    let waitMs = wait === 0 ? DEFAULT_WAIT_MS : Math.min(wait, MAX_WAIT_MS);
    waitMs += (deps.random ?? (() => 0.5))() * (waitMs / JITTER_FRACTION);
    service = await blockWhileUnchanged(agent, deps.clock, id, hash, waitMs, c.req.raw.signal);
  }
  if (!service) return plain(c, 404, `unknown service ID: ${id}`);
  if (service.ContentHash) c.header("X-Consul-ContentHash", service.ContentHash);
  return jsonResponse(c, service);
}

/** Consul's parseWait: `?wait=` (Go duration, 400 "Invalid wait time") in milliseconds, and `?index=` (400 "Invalid index"). */
function waitParam(c: Context): number | Response {
  let waitMs = 0;
  const wait = query(c, "wait");
  if (wait) {
    try {
      waitMs = parseGoDuration(wait) / 1e6;
    } catch (err) {
      if (err instanceof GoError) return plain(c, 400, "Invalid wait time");
      throw err;
    }
  }
  const index = query(c, "index");
  if (index && !(/^\d+$/.test(index) && BigInt(index) < 2n ** 64n)) return plain(c, 400, "Invalid index");
  return waitMs;
}

/**
 * Waits until the service's ContentHash is no longer `hash` (or it is gone), `ms` pass on `clock`, or the
 * request is aborted; returns the service as it is then. Wakes on every local change and re-reads, as
 * Consul's loop re-runs its query after each watch fires, so a change that ends where it started keeps waiting.
 */
async function blockWhileUnchanged(
  agent: LocalAgentApi,
  clock: NonNullable<HttpApiDeps["clock"]>,
  id: string,
  hash: string,
  ms: number,
  signal: AbortSignal | undefined,
): Promise<LocalAgentServiceView | undefined> {
  const deadline = clock.monotonic() + ms;
  let service = agent.agentService(id);
  while (service?.ContentHash === hash && !signal?.aborted) {
    const left = deadline - clock.monotonic();
    if (left <= 0) break;
    await nextChange(agent, clock, left, signal);
    service = agent.agentService(id);
  }
  return service;
}

/** Resolves on the next local-agent change, after `ms`, or on abort, whichever comes first; cleans up the rest. */
function nextChange(agent: LocalAgentApi, clock: NonNullable<HttpApiDeps["clock"]>, ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    const cleanups: (() => void)[] = [];
    const done = () => {
      for (const cleanup of cleanups.splice(0)) cleanup();
      resolve();
    };
    cleanups.push(agent.onChange(done), clock.setTimer(ms, done));
    if (signal) {
      signal.addEventListener("abort", done, { once: true });
      cleanups.push(() => signal.removeEventListener("abort", done));
    }
  });
}
