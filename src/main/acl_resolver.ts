/**
 * The agent's token resolver (src/acl createTokenResolver) over its StateAccess: a token is resolved
 * by an `acl-token-resolve` read made with that token (the servers answer "ACL not found" for an
 * unknown secret, which is a definite answer, not an outage), cached for `acl.token_ttl`.
 */
import { createTokenResolver, type TokenResolver } from "../acl/index.ts";
import type { StateAccess } from "../http/index.ts";
import { systemClock } from "../platform/index.ts";
import type { RuntimeConfig } from "./config.ts";

export function agentTokenResolver(config: Pick<RuntimeConfig, "acl" | "datacenter" | "nodeName">, state: StateAccess): TokenResolver {
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
    ttlMs: config.acl.tokenTtlMs,
    datacenter: config.datacenter,
    nodeName: config.nodeName,
    defaultPolicy: config.acl.defaultPolicy,
    downPolicy: config.acl.downPolicy,
    defaultToken: config.acl.tokens.default,
    agentMasterToken: config.acl.tokens.agentMaster,
  });
}
