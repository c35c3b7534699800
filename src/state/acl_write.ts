/**
 * ACL writes inside a Tx (Consul 1.8 agent/consul/state/acl.go: aclTokenSetTxn, ACLBootstrap,
 * aclPolicySetTxn, aclRoleSetTxn, the auth method and binding rule writes, and their deletes), with
 * Consul's messages. What needs randomness, time or the request's context (IDs, secrets, CreateTime,
 * Hash, expiration, who may do it) is the proposer's: these check only what the state can tell.
 */
import {
  ANONYMOUS_TOKEN_ACCESSOR_ID, GLOBAL_MANAGEMENT_POLICY_ID, GLOBAL_MANAGEMENT_RULES, type AclAuthMethod, type AclBindingRule, type AclLink, type AclPolicy,
  type AclRole, type AclTokenRecord,
} from "../model/index.ts";
import type { AclAuthMethodWrite, AclBindingRuleWrite, AclPolicyWrite, AclRoleWrite, AclTokenWrite } from "./commands.ts";
import { lower } from "./tables.ts";
import { INDEX } from "./topics.ts";
import { StateError, type Tx } from "./tx.ts";

const put = {
  token: (tx: Tx, key: string, v: AclTokenRecord | undefined) => {
    const a = tx.db.acl;
    tx.aclChange((x) => a.putToken(x), (k) => a.deleteToken(k), a.tokens, key, v, INDEX.aclTokens);
  },
  policy: (tx: Tx, key: string, v: AclPolicy | undefined) => {
    const a = tx.db.acl;
    tx.aclChange((x) => a.putPolicy(x), (k) => a.deletePolicy(k), a.policies, key, v, INDEX.aclPolicies);
  },
  role: (tx: Tx, key: string, v: AclRole | undefined) => {
    const a = tx.db.acl;
    tx.aclChange((x) => a.putRole(x), (k) => a.deleteRole(k), a.roles, key, v, INDEX.aclRoles);
  },
  method: (tx: Tx, key: string, v: AclAuthMethod | undefined) => {
    const a = tx.db.acl;
    tx.aclChange((x) => a.putAuthMethod(x), (k) => a.deleteAuthMethod(k), a.authMethods, key, v, INDEX.aclAuthMethods);
  },
  rule: (tx: Tx, key: string, v: AclBindingRule | undefined) => {
    const a = tx.db.acl;
    tx.aclChange((x) => a.putBindingRule(x), (k) => a.deleteBindingRule(k), a.bindingRules, key, v, INDEX.aclBindingRules);
  },
};

/** Links must name existing objects (resolveTokenPolicyLinks / resolveTokenRoleLinks), unless replicating. */
function checkLinks(links: readonly AclLink[] | undefined, rows: ReadonlyMap<string, unknown>, what: "policy" | "role", allowMissing: boolean): void {
  if (allowMissing) return;
  for (const l of links ?? []) if (!rows.has(lower(l.ID))) throw new StateError(`No such ${what} with ID: ${l.ID}`);
}

function checkIdentities(x: Pick<AclTokenRecord, "ServiceIdentities" | "NodeIdentities">, holder: "Token" | "Role"): void {
  for (const s of x.ServiceIdentities ?? []) if (!s.ServiceName) throw new StateError(`Encountered a ${holder} with an empty service identity name in the state store`);
  for (const n of x.NodeIdentities ?? []) if (!n.NodeName) throw new StateError(`Encountered a ${holder} with an empty node identity name in the state store`);
}

/**
 * aclTokenSetTxn for one token. With `cas`: written only when its ModifyIndex is 0 and none exists, or
 * equals the stored one; otherwise skipped (false). Returns whether it wrote.
 */
export function setAclToken(tx: Tx, t: AclTokenWrite, o: { cas?: boolean; allowMissingLinks?: boolean } = {}): boolean {
  if (!t.SecretID) throw new StateError("Missing ACL Token SecretID");
  if (!t.AccessorID) throw new StateError("Missing ACL Token AccessorID");
  const acl = tx.db.acl;
  const key = lower(t.AccessorID);
  const existing = acl.tokens.get(key);
  if (o.cas) {
    const want = t.ModifyIndex ?? 0;
    if (want === 0 ? existing !== undefined : existing?.ModifyIndex !== want) return false;
  }
  const secretOwner = acl.tokenSecrets.get(t.SecretID);
  if (secretOwner !== undefined && secretOwner !== key) throw new StateError("Updating an existing ACL token's AccessorID is not permitted");
  if (existing && existing.SecretID !== t.SecretID) throw new StateError("Changing a tokens SecretID is not permitted");
  if (existing && (existing.AuthMethod ?? "") !== (t.AuthMethod ?? "")) throw new StateError("Changing a tokens auth method is not permitted");
  checkLinks(t.Policies, acl.policies, "policy", o.allowMissingLinks === true);
  checkLinks(t.Roles, acl.roles, "role", o.allowMissingLinks === true);
  if (t.AuthMethod && !acl.authMethods.has(lower(t.AuthMethod))) throw new StateError(`No such auth method with Name: ${t.AuthMethod}`);
  checkIdentities(t, "Token");
  const { ModifyIndex: _cas, ...fields } = t;
  put.token(tx, key, { ...fields, CreateIndex: existing?.CreateIndex ?? tx.idx, ModifyIndex: tx.idx });
  tx.bumpIndex(INDEX.aclTokens);
  return true;
}

/** aclTokenDeleteTxn by accessor; missing: no-op; the anonymous token is refused. */
export function deleteAclToken(tx: Tx, accessorId: string): void {
  if (lower(accessorId) === ANONYMOUS_TOKEN_ACCESSOR_ID) throw new StateError("Deletion of the builtin anonymous token is not permitted");
  const key = lower(accessorId);
  if (!tx.db.acl.tokens.has(key)) return;
  put.token(tx, key, undefined);
  tx.bumpIndex(INDEX.aclTokens);
}

