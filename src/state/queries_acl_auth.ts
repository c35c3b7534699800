/**
 * The auth method and binding rule reads of src/model/reads.ts (Consul 1.8 ACL.AuthMethodRead/List,
 * ACL.BindingRuleRead/List, and the method lookup of ACL.Login), run against the state store. The
 * serving server dispatches these five read types here (src/server/run_read.ts). Each watches its
 * table's index; values are the stored objects (read-only). Who may read them is src/acl's decision
 * (enforce_reads.ts): acl:read, except `auth-method-login`, which shows only Name and Type.
 */
import type { ReadQuery } from "../model/index.ts";
import { aclAuthMethodGet, aclAuthMethodList, aclBindingRuleGet, aclBindingRuleList } from "./queries_acl.ts";
import type { StateStore } from "./store.ts";
import type { QueryResult, WatchSet } from "./watch.ts";

/** The read types served by runAclAuthRead. */
export const ACL_AUTH_READ_TYPES = ["auth-method-get", "auth-method-list", "binding-rule-get", "binding-rule-list", "auth-method-login"] as const;

export type AclAuthQuery = Extract<ReadQuery, { type: (typeof ACL_AUTH_READ_TYPES)[number] }>;

/** Whether `q` is one of the reads runAclAuthRead serves. */
export function isAclAuthRead(q: ReadQuery): q is AclAuthQuery {
  return (ACL_AUTH_READ_TYPES as readonly string[]).includes(q.type);
}

export function runAclAuthRead(store: StateStore, ws: WatchSet, q: AclAuthQuery): QueryResult<unknown> {
  switch (q.type) {
    case "auth-method-get":
      return aclAuthMethodGet(store, ws, q.name);
    case "auth-method-list":
      return aclAuthMethodList(store, ws);
    case "binding-rule-get":
      return aclBindingRuleGet(store, ws, q.id);
    case "binding-rule-list":
      return aclBindingRuleList(store, ws, q.authMethod || undefined);
    case "auth-method-login": {
      const r = aclAuthMethodGet(store, ws, q.name);
      return { index: r.index, value: r.value ? { Name: r.value.Name, Type: r.value.Type } : null };
    }
  }
}
