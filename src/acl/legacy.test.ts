import { describe, expect, test } from "bun:test";
import { GLOBAL_MANAGEMENT_POLICY_ID, type AclTokenRecord } from "../model/index.ts";
import { AclPermissionError, buildLegacySet, checkLegacyDelete, legacyAcl, LEGACY_CREATE_TIME, usesNonLegacyFields } from "./legacy.ts";
import { AclRequestError, type AclRequestContext } from "./requests.ts";
import { ParsedPolicyCache, tokenAuthorizer } from "./resolve.ts";

const record = (more: Partial<AclTokenRecord>): AclTokenRecord => ({
  AccessorID: "acc-1", SecretID: "sec-1", Description: "", Local: false, CreateTime: LEGACY_CREATE_TIME, Hash: "", CreateIndex: 5, ModifyIndex: 7, ...more,
});

function ctx(tokens: AclTokenRecord[] = []): AclRequestContext {
  let n = 0;
  return {
    lookup: {
      tokenByAccessor: (id) => tokens.find((t) => t.AccessorID === id), tokenBySecret: (s) => tokens.find((t) => t.SecretID === s),
      policyById: () => undefined, policyByName: () => undefined, roleById: () => undefined, roleByName: () => undefined, authMethod: () => undefined,
    },
    newUuid: () => `00000000-0000-4000-8000-${String(++n).padStart(12, "0")}`,
    now: () => 0,
  };
}

const thrown = (f: () => unknown): unknown => {
  try {
    f();
  } catch (e) {
    return e;
  }
  return undefined;
};