/** ACLBootstrap: the token, and the bootstrap marked done at this index; refused once done unless `resetIndex` names that index. */
export function aclBootstrap(tx: Tx, t: AclTokenWrite, resetIndex: number): void {
  const done = tx.db.indexes.get(INDEX.aclBootstrap);
  if (done !== undefined) {
    if (resetIndex === 0) throw new StateError("ACL bootstrap no longer allowed");
    if (resetIndex !== done) throw new StateError("Invalid ACL bootstrap reset index");
  }
  setAclToken(tx, t);
  tx.bumpIndex(INDEX.aclBootstrap);
}

/** aclPolicySetTxn. */
export function setAclPolicy(tx: Tx, p: AclPolicyWrite): void {
  if (!p.ID) throw new StateError("Missing ACL Policy ID");
  if (!p.Name) throw new StateError("Missing ACL Policy Name");
  const acl = tx.db.acl;
  const key = lower(p.ID);
  const named = acl.policyNames.get(lower(p.Name));
  if (named !== undefined && named !== key) throw new StateError(`A policy with name ${JSON.stringify(p.Name)} already exists`);
  if (key === GLOBAL_MANAGEMENT_POLICY_ID) {
    if (p.Rules !== GLOBAL_MANAGEMENT_RULES) throw new StateError("Changing the Rules for the builtin global-management policy is not permitted");
    if (p.Datacenters && p.Datacenters.length > 0) throw new StateError("Changing the Datacenters of the builtin global-management policy is not permitted");
  }
  put.policy(tx, key, { ...p, CreateIndex: acl.policies.get(key)?.CreateIndex ?? tx.idx, ModifyIndex: tx.idx });
  tx.bumpIndex(INDEX.aclPolicies);
}

export function deleteAclPolicy(tx: Tx, id: string): void {
  const key = lower(id);
  if (key === GLOBAL_MANAGEMENT_POLICY_ID) throw new StateError("Deletion of the builtin global-management policy is not permitted");
  if (!tx.db.acl.policies.has(key)) return;
  put.policy(tx, key, undefined);
  tx.bumpIndex(INDEX.aclPolicies);
}

/** aclRoleSetTxn. */
export function setAclRole(tx: Tx, r: AclRoleWrite, allowMissingLinks = false): void {
  if (!r.ID) throw new StateError("Missing ACL Role ID");
  if (!r.Name) throw new StateError("Missing ACL Role Name");
  const acl = tx.db.acl;
  const key = lower(r.ID);
  const named = acl.roleNames.get(lower(r.Name));
  if (named !== undefined && named !== key) throw new StateError(`A role with name ${JSON.stringify(r.Name)} already exists`);
  checkLinks(r.Policies, acl.policies, "policy", allowMissingLinks);
  checkIdentities(r, "Role");
  put.role(tx, key, { ...r, CreateIndex: acl.roles.get(key)?.CreateIndex ?? tx.idx, ModifyIndex: tx.idx });
  tx.bumpIndex(INDEX.aclRoles);
}

export function deleteAclRole(tx: Tx, id: string): void {
  const key = lower(id);
  if (!tx.db.acl.roles.has(key)) return;
  put.role(tx, key, undefined);
  tx.bumpIndex(INDEX.aclRoles);
}

export function setAclAuthMethod(tx: Tx, m: AclAuthMethodWrite): void {
  if (!m.Name) throw new StateError("Missing auth method name");
  if (!m.Type) throw new StateError("Missing auth method type");
  const key = lower(m.Name);
  put.method(tx, key, { ...m, CreateIndex: tx.db.acl.authMethods.get(key)?.CreateIndex ?? tx.idx, ModifyIndex: tx.idx });
  tx.bumpIndex(INDEX.aclAuthMethods);
}

/** Deletes a method with its binding rules and the tokens it made (aclAuthMethodDeleteTxn); missing: no-op. */
export function deleteAclAuthMethod(tx: Tx, name: string): void {
  const acl = tx.db.acl;
  const key = lower(name);
  if (!acl.authMethods.has(key)) return;
  for (const [k, r] of [...acl.bindingRules]) if (lower(r.AuthMethod) === key) deleteAclBindingRule(tx, k);
  for (const [k, t] of [...acl.tokens]) {
    if (t.AuthMethod !== undefined && lower(t.AuthMethod) === key) {
      put.token(tx, k, undefined);
      tx.bumpIndex(INDEX.aclTokens);
    }
  }
  put.method(tx, key, undefined);
  tx.bumpIndex(INDEX.aclAuthMethods);
}

export function setAclBindingRule(tx: Tx, r: AclBindingRuleWrite): void {
  if (!r.ID) throw new StateError("Missing binding rule ID");
  if (!r.AuthMethod) throw new StateError("Missing binding rule auth method");
  if (!tx.db.acl.authMethods.has(lower(r.AuthMethod))) throw new StateError("failed inserting acl binding rule: auth method not found");
  const key = lower(r.ID);
  put.rule(tx, key, { ...r, CreateIndex: tx.db.acl.bindingRules.get(key)?.CreateIndex ?? tx.idx, ModifyIndex: tx.idx });
  tx.bumpIndex(INDEX.aclBindingRules);
}

export function deleteAclBindingRule(tx: Tx, id: string): void {
  const key = lower(id);
  if (!tx.db.acl.bindingRules.has(key)) return;
  put.rule(tx, key, undefined);
  tx.bumpIndex(INDEX.aclBindingRules);
}
