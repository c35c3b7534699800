import { describe, expect, test } from "bun:test";
import { GLOBAL_MANAGEMENT_POLICY_ID, GLOBAL_MANAGEMENT_RULES, type AclPolicy, type AclRole, type AclTokenRecord } from "../model/index.ts";
import { seededRng } from "../platform/index.ts";
import { AclRequestError, buildPolicyWrite, buildRoleWrite, buildTokenClone, buildTokenCreate, buildTokenUpdate, type AclRequestContext } from "./requests.ts";

const NOW = Date.parse("2026-12-03T12:00:00Z");
const policy = (ID: string, Name: string, Rules = ""): AclPolicy => ({ ID, Name, Description: "", Rules, Hash: "", CreateIndex: 1, ModifyIndex: 1 });
const role = (ID: string, Name: string): AclRole => ({ ID, Name, Description: "", Hash: "", CreateIndex: 1, ModifyIndex: 1 });
const P1 = "11111111-1111-4111-8111-111111111111";
const R1 = "22222222-2222-4222-8222-222222222222";
const T1 = "33333333-3333-4333-8333-333333333333";
const existingToken: AclTokenRecord = {
  AccessorID: T1, SecretID: "44444444-4444-4444-8444-444444444444", Description: "old", Local: false, CreateTime: "2026-01-01T00:00:00.000Z", Hash: "",
  ExpirationTime: "2026-12-03T13:00:00.000Z", Policies: [{ ID: P1, Name: "" }], CreateIndex: 5, ModifyIndex: 5,
};

function ctx(seed = 1): AclRequestContext {
  const rng = seededRng(seed);
  const policies = [policy(P1, "ops"), policy(GLOBAL_MANAGEMENT_POLICY_ID, "global-management", GLOBAL_MANAGEMENT_RULES)];
  const roles = [role(R1, "dev")];
  const hex = (n: number) => Array.from({ length: n }, () => "0123456789abcdef"[rng.int(16)]).join("");
  return {
    lookup: {
      tokenByAccessor: (id) => (id.toLowerCase() === T1 ? existingToken : undefined),
      tokenBySecret: (s) => (s === existingToken.SecretID ? existingToken : undefined),
      policyById: (id) => policies.find((p) => p.ID === id.toLowerCase()),
      policyByName: (n) => policies.find((p) => p.Name.toLowerCase() === n.toLowerCase()),
      roleById: (id) => roles.find((r) => r.ID === id.toLowerCase()),
      roleByName: (n) => roles.find((r) => r.Name.toLowerCase() === n.toLowerCase()),
      authMethod: () => undefined,
    },
    newUuid: () => `${hex(8)}-${hex(4)}-4${hex(3)}-8${hex(3)}-${hex(12)}`,
    now: () => NOW,
  };
}

const refused = (f: () => unknown) => {
  try {
    f();
  } catch (err) {
    expect(err).toBeInstanceOf(AclRequestError);
    return (err as Error).message;
  }
  throw new Error("not refused");
};

