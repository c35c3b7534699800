/**
 * ACL enforcement on a server (Consul 1.8's ResolveToken on the servers that hold the ACL state): a
 * request's token resolves to an authorizer from this server's replicated state, and every command
 * and read the server serves on the request's behalf is checked with it (src/acl's commandDenial and
 * authorizeRead). Resolution: no token is the server's default token (`acl.tokens.default`, else the
 * anonymous token); an unknown or expired secret is "ACL not found" (403); the root names are
 * "Cannot resolve root ACL". Authorizers are cached by secret until a token, policy or role changes.
 */
import { Code, ConnectError } from "@connectrpc/connect";
import {
  authorizeRead, commandDenial, ParsedPolicyCache, PERMISSION_DENIED, ROOT_TOKEN_NAMES, tokenAuthorizer, txnDenials, type AclAccess, type AclResource, type Authorizer,
} from "../acl/index.ts";
import { ANONYMOUS_TOKEN_SECRET, type ReadQuery, type ReadValue } from "../model/index.ts";
import type { Clock } from "../platform/index.ts";
import { aclPolicyGet, aclRoleGet, aclTokenGetBySecret, WatchSet, type StateCommand, type StateResult, type StateStore } from "../state/index.ts";

export interface AclEnforcementOptions {
  readonly store: StateStore;
  readonly datacenter: string;
  readonly defaultPolicy: "allow" | "deny";
  /** `acl.tokens.default` ("" for the anonymous token). */
  readonly defaultToken: string;
  readonly enableKeyListPolicy: boolean;
  readonly clock: Clock;
}

export const ACL_NOT_FOUND = "ACL not found";
export const ROOT_ACL = "Cannot resolve root ACL";
/** Authorizers kept (Consul's authorizer LRU is 1024). */
const CACHE_SIZE = 1024;

export interface AclEnforcement {
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

  const authorizer = (token: string | undefined): Authorizer => {
    const secret = token === undefined || token === "" ? (o.defaultToken || ANONYMOUS_TOKEN_SECRET) : token;
    if (ROOT_TOKEN_NAMES.has(secret)) throw new ConnectError(ROOT_ACL, Code.PermissionDenied);
    const v = version();
    const hit = cache.get(secret);
    const t = aclTokenGetBySecret(o.store, new WatchSet(), secret).value;
    // Expiry is checked on every use: a cached authorizer must not outlive its token.
    if (!t || (t.ExpirationTime !== undefined && Date.parse(t.ExpirationTime) <= o.clock.now())) throw new ConnectError(ACL_NOT_FOUND, Code.PermissionDenied);
    if (hit && hit.version === v) return hit.authz;
    const authz = tokenAuthorizer(t, objects, { datacenter: o.datacenter, defaultPolicy: o.defaultPolicy, cache: policies });
    cache.delete(secret);
    cache.set(secret, { version: v, authz });
    if (cache.size > CACHE_SIZE) cache.delete(cache.keys().next().value!);
    return authz;
  };

  return {
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
