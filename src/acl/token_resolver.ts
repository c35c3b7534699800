/**
 * An agent's token resolution (Consul 1.8 agent/consul/acl.go ACLResolver as client agents run it):
 * a token's identity, policies and roles are fetched from the servers (`fetch`) and its authorizer
 * built here, cached for `ttlMs` (token_ttl). No token is the agent's default token (`acl.tokens.default`,
 * else the anonymous token); `acl.tokens.agent_master` is known only here and never asked for (write on
 * this agent, read on every node, else nothing). When the servers cannot be asked (`fetch` throws):
 * with `extend-cache` or `async-cache` a cached authorizer, even an expired one, is used and kept; with
 * nothing cached, `default_policy` decides (the documented behaviour; 1.8 itself allowed everything
 * there, issue #11136); `allow` and `deny` allow or deny everything.
 */
import type { AclPolicy, AclRole, AclTokenRecord } from "../model/index.ts";
import { ANONYMOUS_TOKEN_SECRET } from "../model/index.ts";
import { chainAuthorizers, policyAuthorizer, staticAuthorizer, type Authorizer } from "./authorizer.ts";
import { agentMasterRules, ROOT_TOKEN_NAMES } from "./builtin.ts";
import { ParsedPolicyCache, tokenAuthorizer } from "./resolve.ts";

/** What the servers answer for a secret: the token with the roles and policies it links; null: unknown or expired. */
export interface ResolvedToken {
  readonly token: AclTokenRecord;
  readonly policies: readonly AclPolicy[];
  readonly roles: readonly AclRole[];
}

/** A refusal with the HTTP status Consul answers it with. */
export class AclResolveError extends Error {
  override readonly name = "AclResolveError";
  constructor(message: string, readonly statusCode: number) {
    super(message);
  }
}

export interface TokenResolverOptions {
  /** Asks the servers; throws when they cannot be reached. */
  fetch(secret: string): Promise<ResolvedToken | null>;
  /** Monotonic milliseconds. */
  now(): number;
  readonly ttlMs: number;
  readonly datacenter: string;
  readonly nodeName: string;
  readonly defaultPolicy: "allow" | "deny";
  readonly downPolicy: "allow" | "deny" | "extend-cache" | "async-cache";
  /** The agent's default and agent_master tokens now (they may be replaced at run time). */
  defaultToken(): string;
  agentMasterToken(): string;
}

export interface TokenResolver {
  /** The authorizer of `token` (undefined or "": the default token); rejects with AclResolveError. */
  authorizer(token: string | undefined): Promise<Authorizer>;
}

/** Authorizers kept (Consul's authorizer LRU is 1024). */
const CACHE_SIZE = 1024;

export function createTokenResolver(o: TokenResolverOptions): TokenResolver {
  const policies = new ParsedPolicyCache();
  const cache = new Map<string, { authz: Authorizer; expiresAt: number }>();
  const agentMaster = chainAuthorizers([policyAuthorizer(agentMasterRules(o.nodeName)), staticAuthorizer("deny")]);

  const remember = (secret: string, authz: Authorizer) => {
    cache.delete(secret);
    cache.set(secret, { authz, expiresAt: o.now() + o.ttlMs });
    if (cache.size > CACHE_SIZE) cache.delete(cache.keys().next().value!);
    return authz;
  };

  return {
    async authorizer(token) {
      const secret = token || o.defaultToken() || ANONYMOUS_TOKEN_SECRET;
      if (ROOT_TOKEN_NAMES.has(secret)) throw new AclResolveError("Cannot resolve root ACL", 500);
      const agentMasterToken = o.agentMasterToken();
      if (agentMasterToken && secret === agentMasterToken) return agentMaster;
      const hit = cache.get(secret);
      if (hit && hit.expiresAt > o.now()) return hit.authz;
      let resolved: ResolvedToken | null;
      try {
        resolved = await o.fetch(secret);
      } catch {
        if ((o.downPolicy === "extend-cache" || o.downPolicy === "async-cache") && hit) return remember(secret, hit.authz);
        const fallback = o.downPolicy === "allow" || o.downPolicy === "deny" ? o.downPolicy : o.defaultPolicy;
        return staticAuthorizer(fallback);
      }
      if (!resolved) {
        cache.delete(secret);
        throw new AclResolveError("ACL not found", 403);
      }
      const objects = {
        policy: (id: string) => resolved!.policies.find((p) => p.ID.toLowerCase() === id.toLowerCase()),
        role: (id: string) => resolved!.roles.find((r) => r.ID.toLowerCase() === id.toLowerCase()),
      };
      return remember(secret, tokenAuthorizer(resolved.token, objects, { datacenter: o.datacenter, defaultPolicy: o.defaultPolicy, cache: policies }));
    },
  };
}
