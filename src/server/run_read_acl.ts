/**
 * The ACL reads (src/model/reads.ts "acl-*") on the serving server: tokens with their links named and
 * expired ones left out (as Consul treats them: not found), policies, roles, the write context of the
 * ACL builders, and the bootstrap state. Each watches the tables it read.
 */
import type { AclTokenRecord, ReadQuery } from "../model/index.ts";
import {
  aclAuthMethodList, aclBootstrapState, aclPolicyGet, aclPolicyGetByName, aclPolicyList, aclRoleGet, aclRoleGetByName, aclRoleList, aclTokenGetByAccessor,
  aclTokenGetBySecret, aclTokenList, withLinkNames, type QueryResult, type StateStore, type WatchSet,
} from "../state/index.ts";

/** The `acl-*` reads served from the store (the replication status comes from the leader's routine instead). */
type AclQuery = Exclude<Extract<ReadQuery, { type: `acl-${string}` }>, { type: "acl-replication-status" }>;

/** The highest index of the tables a token's authorizer depends on. */
const maxIndex = (store: StateStore) => Math.max(...["acl-tokens", "acl-policies", "acl-roles"].map((t) => store.db.indexes.get(t) ?? 0));

export function runAclRead(store: StateStore, ws: WatchSet, q: AclQuery, nowMs: number): QueryResult<unknown> {
  const live = (t: AclTokenRecord | null) => (t && (t.ExpirationTime === undefined || Date.parse(t.ExpirationTime) > nowMs) ? withLinkNames(store, t) : null);
  // Link names come from the policy and role tables: a rename there changes what a token read shows.
  const watchLinks = () => {
    aclPolicyList(store, ws);
    aclRoleList(store, ws);
  };
  switch (q.type) {
    case "acl-token-get": {
      watchLinks();
      const r = aclTokenGetByAccessor(store, ws, q.accessor);
      return { index: r.index, value: live(r.value) };
    }
    case "acl-token-self": {
      watchLinks();
      const r = aclTokenGetBySecret(store, ws, q.secret);
      return { index: r.index, value: live(r.value) };
    }
    case "acl-token-list": {
      watchLinks();
      const r = aclTokenList(store, ws, { ...(q.policy ? { policy: q.policy } : {}), ...(q.role ? { role: q.role } : {}), ...(q.authMethod ? { authMethod: q.authMethod } : {}) });
      return { index: r.index, value: r.value.map(live).filter((t) => t !== null) };
    }
    case "acl-policy-get":
      return q.id !== undefined ? aclPolicyGet(store, ws, q.id) : aclPolicyGetByName(store, ws, q.name ?? "");
    case "acl-policy-list":
      return aclPolicyList(store, ws);
    case "acl-role-get": {
      const r = q.id !== undefined ? aclRoleGet(store, ws, q.id) : aclRoleGetByName(store, ws, q.name ?? "");
      watchLinks();
      return { index: r.index, value: r.value ? withLinkNames(store, r.value) : null };
    }
    case "acl-role-list": {
      const r = aclRoleList(store, ws, q.policy);
      watchLinks();
      return { index: r.index, value: r.value.map((x) => withLinkNames(store, x)) };
    }
    case "acl-write-context": {
      const policies = aclPolicyList(store, ws);
      const roles = aclRoleList(store, ws);
      const methods = aclAuthMethodList(store, ws);
      const tokens = q.ids.flatMap((id) => [aclTokenGetByAccessor(store, ws, id).value, aclTokenGetBySecret(store, ws, id).value]).filter((t): t is AclTokenRecord => t !== null);
      return {
        index: Math.max(policies.index, roles.index, methods.index),
        value: { policies: policies.value, roles: roles.value, authMethods: methods.value, tokens },
      };
    }
    case "acl-token-resolve": {
      watchLinks();
      const t = live(aclTokenGetBySecret(store, ws, q.secret).value);
      if (!t) return { index: maxIndex(store), value: null };
      const roles = (t.Roles ?? []).map((l) => aclRoleGet(store, ws, l.ID).value).filter((r) => r !== null);
      const ids = new Set([...(t.Policies ?? []), ...roles.flatMap((r) => r.Policies ?? [])].map((l) => l.ID.toLowerCase()));
      const policies = [...ids].map((id) => aclPolicyGet(store, ws, id).value).filter((p) => p !== null);
      return { index: maxIndex(store), value: { token: t, policies, roles } };
    }
    case "acl-bootstrap-state": {
      const tokens = aclTokenList(store, ws); // the bootstrap entry moves with the tokens table
      return { index: tokens.index, value: aclBootstrapState(store) };
    }
  }
}
