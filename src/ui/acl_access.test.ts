import { describe, expect, test } from "bun:test";
import { GLOBAL_MANAGEMENT_POLICY_ID } from "../model/index.ts";
import {
  checkConfirmed, checkPolicyForm, checkRoleForm, checkTokenForm, loginTarget, mayWriteAcls, refusalOf, type PolicyView, type RoleView, type TokenView,
} from "./acl_access.ts";
import { ApiError } from "./page.ts";

const P_READ = "11111111-1111-4111-8111-111111111111";
const P_WRITE = "22222222-2222-4222-8222-222222222222";
const P_DC2 = "33333333-3333-4333-8333-333333333333";
const R_ADMIN = "44444444-4444-4444-8444-444444444444";

const policy = (ID: string, Rules: string, Datacenters: string[] | null = null): PolicyView => ({ ID, Name: ID.slice(0, 4), Description: "", Rules, Datacenters, CreateIndex: 1, ModifyIndex: 1 });
const POLICIES = new Map([[P_READ, policy(P_READ, 'acl = "read"')], [P_WRITE, policy(P_WRITE, 'acl = "write"\nkey_prefix "" { policy = "read" }')], [P_DC2, policy(P_DC2, 'acl = "write"', ["dc2"])]]);
const ROLES = new Map<string, RoleView>([[R_ADMIN, { ID: R_ADMIN, Name: "admin", Description: "", Policies: [{ ID: P_WRITE, Name: "w" }], CreateIndex: 1, ModifyIndex: 1 }]]);
const token = (o: Partial<TokenView>): TokenView => ({ AccessorID: "a", Description: "", Local: false, CreateIndex: 1, ModifyIndex: 1, ...o });
const may = (t: TokenView, dc = "dc1") => mayWriteAcls(t, (id) => POLICIES.get(id), (id) => ROLES.get(id), dc);

describe("whether a token may write ACLs", () => {
  test("global-management writes, even when its policy cannot be read", () => {
    expect(mayWriteAcls(token({ Policies: [{ ID: GLOBAL_MANAGEMENT_POLICY_ID, Name: "global-management" }] }), () => undefined, () => undefined, "dc1")).toBe(true);
  });
  test("acl = read does not write; acl = write does, directly or through a role", () => {
    expect(may(token({ Policies: [{ ID: P_READ, Name: "r" }] }))).toBe(false);
    expect(may(token({ Policies: [{ ID: P_WRITE, Name: "w" }] }))).toBe(true);
    expect(may(token({ Roles: [{ ID: R_ADMIN, Name: "admin" }] }))).toBe(true);
  });
  test("no policies, unreadable policies and policies of other datacenters grant nothing", () => {
    expect(may(token({}))).toBe(false);
    expect(may(token({ Policies: [{ ID: "55555555-5555-4555-8555-555555555555", Name: "gone" }] }))).toBe(false);
    expect(may(token({ Policies: [{ ID: P_DC2, Name: "dc2" }] }))).toBe(false);
    expect(may(token({ Policies: [{ ID: P_DC2, Name: "dc2" }] }), "dc2")).toBe(true);
  });
  test("a legacy token's own rules are read in the legacy syntax, which has no acl rule (as in Consul)", () => {
    expect(may(token({ Rules: 'acl = "write"' }))).toBe(false);
    expect(may(token({ Rules: 'key "" { policy = "write" }', Policies: [{ ID: P_WRITE, Name: "w" }] }))).toBe(true);
  });
});

describe("refusals, login targets and form checks", () => {
  test("refusals in the API's words", () => {
    expect(refusalOf(new ApiError(401, "ACL support disabled"))).toBe("off");
    expect(refusalOf(new ApiError(403, "ACL not found"))).toBe("not-found");
    expect(refusalOf(new ApiError(403, "Permission denied"))).toBe("denied");
    expect(refusalOf(new ApiError(500, "No path to datacenter"))).toBe("other");
  });
  test("a login leads back only to a page of the UI", () => {
    expect(loginTarget("/ui/dc1/acls/policies?s=x", "/ui/", "dc1")).toBe("/ui/dc1/acls/policies?s=x");
    for (const bad of [undefined, "", "https://evil.example/", "//evil.example/ui/", "/other/", "/ui//evil", "/ui/\\evil"]) {
      expect(loginTarget(bad, "/ui/", "dc1")).toBe("/ui/dc1/acls/tokens");
    }
  });
  test("a policy form: the name and the rules are checked and named; CRLF from a textarea becomes LF", () => {
    expect(checkPolicyForm({ name: "", rules: "" })).toMatchObject({ ok: false, field: "Name" });
    expect(checkPolicyForm({ name: "has space", rules: "" })).toMatchObject({ ok: false, field: "Name" });
    const rules = checkPolicyForm({ name: "p", rules: 'acl = "sideways"' });
    expect(rules).toMatchObject({ ok: false, field: "Rules" });
    expect((rules as { message: string }).message).toStartWith("Rules: ");
    expect(checkPolicyForm({ name: "p", rules: "", datacenters: ["dc1", "bad dc"] })).toMatchObject({ ok: false, field: "Datacenters" });
    expect(checkPolicyForm({ name: " ops ", description: "d", rules: 'acl = "read"\r\nkey_prefix "" {\r\n policy = "read"\r\n}', datacenters: "dc2" })).toEqual({
      ok: true, value: { Name: "ops", Description: "d", Rules: 'acl = "read"\nkey_prefix "" {\n policy = "read"\n}', Datacenters: ["dc2"] },
    });
    expect(checkPolicyForm({ name: "j", rules: '{"acl": "read"}' }).ok).toBe(true);
  });
  test("role, token and delete forms", () => {
    expect(checkRoleForm({ name: "ops", policies: [P_READ, P_WRITE] })).toEqual({ ok: true, value: { Name: "ops", Description: "", PolicyIDs: [P_READ, P_WRITE] } });
    expect(checkRoleForm({ name: "ops", policies: "not-an-id" })).toMatchObject({ ok: false, field: "Policies" });
    expect(checkRoleForm({ name: "" })).toMatchObject({ ok: false, field: "Name" });
    expect(checkTokenForm({ description: "ci", policies: P_READ, roles: [R_ADMIN], local: "on" })).toEqual({
      ok: true, value: { Description: "ci", PolicyIDs: [P_READ], RoleIDs: [R_ADMIN], Local: true },
    });
    expect(checkTokenForm({ roles: "x" })).toMatchObject({ ok: false, field: "Roles" });
    expect(checkTokenForm({ local: "yes" })).toMatchObject({ ok: false, field: "Scope" });
    expect(checkConfirmed({ confirm: "yes" }).ok).toBe(true);
    expect(checkConfirmed({})).toMatchObject({ ok: false, field: "Confirm" });
  });
});
