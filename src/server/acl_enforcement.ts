/**
 * ACL enforcement on a server (Consul 1.8's ResolveToken on the servers that hold the ACL state): a
 * request's token resolves to an authorizer from this server's replicated state, and every command
 * and read the server serves on the request's behalf is checked with it (src/acl's commandDenial and
 * authorizeRead). Resolution: no token is the server's default token (`acl.tokens.default`, else the
 * anonymous token); an unknown or expired secret is "ACL not found" (403); the root names are
 * "Cannot resolve root ACL". Authorizers are cached by secret until a token, policy or role changes.
 *
 * In a secondary datacenter (`remote` given) a token this server does not hold is resolved through the
 * primary, as Consul 1.8's ResolveIdentityFromToken does: always without token replication, and with it
 * only until the first tokens have replicated. `resolve(token)` does that asynchronously (cached for the
 * resolver's TTL, `down_policy` when the primary cannot be reached); the synchronous checks then use it.
 */
import { Code, ConnectError } from "@connectrpc/connect";
import {
  AclResolveError, authorizeRead, commandDenial, ParsedPolicyCache, PERMISSION_DENIED, ROOT_TOKEN_NAMES, tokenAuthorizer, txnDenials, type AclAccess, type AclResource,
  type Authorizer, type TokenResolver,
} from "../acl/index.ts";
import { ANONYMOUS_TOKEN_SECRET, type ReadQuery, type ReadValue } from "../model/index.ts";
import type { Clock } from "../platform/index.ts";
import { aclPolicyGet, aclRoleGet, aclTokenGetBySecret, WatchSet, type StateCommand, type StateResult, type StateStore } from "../state/index.ts";

export interface AclEnforcementOptions {
  readonly store: StateStore;
  readonly datacenter: string;
  readonly defaultPolicy: "allow" | "deny";
  /** `acl.tokens.default` now ("" for the anonymous token): it changes with a reload or PUT /v1/agent/token/default. */
  readonly defaultToken: () => string;
  readonly enableKeyListPolicy: boolean;
  readonly clock: Clock;
  /** In a secondary: tokens resolved through the primary (src/acl createTokenResolver over a remote read). */
  readonly remote?: {
    readonly resolver: TokenResolver;
    /** `acl.enable_token_replication`: local tokens are authoritative once any have replicated. */
    readonly tokenReplication: boolean;
  };
}

export const ACL_NOT_FOUND = "ACL not found";
export const ROOT_ACL = "Cannot resolve root ACL";
/** Authorizers kept (Consul's authorizer LRU is 1024). */
const CACHE_SIZE = 1024;

export interface AclEnforcement {
  /**
   * Makes `token` resolvable by the checks below: a token not held here is fetched from the primary in a
   * secondary (rejects with ConnectError "ACL not found" when the primary does not know it either).
   * A no-op in the primary. Call it before the synchronous checks of a request.
   */
  resolve(token: string | undefined): Promise<void>;
  /** The authorizer of `token` (undefined: the default token); throws ConnectError for an unknown, expired or root token. */
  authorizer(token: string | undefined): Authorizer;
  /**
   * Throws ConnectError(PermissionDenied) unless `token` may propose `cmd`; for a transaction with denied
   * operations, returns the result to answer instead of applying it (Consul's 409 with an error per op).
   */
  checkCommand(cmd: StateCommand, token: string | undefined): StateResult | undefined;
  /** What `token` may see of `value`, the result of `q`; throws ConnectError(PermissionDenied) for a denied point read. */
  filterRead<Q extends ReadQuery>(q: Q, value: ReadValue<Q>, token: string | undefined): ReadValue<Q>;
  /** Throws ConnectError(PermissionDenied, "Permission denied") unless `token` has `access` on `resource` (`segment`). */
  require(token: string | undefined, resource: AclResource, access: AclAccess, segment?: string): void;
}

