/**
 * ACL queries (Consul 1.8 agent/consul/state/acl.go: ACLTokenGetBySecret/ByAccessor, ACLTokenList,
 * ACLPolicyGetByID/ByName, ACLPolicyList, ACLRole*, ACLAuthMethod*, ACLBindingRule*, CanBootstrapACLToken).
 * Each reports and watches its table's index. Values are the stored objects: read-only. Links are stored
 * by ID: `withLinkNames` fills in the current names and drops links to deleted objects, as Consul does at
 * read time. Expiry is the caller's (it knows the time).
 */
import type { AclAuthMethod, AclBindingRule, AclLink, AclPolicy, AclRole, AclTokenRecord } from "../model/index.ts";
import { inKeyOrder, maxIndex } from "./query_common.ts";
import type { StateStore } from "./store.ts";
import { lower } from "./tables.ts";
import { INDEX, topic } from "./topics.ts";
import type { QueryResult, WatchSet } from "./watch.ts";

function read<T>(store: StateStore, ws: WatchSet, table: string, value: T): QueryResult<T> {
  ws.addTopic(store.hub, topic.index(table));
  return { index: maxIndex(store.db, table), value };
}

export function aclTokenGetBySecret(store: StateStore, ws: WatchSet, secret: string): QueryResult<AclTokenRecord | null> {
  const acl = store.db.acl;
  const key = acl.tokenSecrets.get(secret);
  return read(store, ws, INDEX.aclTokens, key === undefined ? null : acl.tokens.get(key) ?? null);
}

export function aclTokenGetByAccessor(store: StateStore, ws: WatchSet, accessor: string): QueryResult<AclTokenRecord | null> {
  return read(store, ws, INDEX.aclTokens, store.db.acl.tokens.get(lower(accessor)) ?? null);
}

/** Filters of ACLTokenList: exact policy or role ID, auth method name, and which localities. */
export interface AclTokenFilter {
  readonly policy?: string;
  readonly role?: string;
  readonly authMethod?: string;
  readonly local?: boolean;
  readonly global?: boolean;
}

const hasLink = (links: readonly AclLink[] | undefined, id: string) => (links ?? []).some((l) => lower(l.ID) === lower(id));

/** Tokens in accessor order matching every filter given (local and global both included by default). */
export function aclTokenList(store: StateStore, ws: WatchSet, f: AclTokenFilter = {}): QueryResult<readonly AclTokenRecord[]> {
  const tokens = inKeyOrder(store.db.acl.tokens).filter((t) =>
    (f.policy === undefined || hasLink(t.Policies, f.policy)) &&
    (f.role === undefined || hasLink(t.Roles, f.role)) &&
    (f.authMethod === undefined || (t.AuthMethod !== undefined && lower(t.AuthMethod) === lower(f.authMethod))) &&
    (t.Local ? f.local !== false : f.global !== false)
  );
  return read(store, ws, INDEX.aclTokens, tokens);
}

export function aclPolicyGet(store: StateStore, ws: WatchSet, id: string): QueryResult<AclPolicy | null> {
  return read(store, ws, INDEX.aclPolicies, store.db.acl.policies.get(lower(id)) ?? null);
}

export function aclPolicyGetByName(store: StateStore, ws: WatchSet, name: string): QueryResult<AclPolicy | null> {
  const acl = store.db.acl;
  const key = acl.policyNames.get(lower(name));
  return read(store, ws, INDEX.aclPolicies, key === undefined ? null : acl.policies.get(key) ?? null);
}

export function aclPolicyList(store: StateStore, ws: WatchSet): QueryResult<readonly AclPolicy[]> {
  return read(store, ws, INDEX.aclPolicies, inKeyOrder(store.db.acl.policies));
}

export function aclRoleGet(store: StateStore, ws: WatchSet, id: string): QueryResult<AclRole | null> {
  return read(store, ws, INDEX.aclRoles, store.db.acl.roles.get(lower(id)) ?? null);
}

export function aclRoleGetByName(store: StateStore, ws: WatchSet, name: string): QueryResult<AclRole | null> {
  const acl = store.db.acl;
  const key = acl.roleNames.get(lower(name));
  return read(store, ws, INDEX.aclRoles, key === undefined ? null : acl.roles.get(key) ?? null);
}

/** Roles in ID order, those linking `policy` only when it is given. */
export function aclRoleList(store: StateStore, ws: WatchSet, policy?: string): QueryResult<readonly AclRole[]> {
  const roles = inKeyOrder(store.db.acl.roles).filter((r) => policy === undefined || hasLink(r.Policies, policy));
  return read(store, ws, INDEX.aclRoles, roles);
}

export function aclAuthMethodGet(store: StateStore, ws: WatchSet, name: string): QueryResult<AclAuthMethod | null> {
  return read(store, ws, INDEX.aclAuthMethods, store.db.acl.authMethods.get(lower(name)) ?? null);
}

export function aclAuthMethodList(store: StateStore, ws: WatchSet): QueryResult<readonly AclAuthMethod[]> {
  return read(store, ws, INDEX.aclAuthMethods, inKeyOrder(store.db.acl.authMethods));
}

export function aclBindingRuleGet(store: StateStore, ws: WatchSet, id: string): QueryResult<AclBindingRule | null> {
  return read(store, ws, INDEX.aclBindingRules, store.db.acl.bindingRules.get(lower(id)) ?? null);
}

/** Binding rules in ID order, those of `authMethod` only when it is given. */
export function aclBindingRuleList(store: StateStore, ws: WatchSet, authMethod?: string): QueryResult<readonly AclBindingRule[]> {
  const rules = inKeyOrder(store.db.acl.bindingRules).filter((r) => authMethod === undefined || lower(r.AuthMethod) === lower(authMethod));
  return read(store, ws, INDEX.aclBindingRules, rules);
}

/** CanBootstrapACLToken: whether bootstrap is still allowed, and the index it was used up at (the reset index). */
export function aclBootstrapState(store: StateStore): { readonly allowed: boolean; readonly resetIndex: number } {
  const done = store.db.indexes.get(INDEX.aclBootstrap);
  return { allowed: done === undefined, resetIndex: done ?? 0 };
}

/**
 * A token or role with its links' current names, links to deleted policies and roles dropped (empty
 * lists left out, as Consul's omitempty does).
 */
export function withLinkNames<T extends Pick<AclTokenRecord, "Policies" | "Roles">>(store: StateStore, x: T): T {
  const acl = store.db.acl;
  const named = (links: readonly AclLink[] | undefined, rows: ReadonlyMap<string, { readonly ID: string; readonly Name: string }>) =>
    (links ?? []).flatMap((l) => {
      const row = rows.get(lower(l.ID));
      return row ? [{ ID: row.ID, Name: row.Name }] : [];
    });
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(x)) {
    if (k !== "Policies" && k !== "Roles") out[k] = v;
    else {
      const links = named(v as readonly AclLink[] | undefined, k === "Policies" ? acl.policies : acl.roles);
      if (links.length) out[k] = links;
    }
  }
  return out as T;
}
