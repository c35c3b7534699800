/**
 * The ACL checks of the endpoints an agent answers itself or forwards to services that are not the
 * State service (Consul 1.8 agent/agent_endpoint.go, operator_endpoint.go, event_endpoint.go,
 * connect_ca_endpoint.go): which resource, access and segment each needs, by method and path. A
 * request whose token is refused answers 403 "Permission denied" before the route runs; one whose
 * token cannot be resolved answers as the resolver says (403 "ACL not found"). Routes whose check
 * depends on the body or on filtering (service and check registration, member and service lists)
 * check inside the route.
 */
import type { Context, MiddlewareHandler } from "hono";
import type { AclAccess, AclResource, Authorizer } from "../acl/index.ts";
import type { HttpApiDeps } from "./deps.ts";
import { requestToken } from "./request.ts";
import { errorResponse, textError } from "./respond.ts";

interface Rule {
  readonly method: string;
  readonly path: RegExp;
  readonly resource: AclResource;
  readonly access: AclAccess;
  /** The segment: the agent's node name, or a path parameter (the first capture group). */
  readonly segment: "node" | "capture" | "none";
}

const rule = (method: string, path: RegExp, resource: AclResource, access: AclAccess, segment: Rule["segment"] = "none"): Rule => ({ method, path, resource, access, segment });

export const AGENT_ACL_RULES: readonly Rule[] = [
  rule("GET", /^\/v1\/agent\/(?:self|metrics|monitor)$/, "agent", "read", "node"),
  rule("PUT", /^\/v1\/agent\/(?:leave|reload)$/, "agent", "write", "node"),
  rule("PUT", /^\/v1\/agent\/join\//, "agent", "write", "node"),
  rule("PUT", /^\/v1\/agent\/token\//, "agent", "write", "node"),
  rule("PUT", /^\/v1\/agent\/force-leave\//, "operator", "write"),
  rule("GET", /^\/v1\/agent\/host$/, "operator", "read"),
  rule("PUT", /^\/v1\/agent\/maintenance$/, "node", "write", "node"),
  rule("GET", /^\/v1\/operator\/keyring$/, "keyring", "read"),
  rule("POST", /^\/v1\/operator\/keyring$/, "keyring", "write"),
  rule("PUT", /^\/v1\/operator\/keyring$/, "keyring", "write"),
  rule("DELETE", /^\/v1\/operator\/keyring$/, "keyring", "write"),
  rule("GET", /^\/v1\/operator\/(?:raft\/configuration|autopilot\/configuration|autopilot\/health)$/, "operator", "read"),
  rule("DELETE", /^\/v1\/operator\/raft\/peer$/, "operator", "write"),
  rule("POST", /^\/v1\/operator\/raft\/transfer-leader$/, "operator", "write"),
  rule("PUT", /^\/v1\/operator\/autopilot\/configuration$/, "operator", "write"),
  rule("GET", /^\/v1\/connect\/ca\/configuration$/, "operator", "read"),
  rule("PUT", /^\/v1\/connect\/ca\/configuration$/, "operator", "write"),
  rule("PUT", /^\/v1\/event\/fire\/(.+)$/, "event", "write", "capture"),
  rule("GET", /^\/v1\/agent\/connect\/ca\/leaf\/(.+)$/, "service", "write", "capture"),
];

/** The rule a request falls under, with its segment, if any. */
export function agentAclRule(method: string, path: string, nodeName: string): { readonly resource: AclResource; readonly access: AclAccess; readonly segment?: string } | undefined {
  for (const r of AGENT_ACL_RULES) {
    if (r.method !== method) continue;
    const m = r.path.exec(path);
    if (!m) continue;
    const segment = r.segment === "node" ? nodeName : r.segment === "capture" ? decodeURIComponent(m[1]!) : undefined;
    return { resource: r.resource, access: r.access, ...(segment !== undefined ? { segment } : {}) };
  }
  return undefined;
}

/** The request's authorizer, or the Response refusing it (resolution failed). */
export async function requestAuthorizer(c: Context, deps: HttpApiDeps): Promise<Authorizer | Response | undefined> {
  if (!deps.aclAuthorizer) return undefined;
  try {
    return await deps.aclAuthorizer(requestToken(c));
  } catch (err) {
    return errorResponse(c, err);
  }
}

/** Middleware: checks AGENT_ACL_RULES before the route runs (nothing without ACLs). */
export function agentAclMiddleware(deps: HttpApiDeps): MiddlewareHandler {
  return async (c, next) => {
    const r = deps.aclAuthorizer ? agentAclRule(c.req.method, c.req.path, deps.agent.nodeName) : undefined;
    if (!r) return next();
    const a = await requestAuthorizer(c, deps);
    if (a instanceof Response) return a;
    if (a && a.check(r.resource, r.access, r.segment) !== "allow") return textError(c, 403, "Permission denied");
    return next();
  };
}