describe("legacy ACL tokens (ACL.Apply set, Convert, EmbeddedPolicy)", () => {
  test("create: a generated secret and accessor, Name as Description, client by default, zero CreateTime, hashed", () => {
    const t = buildLegacySet({ Name: "app", Rules: `key "app/" { policy = "write" }` }, ctx());
    expect(t).toMatchObject({ SecretID: "00000000-0000-4000-8000-000000000001", AccessorID: "00000000-0000-4000-8000-000000000002", Description: "app", Type: "client", Rules: `key "app/" { policy = "write" }`, Local: false, CreateTime: LEGACY_CREATE_TIME });
    expect(t.Policies).toBeUndefined();
    expect(t.Hash).toMatch(/^[A-Za-z0-9+/]{43}=$/);
    expect(buildLegacySet({ Name: "app", Rules: `key "app/" { policy = "read" }` }, ctx()).Hash).not.toBe(t.Hash);
  });

  test("create with a given ID (any string); a new management token is linked to global-management", () => {
    const t = buildLegacySet({ ID: "my-secret", Type: "management" }, ctx());
    expect(t).toMatchObject({ SecretID: "my-secret", Type: "management", Policies: [{ ID: GLOBAL_MANAGEMENT_POLICY_ID, Name: "" }] });
    expect("Rules" in t).toBe(false);
  });

  test("update: the existing token's accessor is kept; its fields are replaced; no link is added on update", () => {
    const existing = record({ SecretID: "s", AccessorID: "kept", Type: "client", Rules: `key "" { policy = "read" }` });
    const t = buildLegacySet({ ID: "s", Name: "renamed", Type: "management" }, ctx([existing]));
    expect(t).toMatchObject({ AccessorID: "kept", SecretID: "s", Description: "renamed", Type: "management" });
    expect(t.Policies).toBeUndefined();
    expect(t.Rules).toBeUndefined();
  });

  const refusals: [string, Parameters<typeof buildLegacySet>[0], AclTokenRecord[], string][] = [
    ["an unknown Type", { Type: "root" }, [], "Invalid ACL Type"],
    ["an empty Type (given explicitly)", { Type: "" }, [], "Invalid ACL Type"],
    ["a token of the new API", { ID: "s" }, [record({ SecretID: "s" })], "Cannot use legacy endpoint to modify a non-legacy token"],
    ["a legacy token with policy links (upgraded management)", { ID: "s" }, [record({ SecretID: "s", Type: "management", Policies: [{ ID: GLOBAL_MANAGEMENT_POLICY_ID, Name: "" }] })], "Cannot use legacy endpoint to modify a non-legacy token"],
    ["the anonymous token", { ID: "anonymous" }, [record({ SecretID: "anonymous" })], "Cannot use legacy endpoint to modify a non-legacy token"],
    ["current-syntax rules", { Rules: `key_prefix "" { policy = "read" }` }, [], `ACL rule compilation failed: Failed to parse ACL rules: At 1:1: unknown ACL resource "key_prefix"`],
    ["a bad level", { Rules: `service "" { policy = "all" }` }, [], `ACL rule compilation failed: Invalid service policy: segment "", policy "all"`],
  ];
  for (const [name, input, tokens, message] of refusals) {
    test(`refused: ${name}`, () => {
      const err = thrown(() => buildLegacySet(input, ctx(tokens)));
      expect(err).toBeInstanceOf(AclRequestError);
      expect((err as Error).message).toBe(message);
    });
  }

  test("root names are 403 Cannot modify root ACL; the anonymous token cannot be destroyed", () => {
    for (const id of ["allow", "deny", "manage"]) {
      const err = thrown(() => buildLegacySet({ ID: id }, ctx()));
      expect(err).toBeInstanceOf(AclPermissionError);
      expect((err as Error).message).toBe("Permission denied: Cannot modify root ACL");
    }
    expect((thrown(() => checkLegacyDelete("anonymous")) as Error).message).toBe("Permission denied: Cannot delete anonymous token");
    expect(thrown(() => checkLegacyDelete("other"))).toBeUndefined();
  });

  test("Convert: only tokens with a legacy Type are legacy ACLs", () => {
    expect(legacyAcl(record({ Type: "client", Description: "n", Rules: "r" }))).toEqual({ ID: "sec-1", Name: "n", Type: "client", Rules: "r", CreateIndex: 5, ModifyIndex: 7 });
    expect(legacyAcl(record({ Type: "management", Policies: [{ ID: GLOBAL_MANAGEMENT_POLICY_ID, Name: "" }] }))?.Rules).toBe("");
    expect(legacyAcl(record({}))).toBeUndefined();
  });

  test("UsesNonLegacyFields", () => {
    expect(usesNonLegacyFields(record({ Type: "client" }))).toBe(false);
    for (const more of [{}, { Type: "client" as const, Roles: [{ ID: "r", Name: "" }] }, { Type: "client" as const, ServiceIdentities: [{ ServiceName: "s" }] },
      { Type: "client" as const, NodeIdentities: [{ NodeName: "n", Datacenter: "dc1" }] }, { Type: "client" as const, ExpirationTime: "2030-01-01T00:00:00Z" },
      { Type: "client" as const, AuthMethod: "m" }]) {
      expect(usesNonLegacyFields(record(more))).toBe(true);
    }
  });
});

describe("a legacy token's authority (EmbeddedPolicy)", () => {
  const none = { policy: () => undefined, role: () => undefined };
  const authz = (t: Partial<AclTokenRecord>) => tokenAuthorizer(record(t), none, { datacenter: "dc1", defaultPolicy: "deny", cache: new ParsedPolicyCache() });

  test("management: global management without any policy link, its Rules ignored", () => {
    const a = authz({ Type: "management", Rules: `key "" { policy = "deny" }` });
    expect([a.check("acl", "write"), a.check("key", "write", "x"), a.check("operator", "write"), a.snapshot()]).toEqual(["allow", "allow", "allow", "allow"]);
  });

  test("client: its Rules in the legacy syntax, each rule a prefix rule; the rest falls to default_policy", () => {
    const a = authz({ Type: "client", Rules: `key "app/" { policy = "write" }\nservice "web" { policy = "read" }` });
    expect([a.check("key", "write", "app/x"), a.check("key", "read", "other"), a.check("service", "read", "web-2"), a.check("service", "write", "web"), a.check("acl", "read")])
      .toEqual(["allow", "deny", "allow", "deny", "deny"]);
  });

  test("client without Rules grants nothing; a token without Type keeps only its policies", () => {
    expect(authz({ Type: "client" }).check("key", "read", "x")).toBe("deny");
    expect(authz({}).check("acl", "read")).toBe("deny");
  });
});
