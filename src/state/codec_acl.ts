/**
 * Shape checks for the ACL commands and the snapshot's ACL rows: every field of a token, policy, role,
 * auth method and binding rule has its type, required ones are present, links are `{ID, Name}` strings,
 * identities have their names. Throws StateCommandError naming the path; returns the object as given
 * (`stored` rows also need CreateIndex and ModifyIndex).
 */
import type { AclAuthMethod, AclBindingRule, AclPolicy, AclRole, AclTokenRecord } from "../model/index.ts";
import { StateCommandError, type AclAuthMethodWrite, type AclBindingRuleWrite, type AclPolicyWrite, type AclRoleWrite, type AclTokenWrite, type StateCommand } from "./commands.ts";
import { checkRequired, checkShape, isObj, reqIndex, reqStr, type Obj } from "./codec_shapes.ts";

function bad(path: string, what: string): never {
  throw new StateCommandError(`invalid state command: ${path} ${what}`);
}

function obj(v: unknown, path: string): Obj {
  if (!isObj(v)) bad(path, "must be an object");
  return v;
}

function each(o: Obj, k: string, path: string, check: (x: Obj, path: string) => void): void {
  const v = o[k];
  if (v === undefined || v === null) return;
  if (!Array.isArray(v)) bad(`${path}.${k}`, "must be an array or null");
  v.forEach((x, i) => check(obj(x, `${path}.${k}[${i}]`), `${path}.${k}[${i}]`));
}

const link = (x: Obj, path: string) => checkRequired(x, path, { ID: "str", Name: "str" });
const serviceIdentity = (x: Obj, path: string) => {
  checkRequired(x, path, { ServiceName: "str" });
  checkShape(x, path, { Datacenters: "strArr" });
};
const nodeIdentity = (x: Obj, path: string) => checkRequired(x, path, { NodeName: "str", Datacenter: "str" });

function links(o: Obj, path: string, withPolicies = true): void {
  if (withPolicies) each(o, "Policies", path, link);
  each(o, "ServiceIdentities", path, serviceIdentity);
  each(o, "NodeIdentities", path, nodeIdentity);
}

function indexes(o: Obj, path: string, stored: boolean): void {
  if (stored) for (const k of ["CreateIndex", "ModifyIndex"]) reqIndex(o, k, path);
}

export function aclTokenShape(v: unknown, path: string, stored: true): AclTokenRecord;
export function aclTokenShape(v: unknown, path: string, stored: false): AclTokenWrite;
export function aclTokenShape(v: unknown, path: string, stored: boolean): AclTokenRecord | AclTokenWrite {
  const o = obj(v, path);
  checkRequired(o, path, { AccessorID: "str", SecretID: "str", Description: "str", Local: "bool", CreateTime: "str", Hash: "str" });
  checkShape(o, path, { Rules: "str", AuthMethod: "str", ExpirationTime: "str" });
  links(o, path);
  each(o, "Roles", path, link);
  if (o.Type !== undefined && o.Type !== "client" && o.Type !== "management") bad(`${path}.Type`, "must be client or management");
  if (!stored && o.ModifyIndex !== undefined) reqIndex(o, "ModifyIndex", path);
  indexes(o, path, stored);
  return o as unknown as AclTokenRecord;
}

export function aclPolicyShape(v: unknown, path: string, stored: boolean): AclPolicy {
  const o = obj(v, path);
  checkRequired(o, path, { ID: "str", Name: "str", Description: "str", Rules: "str", Hash: "str" });
  checkShape(o, path, { Datacenters: "strArr" });
  indexes(o, path, stored);
  return o as unknown as AclPolicy;
}

export function aclRoleShape(v: unknown, path: string, stored: boolean): AclRole {
  const o = obj(v, path);
  checkRequired(o, path, { ID: "str", Name: "str", Description: "str", Hash: "str" });
  links(o, path);
  indexes(o, path, stored);
  return o as unknown as AclRole;
}

export function aclAuthMethodShape(v: unknown, path: string, stored: boolean): AclAuthMethod {
  const o = obj(v, path);
  checkRequired(o, path, { Name: "str", Type: "str", Description: "str" });
  checkShape(o, path, { DisplayName: "str", MaxTokenTTL: "str", TokenLocality: "str", Config: "obj" });
  indexes(o, path, stored);
  return o as unknown as AclAuthMethod;
}

export function aclBindingRuleShape(v: unknown, path: string, stored: boolean): AclBindingRule {
  const o = obj(v, path);
  checkRequired(o, path, { ID: "str", Description: "str", AuthMethod: "str", Selector: "str", BindName: "str" });
  if (o.BindType !== "service" && o.BindType !== "role" && o.BindType !== "node") bad(`${path}.BindType`, "must be service, role or node");
  indexes(o, path, stored);
  return o as unknown as AclBindingRule;
}

function list<T>(raw: Obj, k: string, path: string, check: (v: unknown, path: string) => T): T[] {
  const v = raw[k];
  if (!Array.isArray(v)) bad(`${path}.${k}`, "must be an array");
  return v.map((x, i) => check(x, `${path}.${k}[${i}]`));
}

function strings(raw: Obj, k: string, path: string): string[] {
  const v = raw[k];
  if (!Array.isArray(v) || !v.every((x) => typeof x === "string")) bad(`${path}.${k}`, "must be an array of strings");
  return v as string[];
}

const flag = (raw: Obj, k: string, path: string) => {
  if (raw[k] !== undefined && typeof raw[k] !== "boolean") bad(`${path}.${k}`, "must be a boolean");
  return raw[k] === true ? { [k]: true } : {};
};

/** An `acl-*` command. */
export function decodeAclCommand(raw: Obj): StateCommand {
  const type = raw.type as string;
  const del = raw.op === "delete";
  if (type !== "acl-bootstrap" && !del && raw.op !== "set") bad(`${type}.op`, "must be set or delete");
  switch (type) {
    case "acl-token":
      if (del) return { type, op: "delete", accessorIds: strings(raw, "accessorIds", type) };
      return {
        type, op: "set", tokens: list(raw, "tokens", type, (v, p) => aclTokenShape(v, p, false)), ...flag(raw, "cas", type), ...flag(raw, "allowMissingLinks", type),
      };
    case "acl-bootstrap":
      return { type, token: aclTokenShape(raw.token, `${type}.token`, false), resetIndex: reqIndex(raw, "resetIndex", type) };
    case "acl-policy":
      if (del) return { type, op: "delete", ids: strings(raw, "ids", type) };
      return { type, op: "set", policies: list(raw, "policies", type, (v, p) => aclPolicyShape(v, p, false) as AclPolicyWrite) };
    case "acl-role":
      if (del) return { type, op: "delete", ids: strings(raw, "ids", type) };
      return { type, op: "set", roles: list(raw, "roles", type, (v, p) => aclRoleShape(v, p, false) as AclRoleWrite), ...flag(raw, "allowMissingLinks", type) };
    case "acl-auth-method":
      if (del) {
        reqStr(raw, "name", type);
        return { type, op: "delete", name: raw.name as string };
      }
      return { type, op: "set", method: aclAuthMethodShape(raw.method, `${type}.method`, false) as AclAuthMethodWrite };
    case "acl-binding-rule":
      if (del) {
        reqStr(raw, "id", type);
        return { type, op: "delete", id: raw.id as string };
      }
      return { type, op: "set", rule: aclBindingRuleShape(raw.rule, `${type}.rule`, false) as AclBindingRuleWrite };
    default:
      return bad("type", `${JSON.stringify(type)} is not a known command type`);
  }
}
