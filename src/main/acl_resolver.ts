/**
 * The agent's token resolver (src/acl createTokenResolver) over its StateAccess: a token is resolved
 * by an `acl-token-resolve` read made with that token (the servers answer "ACL not found" for an
 * unknown secret, which is a definite answer, not an outage). A token is resolved with its policies and
 * roles in one read, so the answer is cached for the shortest of `acl.token_ttl`, `policy_ttl` and
 * `role_ttl`: a change to any of them is seen within its own TTL (Consul caches the three apart).
 */
import { createTokenResolver, type TokenResolver } from "../acl/index.ts";
import type { AgentService } from "../agent/index.ts";
import type { StreamAuth } from "../xds/index.ts";
import type { StateAccess } from "../http/index.ts";
import { systemClock } from "../platform/index.ts";
import type { AgentTokens } from "./agent_tokens.ts";
import type { RuntimeConfig } from "./config.ts";

/** How long a resolved token (with its policies and roles) is cached: the shortest of the three TTLs. */
export const resolvedTokenTtlMs = (acl: Pick<RuntimeConfig["acl"], "tokenTtlMs" | "policyTtlMs" | "roleTtlMs">): number =>
  Math.min(acl.tokenTtlMs, acl.policyTtlMs, acl.roleTtlMs);

export function agentTokenResolver(config: Pick<RuntimeConfig, "acl" | "datacenter" | "nodeName">, state: StateAccess, tokens: Pick<AgentTokens, "default" | "agentMaster">): TokenResolver {
  const clock = systemClock();
  return createTokenResolver({
    async fetch(secret) {
      try {
        const r = await state.read({ type: "acl-token-resolve", secret }, { datacenter: undefined, consistency: "default", minIndex: 0, maxWaitMs: 0, token: secret });
        return r.value;
      } catch (err) {
        if ((err as { statusCode?: number }).statusCode === 403 && (err as Error).message === "ACL not found") return null;
        throw err;
      }
    },
    now: () => clock.monotonic(),
    ttlMs: resolvedTokenTtlMs(config.acl),
    datacenter: config.datacenter,
    nodeName: config.nodeName,
    defaultPolicy: config.acl.defaultPolicy,
    downPolicy: config.acl.downPolicy,
    defaultToken: tokens.default,
    agentMasterToken: tokens.agentMaster,
  });
}

/** Consul's IntentionDefaultAllow: with ACLs on, what the ACL default policy says; without them, allow. */
export const intentionDefaultAllow = (config: Pick<RuntimeConfig, "acl">): boolean => !config.acl.enabled || config.acl.defaultPolicy === "allow";

/**
 * Consul's checkStreamACLs for the xDS server: a stream's token needs service:write on what the proxy
 * represents (a connect-proxy's destination service, a gateway's or a proxyless client's own service);
 * an unknown token is Unauthenticated "ACL not found", a refusal PermissionDenied "permission denied".
 */
export function xdsStreamAuthorizer(resolver: TokenResolver, services: () => Readonly<Record<string, AgentService>>): (nodeId: string, token: string | undefined) => Promise<StreamAuth> {
  return async (nodeId, token) => {
    let a;
    try {
      a = await resolver.authorizer(token);
    } catch (err) {
      if ((err as { statusCode?: number }).statusCode === 403) return { ok: false, code: "unauthenticated", message: "ACL not found" };
      throw err;
    }
    const svc = services()[nodeId];
    const target = svc ? (svc.Kind === "connect-proxy" ? svc.Proxy?.DestinationServiceName ?? svc.Service : svc.Service) : nodeId;
    return a.check("service", "write", target) === "allow" ? { ok: true } : { ok: false, code: "permission-denied", message: "permission denied" };
  };
}