export function createAclEnforcement(o: AclEnforcementOptions): AclEnforcement {
  const policies = new ParsedPolicyCache();
  const cache = new Map<string, { readonly version: string; readonly authz: Authorizer }>();
  const objects = {
    policy: (id: string) => aclPolicyGet(o.store, new WatchSet(), id).value ?? undefined,
    role: (id: string) => aclRoleGet(o.store, new WatchSet(), id).value ?? undefined,
  };
  /** Changes with any write to the tokens, policies or roles (their index-table entries). */
  const version = () => ["acl-tokens", "acl-policies", "acl-roles"].map((t) => o.store.db.indexes.get(t) ?? 0).join(",");

  const secretOf = (token: string | undefined) => (token === undefined || token === "" ? (o.defaultToken() || ANONYMOUS_TOKEN_SECRET) : token);
  const localToken = (secret: string) => {
    const t = aclTokenGetBySecret(o.store, new WatchSet(), secret).value;
    return t && !(t.ExpirationTime !== undefined && Date.parse(t.ExpirationTime) <= o.clock.now()) ? t : undefined;
  };
  /** Whether a token not held here is asked of the primary (Consul: no token replication, or none replicated yet). */
  const asksPrimary = () => !!o.remote && (!o.remote.tokenReplication || (o.store.db.indexes.get("acl-tokens") ?? 0) === 0);
  /** Authorizers of tokens resolved through the primary by `resolve`, by secret (bounded like `cache`). */
  const remoteAuthz = new Map<string, Authorizer>();

  const authorizer = (token: string | undefined): Authorizer => {
    const secret = secretOf(token);
    if (ROOT_TOKEN_NAMES.has(secret)) throw new ConnectError(ROOT_ACL, Code.PermissionDenied);
    const v = version();
    const hit = cache.get(secret);
    // Expiry is checked on every use: a cached authorizer must not outlive its token.
    const t = localToken(secret);
    if (!t) {
      const remote = asksPrimary() ? remoteAuthz.get(secret) : undefined;
      if (remote) return remote;
      throw new ConnectError(ACL_NOT_FOUND, Code.PermissionDenied);
    }
    if (hit && hit.version === v) return hit.authz;
    const authz = tokenAuthorizer(t, objects, { datacenter: o.datacenter, defaultPolicy: o.defaultPolicy, cache: policies });
    cache.delete(secret);
    cache.set(secret, { version: v, authz });
    if (cache.size > CACHE_SIZE) cache.delete(cache.keys().next().value!);
    return authz;
  };

  return {
    async resolve(token) {
      if (!o.remote) return;
      const secret = secretOf(token);
      if (ROOT_TOKEN_NAMES.has(secret) || localToken(secret) || !asksPrimary()) return;
      let authz: Authorizer;
      try {
        authz = await o.remote.resolver.authorizer(secret);
      } catch (err) {
        remoteAuthz.delete(secret);
        if (err instanceof AclResolveError) throw new ConnectError(err.message, err.statusCode === 403 ? Code.PermissionDenied : Code.Internal);
        throw err;
      }
      remoteAuthz.delete(secret);
      remoteAuthz.set(secret, authz);
      if (remoteAuthz.size > CACHE_SIZE) remoteAuthz.delete(remoteAuthz.keys().next().value!);
    },
    authorizer,
    checkCommand(cmd, token) {
      const a = authorizer(token);
      if (cmd.type === "txn") {
        const errors = txnDenials(cmd.ops, a);
        return errors.length ? { type: "txn", Results: null, Errors: errors } : undefined;
      }
      const denial = commandDenial(cmd, a, o.store);
      if (denial !== undefined) throw new ConnectError(denial, denial === "Permission denied" ? Code.PermissionDenied : Code.InvalidArgument);
      return undefined;
    },
    filterRead(q, value, token) {
      const d = authorizeRead(q, value, authorizer(token), { enableKeyListPolicy: o.enableKeyListPolicy });
      if ("denied" in d) throw new ConnectError(d.denied, Code.PermissionDenied);
      return d.value;
    },
    require(token, resource, access, segment) {
      if (authorizer(token).check(resource, access, segment) !== "allow") throw new ConnectError(PERMISSION_DENIED, Code.PermissionDenied);
    },
  };
}
