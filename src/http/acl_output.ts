/**
 * ACL objects in Consul 1.8's JSON (agent/structs/acl.go field order and omitempty rules): tokens (the
 * legacy Type never shown), token list stubs (no SecretID in 1.8, `Legacy` when it has Rules), policies
 * (`Datacenters` null when none), policy stubs (no Rules), roles, legacy ACLs (`structs.ACL`). Hash is
 * base64, as Go writes []byte.
 */
import type { LegacyAcl } from "../acl/index.ts";
import type { AclPolicy, AclRole, AclTokenRecord } from "../model/index.ts";

const some = <T>(list: readonly T[] | undefined, key: string) => (list && list.length ? { [key]: list } : {});

export function tokenJson(t: AclTokenRecord): Record<string, unknown> {
  return {
    AccessorID: t.AccessorID,
    SecretID: t.SecretID,
    Description: t.Description,
    ...some(t.Policies, "Policies"),
    ...some(t.Roles, "Roles"),
    ...some(t.ServiceIdentities, "ServiceIdentities"),
    ...some(t.NodeIdentities, "NodeIdentities"),
    ...(t.Rules ? { Rules: t.Rules } : {}),
    Local: t.Local,
    ...(t.AuthMethod ? { AuthMethod: t.AuthMethod } : {}),
    ...(t.ExpirationTime ? { ExpirationTime: t.ExpirationTime } : {}),
    CreateTime: t.CreateTime,
    Hash: t.Hash,
    CreateIndex: t.CreateIndex,
    ModifyIndex: t.ModifyIndex,
  };
}

export function tokenStubJson(t: AclTokenRecord): Record<string, unknown> {
  const { SecretID: _s, Rules: _r, ...rest } = tokenJson(t);
  return { ...rest, Legacy: Boolean(t.Rules) };
}

export function policyJson(p: AclPolicy): Record<string, unknown> {
  return {
    ID: p.ID, Name: p.Name, Description: p.Description, Rules: p.Rules, Datacenters: p.Datacenters && p.Datacenters.length ? p.Datacenters : null,
    Hash: p.Hash, CreateIndex: p.CreateIndex, ModifyIndex: p.ModifyIndex,
  };
}

export function policyStubJson(p: AclPolicy): Record<string, unknown> {
  const { Rules: _r, ...rest } = policyJson(p);
  return rest;
}

export function roleJson(r: AclRole): Record<string, unknown> {
  return {
    ID: r.ID, Name: r.Name, Description: r.Description, ...some(r.Policies, "Policies"), ...some(r.ServiceIdentities, "ServiceIdentities"),
    ...some(r.NodeIdentities, "NodeIdentities"), Hash: r.Hash, CreateIndex: r.CreateIndex, ModifyIndex: r.ModifyIndex,
  };
}

/** A legacy token as `structs.ACL`: ID (the secret), Name, Type, Rules, then its Raft indexes. */
export function legacyAclJson(a: LegacyAcl): Record<string, unknown> {
  return { ID: a.ID, Name: a.Name, Type: a.Type, Rules: a.Rules, CreateIndex: a.CreateIndex, ModifyIndex: a.ModifyIndex };
}
