import { describe, expect, test } from "bun:test";
import type { AclAuthMethod, AclBindingRule, ReadQuery, ReadValue } from "../model/index.ts";
import { chainAuthorizers, policyAuthorizer, staticAuthorizer } from "./authorizer.ts";
import { authorizeRead } from "./enforce_reads.ts";
import { AclRequestError } from "./requests.ts";
import { buildAuthMethodWrite, buildBindingRuleWrite, type BindingRuleContext, type BindingRuleInput } from "./requests_auth.ts";
import { parseRules } from "./rules_parse.ts";

const k8s: AclAuthMethod = { Name: "k8s", Type: "kubernetes", Description: "", CreateIndex: 1, ModifyIndex: 1 };
const jwt: AclAuthMethod = { Name: "jwt", Type: "jwt", Description: "", Config: { ClaimMappings: { sub: "user" } }, CreateIndex: 2, ModifyIndex: 2 };
const refusal = (f: () => unknown) => {
  try {
    f();
  } catch (err) {
    if (err instanceof AclRequestError) return err.message;
    throw err;
  }
  return "accepted";
};

describe("auth method writes", () => {
  const build = (input: Parameters<typeof buildAuthMethodWrite>[0], existing?: AclAuthMethod, inPrimaryDatacenter = true) =>
    refusal(() => buildAuthMethodWrite(input, { existing, inPrimaryDatacenter }));

  test("name, type, TTL and locality are checked with Consul's messages", () => {
    expect(build({ Type: "kubernetes" })).toBe("Invalid Auth Method: no Name is set");
    expect(build({ Name: "a b", Type: "kubernetes" })).toBe("Invalid Auth Method: invalid Name. Only alphanumeric characters, '-' and '_' are allowed");
    expect(build({ Name: "m", Type: "oidc" })).toBe("Invalid Auth Method: Type should be one of: [jwt kubernetes]");
    expect(build({ Name: "m" })).toBe("Invalid Auth Method: Type should be one of: [jwt kubernetes]");
    expect(build({ Name: "k8s", Type: "jwt" }, k8s)).toBe("the Type field of an Auth Method is immutable");
    expect(build({ Name: "m", Type: "jwt", MaxTokenTTLNs: 25 * 3600e9 })).toBe("MaxTokenTTL 25h0m0s cannot be more than 24h0m0s");
    expect(build({ Name: "m", Type: "jwt", MaxTokenTTLNs: 30e9 })).toBe("MaxTokenTTL 30s cannot be less than 1m0s");
    expect(build({ Name: "m", Type: "jwt", TokenLocality: "everywhere" })).toBe("Invalid Auth Method: TokenLocality should be one of 'local' or 'global'");
    expect(build({ Name: "m", Type: "jwt", TokenLocality: "global" }, undefined, false)).toBe("Invalid Auth Method: TokenLocality 'global' can only be used in the primary datacenter");
  });

  test("an update may omit the type; optional fields are kept only when set; the TTL is stored as Go prints it", () => {
    expect(buildAuthMethodWrite({ Name: "k8s", Description: "d" }, { existing: k8s, inPrimaryDatacenter: true })).toEqual({ Name: "k8s", Type: "kubernetes", Description: "d" });
    expect(buildAuthMethodWrite({ Name: "m", Type: "jwt", DisplayName: "M", MaxTokenTTLNs: 90 * 60e9, TokenLocality: "global", Config: { A: 1 } }, { existing: undefined, inPrimaryDatacenter: true }))
      .toEqual({ Name: "m", Type: "jwt", DisplayName: "M", Description: "", MaxTokenTTL: "1h30m0s", TokenLocality: "global", Config: { A: 1 } });
  });
});