describe("token writes", () => {
  test("create: IDs generated, links by name or ID resolved, de-duplicated and stored without names; identities sorted and merged", () => {
    const t = buildTokenCreate({
      Description: "d", Policies: [{ Name: "OPS" }, { ID: P1 }], Roles: [{ Name: "dev" }],
      ServiceIdentities: [{ ServiceName: "web", Datacenters: ["dc1"] }, { ServiceName: "api" }, { ServiceName: "web", Datacenters: ["dc2"] }],
      NodeIdentities: [{ NodeName: "n1", Datacenter: "dc1" }, { NodeName: "n1", Datacenter: "dc1" }], ExpirationTTLMs: 3_600_000,
    }, ctx());
    expect(t.AccessorID).toMatch(/^[0-9a-f-]{36}$/);
    expect(t.SecretID).not.toBe(t.AccessorID);
    expect(t.Policies).toEqual([{ ID: P1, Name: "" }]);
    expect(t.Roles).toEqual([{ ID: R1, Name: "" }]);
    expect(t.ServiceIdentities).toEqual([{ ServiceName: "api" }, { ServiceName: "web", Datacenters: ["dc1", "dc2"] }]);
    expect(t.NodeIdentities).toEqual([{ NodeName: "n1", Datacenter: "dc1" }]);
    expect([t.CreateTime, t.ExpirationTime]).toEqual(["2026-12-03T12:00:00.000Z", "2026-12-03T13:00:00.000Z"]);
    expect(t.Hash).toMatch(/^[A-Za-z0-9+/]{43}=$/);
    expect(buildTokenCreate({ Description: "d", Policies: [{ ID: P1 }] }, ctx(2)).Hash).not.toBe(buildTokenCreate({ Description: "e", Policies: [{ ID: P1 }] }, ctx(2)).Hash);
  });

  test("create refusals, with Consul's texts", () => {
    expect(refused(() => buildTokenCreate({ AccessorID: "nope" }, ctx()))).toBe("Invalid Token: AccessorID is not a valid UUID");
    expect(refused(() => buildTokenCreate({ SecretID: "00000000-0000-0000-0000-000000000009" }, ctx()))).toBe('Invalid Token: UUIDs with the prefix "00000000-0000-0000-0000-0000000000" are reserved');
    expect(refused(() => buildTokenCreate({ AccessorID: existingToken.SecretID }, ctx()))).toBe("Invalid Token: AccessorID is already in use");
    expect(refused(() => buildTokenCreate({ Policies: [{ Name: "nope" }] }, ctx()))).toBe('No such ACL policy with name "nope"');
    expect(refused(() => buildTokenCreate({ Roles: [{ ID: P1 }] }, ctx()))).toBe(`No such ACL role with ID "${P1}"`);
    expect(refused(() => buildTokenCreate({ ServiceIdentities: [{ ServiceName: "Web" }] }, ctx()))).toBe(`Service identity "Web" has an invalid name. Only alphanumeric characters, '-' and '_' are allowed`);
    expect(refused(() => buildTokenCreate({ Local: true, ServiceIdentities: [{ ServiceName: "web", Datacenters: ["dc1"] }] }, ctx()))).toBe('Service identity "web" cannot specify a list of datacenters on a local token');
    expect(refused(() => buildTokenCreate({ NodeIdentities: [{ NodeName: "n1", Datacenter: "" }] }, ctx()))).toBe("Node identity is missing the datacenter field on this token");
    expect(refused(() => buildTokenCreate({ ExpirationTTLMs: -1000 }, ctx()))).toBe("Token Expiration TTL '-1s' should be > 0");
    expect(refused(() => buildTokenCreate({ ExpirationTTLMs: 1000, ExpirationTime: "2026-12-03T13:00:00Z" }, ctx()))).toBe("Token Expiration TTL and Expiration Time cannot both be set");
    expect(refused(() => buildTokenCreate({ ExpirationTTLMs: 25 * 3_600_000 }, ctx()))).toBe("ExpirationTime cannot be more than 24h0m0s in the future (was 25h0m0s)");
    expect(refused(() => buildTokenCreate({ ExpirationTTLMs: 30_000 }, ctx()))).toBe("ExpirationTime cannot be less than 1m0s in the future (was 30s)");
    expect(refused(() => buildTokenCreate({ Rules: `key "" { policy = "read" }` }, ctx()))).toBe("Rules cannot be specified for this token");
  });

  test("update keeps the secret, locality, auth method, expiration and CreateTime; refuses changing them", () => {
    const t = buildTokenUpdate({ AccessorID: T1, Description: "new", Policies: [{ Name: "ops" }] }, ctx());
    expect(t).toMatchObject({ AccessorID: T1, SecretID: existingToken.SecretID, Description: "new", CreateTime: existingToken.CreateTime, ExpirationTime: existingToken.ExpirationTime });
    expect(refused(() => buildTokenUpdate({ AccessorID: "x" }, ctx()))).toBe("AccessorID is not a valid UUID");
    expect(refused(() => buildTokenUpdate({ AccessorID: P1 }, ctx()))).toBe(`Cannot find token "${P1}"`);
    expect(refused(() => buildTokenUpdate({ AccessorID: T1, SecretID: P1 }, ctx()))).toBe("Changing a tokens SecretID is not permitted");
    expect(refused(() => buildTokenUpdate({ AccessorID: T1, Local: true }, ctx()))).toBe(`cannot toggle local mode of ${T1}`);
    expect(refused(() => buildTokenUpdate({ AccessorID: T1, ExpirationTime: "2026-12-03T14:00:00Z" }, ctx()))).toBe(`Cannot change expiration time of ${T1}`);
    const expired = { ...ctx(), now: () => Date.parse("2026-12-04T00:00:00Z") };
    expect(refused(() => buildTokenUpdate({ AccessorID: T1 }, expired))).toBe(`Cannot find token "${T1}"`);
  });

  test("clone: a new identity with the source's links, locality and expiration time; not for auth-method or legacy tokens", () => {
    const c = buildTokenClone(existingToken, undefined, ctx());
    expect(c.AccessorID).not.toBe(T1);
    expect(c).toMatchObject({ Description: "old", Policies: [{ ID: P1, Name: "" }], ExpirationTime: existingToken.ExpirationTime, Local: false });
    expect(refused(() => buildTokenClone({ ...existingToken, AuthMethod: "k8s" }, "x", ctx()))).toBe("Cannot clone a token created from an auth method");
    expect(refused(() => buildTokenClone({ ...existingToken, Rules: "key {}" }, "x", ctx()))).toBe("Cannot clone a legacy ACL with this endpoint");
  });
});

