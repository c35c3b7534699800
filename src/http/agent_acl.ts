/**
 * ACL checks of the local agent's service and check endpoints (Consul 1.8 agent/acl.go:
 * vetServiceRegister, vetServiceUpdate, vetCheckRegister, vetCheckUpdate, filterServices,
 * filterChecks): service:write on a registered service's name, on the service it replaces and, for a
 * connect-proxy, on its destination; a service's checks and maintenance by that service's name, a node
 * check by this node; lists show only what the token may read. Without ACLs every check passes.
 */
import type { Context } from "hono";
import type { Authorizer } from "../acl/index.ts";
import { requestAuthorizer } from "./acl_agent_rules.ts";
import type { HttpApiDeps, LocalAgentApi, LocalAgentCheckView, LocalAgentServiceView } from "./deps.ts";
import { plain } from "./agent_local.ts";

export const PERMISSION_DENIED = "Permission denied";

/** A service an agent registration writes: its ID, name and, for a connect-proxy, its destination. */
export interface ServiceAclSubject {
  readonly id: string;
  readonly name: string;
  readonly destination?: string;
}

/**
 * Runs `f` with the request's authorizer (undefined without ACLs); a resolution failure is answered,
 * and `f` returning a denial text answers 403 with it.
 */
export async function withAgentAcl(c: Context, deps: HttpApiDeps, f: (a: Authorizer | undefined) => string | undefined | Promise<string | undefined>, then: () => Response | Promise<Response>): Promise<Response> {
  const a = await requestAuthorizer(c, deps);
  if (a instanceof Response) return a;
  const denied = await f(a);
  return denied ? plain(c, 403, denied) : then();
}

const can = (a: Authorizer, resource: "service" | "node", segment: string) => a.check(resource, "write", segment) === "allow";

/** vetServiceRegister for each service a registration writes. */
export function serviceRegisterDenial(a: Authorizer | undefined, agent: LocalAgentApi, subjects: readonly ServiceAclSubject[]): string | undefined {
  if (!a) return undefined;
  for (const s of subjects) {
    if (!can(a, "service", s.name)) return PERMISSION_DENIED;
    const existing = agent.agentServices()[s.id];
    if (existing && !can(a, "service", existing.Service)) return PERMISSION_DENIED;
    if (s.destination !== undefined && !can(a, "service", s.destination)) return PERMISSION_DENIED;
  }
  return undefined;
}

/** vetServiceUpdate: write on the existing service (an unknown one is left to the route's own answer). */
export function serviceUpdateDenial(a: Authorizer | undefined, agent: LocalAgentApi, serviceId: string): string | undefined {
  const existing = agent.agentServices()[serviceId];
  return a && existing && !can(a, "service", existing.Service) ? PERMISSION_DENIED : undefined;
}

/** vetCheckRegister / vetCheckUpdate: a service check by its service's name, a node check by this node. */
export function checkDenial(a: Authorizer | undefined, agent: LocalAgentApi, nodeName: string, check: { readonly serviceId: string; readonly checkId?: string }): string | undefined {
  if (!a) return undefined;
  const vet = (serviceId: string) => {
    if (!serviceId) return can(a, "node", nodeName);
    const svc = agent.agentServices()[serviceId];
    return svc ? can(a, "service", svc.Service) : true; // unknown services are the route's to refuse
  };
  if (!vet(check.serviceId)) return PERMISSION_DENIED;
  const existing = check.checkId !== undefined ? agent.agentChecks()[check.checkId] : undefined;
  return existing && !vet(existing.ServiceID) ? PERMISSION_DENIED : undefined;
}

/** filterServices: only the services the token may read. */
export function readableServices(a: Authorizer | undefined, services: Readonly<Record<string, LocalAgentServiceView>>): Readonly<Record<string, LocalAgentServiceView>> {
  if (!a) return services;
  return Object.fromEntries(Object.entries(services).filter(([, s]) => a.check("service", "read", s.Service) === "allow"));
}

/** filterChecks: service checks need service:read on their service, node checks node:read on their node. */
export function readableChecks(a: Authorizer | undefined, checks: Readonly<Record<string, LocalAgentCheckView>>): Readonly<Record<string, LocalAgentCheckView>> {
  if (!a) return checks;
  return Object.fromEntries(Object.entries(checks).filter(([, x]) => (x.ServiceID ? a.check("service", "read", x.ServiceName) : a.check("node", "read", x.Node)) === "allow"));
}