describe("binding rule writes", () => {
  const existing: AclBindingRule = { ID: "0b5e9a1c-8d6f-4f51-9d3a-2c4e6f7a8b9c", Description: "", AuthMethod: "k8s", Selector: "", BindType: "service", BindName: "web", CreateIndex: 3, ModifyIndex: 3 };
  const ctx = (more: Partial<BindingRuleContext> = {}): BindingRuleContext => ({
    existing: undefined, authMethod: (n) => [k8s, jwt].find((m) => m.Name.toLowerCase() === n.toLowerCase()), ruleExists: () => false,
    newUuid: () => "1b5e9a1c-8d6f-4f51-9d3a-2c4e6f7a8b9c", checkSelector: (_m, s) => (s.includes("??") ? "bad selector" : undefined), ...more,
  });
  const build = (input: BindingRuleInput, more: Partial<BindingRuleContext> = {}) => refusal(() => buildBindingRuleWrite(input, ctx(more)));
  const ok = { AuthMethod: "k8s", BindType: "service", BindName: "web" };

  test("create: a fresh ID; the method must exist; selector, bind type and bind name checked", () => {
    expect(buildBindingRuleWrite(ok, ctx())).toEqual({ ID: "1b5e9a1c-8d6f-4f51-9d3a-2c4e6f7a8b9c", Description: "", AuthMethod: "k8s", Selector: "", BindType: "service", BindName: "web" });
    expect(build({ ...ok, AuthMethod: "" })).toBe("Invalid Binding Rule: no AuthMethod is set");
    expect(build({ ...ok, AuthMethod: "nope" })).toBe('cannot find auth method with name "nope"');
    expect(build({ ...ok, Selector: "x ??" })).toBe("invalid Binding Rule: Selector is invalid: bad selector");
    expect(build({ ...ok, BindType: "" })).toBe("Invalid Binding Rule: no BindType is set");
    expect(build({ ...ok, BindName: "" })).toBe("Invalid Binding Rule: no BindName is set");
    expect(build({ ...ok, BindType: "user" })).toBe('Invalid Binding Rule: unknown BindType "user"');
    expect(build({ ...ok, BindName: "Web!" })).toBe("Invalid Binding Rule: invalid BindName");
    expect(build({ ...ok, BindName: "${serviceaccount.nope}" })).toBe("Invalid Binding Rule: invalid BindName: unknown variable accessed: serviceaccount.nope");
  });

  test("bind names use the method's projected variables; roles allow role names", () => {
    expect(build({ ...ok, BindName: "svc-${serviceaccount.name}" })).toBe("accepted");
    expect(build({ AuthMethod: "jwt", BindType: "service", BindName: "${value.user}" })).toBe("accepted");
    expect(build({ AuthMethod: "jwt", BindType: "service", BindName: "${serviceaccount.name}" })).toBe("Invalid Binding Rule: invalid BindName: unknown variable accessed: serviceaccount.name");
    expect(build({ ...ok, BindType: "role", BindName: "Admins" })).toBe("accepted");
    expect(build({ ...ok, BindType: "service", BindName: "Admins" })).toBe("Invalid Binding Rule: invalid BindName");
  });

  test("update: the ID must be a UUID of an existing rule; its method may be omitted, not changed", () => {
    expect(build({ ...ok, ID: "nope" })).toBe("Binding Rule ID invalid UUID");
    expect(build({ ...ok, ID: existing.ID })).toBe(`cannot find binding rule ${existing.ID}`);
    expect(build({ ...ok, ID: existing.ID, AuthMethod: "jwt" }, { existing })).toBe("the AuthMethod field of an Binding Rule is immutable");
    expect(buildBindingRuleWrite({ ID: existing.ID, BindType: "role", BindName: "ops" }, ctx({ existing }))).toMatchObject({ ID: existing.ID, AuthMethod: "k8s", BindType: "role" });
  });
});

describe("who may read auth methods and binding rules", () => {
  const authz = (rules: string) => chainAuthorizers([policyAuthorizer(parseRules(rules)), staticAuthorizer("deny")]);
  const read = <Q extends ReadQuery>(rules: string, q: Q, v: unknown) => authorizeRead(q, v as ReadValue<Q>, authz(rules), { enableKeyListPolicy: false });

  test("acl:read for methods and rules; the login view of a method needs nothing", () => {
    for (const q of [{ type: "auth-method-get", name: "k8s" }, { type: "auth-method-list" }, { type: "binding-rule-get", id: "x" }, { type: "binding-rule-list" }] as const) {
      expect(read(`acl = "read"`, q, [])).toEqual({ value: [] });
      expect(read(`operator = "write"`, q, [])).toEqual({ denied: "Permission denied" });
    }
    expect(read(``, { type: "auth-method-login", name: "k8s" }, { Name: "k8s", Type: "kubernetes" })).toEqual({ value: { Name: "k8s", Type: "kubernetes" } });
  });
});