describe("policy and role writes", () => {
  test("policies: names checked and unique; rules must parse; global-management keeps its rules; updates need an existing ID", () => {
    const p = buildPolicyWrite({ Name: "web", Rules: `service "web" { policy = "write" }`, Datacenters: ["dc1"] }, ctx());
    expect(p).toMatchObject({ Name: "web", Datacenters: ["dc1"] });
    expect(p.ID).toMatch(/^[0-9a-f-]{36}$/);
    expect(refused(() => buildPolicyWrite({ Name: "" }, ctx()))).toBe("Invalid Policy: no Name is set");
    expect(refused(() => buildPolicyWrite({ Name: "a b" }, ctx()))).toBe("Invalid Policy: invalid Name. Only alphanumeric characters, '-' and '_' are allowed");
    expect(refused(() => buildPolicyWrite({ Name: "OPS" }, ctx()))).toBe('Invalid Policy: A Policy with Name "OPS" already exists');
    expect(refused(() => buildPolicyWrite({ Name: "x", Rules: `key "a" { policy = "bogus" }` }, ctx()))).toBe('Invalid key policy: segment "a", policy "bogus"');
    expect(refused(() => buildPolicyWrite({ ID: "x", Name: "y" }, ctx()))).toBe("Policy ID invalid UUID");
    expect(refused(() => buildPolicyWrite({ ID: R1, Name: "y" }, ctx()))).toBe(`cannot find policy ${R1}`);
    expect(refused(() => buildPolicyWrite({ ID: GLOBAL_MANAGEMENT_POLICY_ID, Name: "global-management", Rules: "" }, ctx()))).toBe("Changing the Rules for the builtin global-management policy is not permitted");
    expect(buildPolicyWrite({ ID: GLOBAL_MANAGEMENT_POLICY_ID, Name: "renamed", Rules: GLOBAL_MANAGEMENT_RULES }, ctx()).Name).toBe("renamed");
  });

  test("roles: names, uniqueness and policy links", () => {
    const r = buildRoleWrite({ Name: "db", Policies: [{ Name: "ops" }], ServiceIdentities: [{ ServiceName: "db" }] }, ctx());
    expect(r).toMatchObject({ Name: "db", Policies: [{ ID: P1, Name: "" }], ServiceIdentities: [{ ServiceName: "db" }] });
    expect(refused(() => buildRoleWrite({ Name: "DEV" }, ctx()))).toBe('Invalid Role: A Role with Name "DEV" already exists');
    expect(refused(() => buildRoleWrite({ Name: "x", Policies: [{ ID: R1 }] }, ctx()))).toBe(`No such ACL policy with ID "${R1}"`);
    expect(refused(() => buildRoleWrite({ Name: "x", ServiceIdentities: [{ ServiceName: "" }] }, ctx()))).toBe("Service identity is missing the service name field on this role");
  });
});
