/**
 * The ACL tables (Consul 1.8's memdb acl-tokens, acl-policies, acl-roles, acl-auth-methods and
 * acl-binding-rules) with their unique secondary indexes. Keys: token accessors, policy, role and rule
 * IDs (UUIDs) and auth method names lowercase; policy and role names lowercase (memdb's Lowercase name
 * indexes); token secrets exact. Raw operations keep the indexes in step and nothing else (tx.ts adds
 * undo and watches).
 */
import type { AclAuthMethod, AclBindingRule, AclPolicy, AclRole, AclTokenRecord } from "../model/index.ts";

const lower = (s: string): string => s.toLowerCase();

/** The table names, as keys of AclTables and as index-table entries. */
export type AclTableName = "tokens" | "policies" | "roles" | "authMethods" | "bindingRules";

export class AclTables {
  /** lower(AccessorID) -> token. */
  readonly tokens = new Map<string, AclTokenRecord>();
  /** SecretID -> lower(AccessorID). */
  readonly tokenSecrets = new Map<string, string>();
  /** lower(ID) -> policy. */
  readonly policies = new Map<string, AclPolicy>();
  /** lower(Name) -> lower(ID). */
  readonly policyNames = new Map<string, string>();
  readonly roles = new Map<string, AclRole>();
  readonly roleNames = new Map<string, string>();
  /** lower(Name) -> auth method. */
  readonly authMethods = new Map<string, AclAuthMethod>();
  /** lower(ID) -> binding rule. */
  readonly bindingRules = new Map<string, AclBindingRule>();

  putToken(t: AclTokenRecord): void {
    const key = lower(t.AccessorID);
    this.deleteToken(key);
    this.tokens.set(key, t);
    this.tokenSecrets.set(t.SecretID, key);
  }

  deleteToken(key: string): void {
    const old = this.tokens.get(key);
    if (!old) return;
    this.tokens.delete(key);
    if (this.tokenSecrets.get(old.SecretID) === key) this.tokenSecrets.delete(old.SecretID);
  }

  putPolicy(p: AclPolicy): void {
    const key = lower(p.ID);
    this.deletePolicy(key);
    this.policies.set(key, p);
    this.policyNames.set(lower(p.Name), key);
  }

  deletePolicy(key: string): void {
    const old = this.policies.get(key);
    if (!old) return;
    this.policies.delete(key);
    if (this.policyNames.get(lower(old.Name)) === key) this.policyNames.delete(lower(old.Name));
  }

  putRole(r: AclRole): void {
    const key = lower(r.ID);
    this.deleteRole(key);
    this.roles.set(key, r);
    this.roleNames.set(lower(r.Name), key);
  }

  deleteRole(key: string): void {
    const old = this.roles.get(key);
    if (!old) return;
    this.roles.delete(key);
    if (this.roleNames.get(lower(old.Name)) === key) this.roleNames.delete(lower(old.Name));
  }

  putAuthMethod(m: AclAuthMethod): void {
    this.authMethods.set(lower(m.Name), m);
  }

  deleteAuthMethod(key: string): void {
    this.authMethods.delete(key);
  }

  putBindingRule(r: AclBindingRule): void {
    this.bindingRules.set(lower(r.ID), r);
  }

  deleteBindingRule(key: string): void {
    this.bindingRules.delete(key);
  }
}
