import { describe, expect, test } from "bun:test";
import { ANONYMOUS_TOKEN_ACCESSOR_ID, GLOBAL_MANAGEMENT_POLICY_ID, GLOBAL_MANAGEMENT_RULES } from "../model/index.ts";
import { simClock } from "../../test/harness/sim_clock.ts";
import { decodeCommand, encodeCommand } from "./codec.ts";
import type { AclPolicyWrite, AclRoleWrite, AclTokenWrite, StateCommand } from "./commands.ts";
import {
  aclAuthMethodList, aclBindingRuleList, aclBootstrapState, aclPolicyGetByName, aclRoleList, aclTokenGetByAccessor, aclTokenGetBySecret, aclTokenList, withLinkNames,
} from "./queries_acl.ts";
import { createStateStore, type StateStore } from "./store.ts";
import { WatchSet } from "./watch.ts";

const token = (n: number, more: Partial<AclTokenWrite> = {}): AclTokenWrite => ({
  AccessorID: `aaaaaaaa-0000-4000-8000-00000000000${n}`, SecretID: `ssssssss-0000-4000-8000-00000000000${n}`, Description: `t${n}`, Local: false,
  CreateTime: "2020-01-01T00:00:00Z", Hash: "h", ...more,
});
const policy = (id: string, name: string, more: Partial<AclPolicyWrite> = {}): AclPolicyWrite => ({ ID: id, Name: name, Description: "", Rules: "", Hash: "h", ...more });
const role = (id: string, name: string, more: Partial<AclRoleWrite> = {}): AclRoleWrite => ({ ID: id, Name: name, Description: "", Hash: "h", ...more });

function store() {
  const s = createStateStore({ clock: simClock() });
  let index = 0;
  /** Applies through the log codec, as every server does. */
  const apply = (cmd: StateCommand) => s.apply(++index, decodeCommand(encodeCommand(cmd)));
  return { s, apply, index: () => index };
}

const ws = () => new WatchSet();
const tokenOf = (s: StateStore, n: number) => aclTokenGetByAccessor(s, ws(), token(n).AccessorID).value;

describe("ACL tokens in the state", () => {
  test("set keeps CreateIndex on update; found by secret and accessor (case-insensitively); the table index moves", () => {
    const { s, apply } = store();
    expect(apply({ type: "acl-token", op: "set", tokens: [token(1)] })).toEqual({ type: "ok" });
    apply({ type: "acl-token", op: "set", tokens: [token(1, { Description: "changed" })] });
    expect(tokenOf(s, 1)).toMatchObject({ Description: "changed", CreateIndex: 1, ModifyIndex: 2 });
    expect(aclTokenGetBySecret(s, ws(), token(1).SecretID)).toMatchObject({ index: 2, value: { AccessorID: token(1).AccessorID } });
    expect(aclTokenGetByAccessor(s, ws(), token(1).AccessorID.toUpperCase()).value?.Description).toBe("changed");
    expect(aclTokenGetBySecret(s, ws(), token(1).SecretID.toUpperCase()).value).toBeNull(); // secrets are exact
  });

  test("a secret another accessor holds, a changed secret or auth method, and missing links are refused; a batch is all or nothing", () => {
    const { s, apply } = store();
    apply({ type: "acl-token", op: "set", tokens: [token(1)] });
    expect(apply({ type: "acl-token", op: "set", tokens: [token(2, { SecretID: token(1).SecretID })] })).toEqual({ type: "error", error: "Updating an existing ACL token's AccessorID is not permitted" });
    expect(apply({ type: "acl-token", op: "set", tokens: [token(1, { SecretID: token(3).SecretID })] })).toEqual({ type: "error", error: "Changing a tokens SecretID is not permitted" });
    expect(apply({ type: "acl-token", op: "set", tokens: [token(3, { Policies: [{ ID: "nope", Name: "x" }] })] })).toEqual({ type: "error", error: "No such policy with ID: nope" });
    expect(apply({ type: "acl-token", op: "set", tokens: [token(4), token(3, { Roles: [{ ID: "r", Name: "r" }] })] })).toEqual({ type: "error", error: "No such role with ID: r" });
    expect(tokenOf(s, 4)).toBeNull();
    expect(apply({ type: "acl-token", op: "set", tokens: [token(3, { Roles: [{ ID: "r", Name: "r" }] })], allowMissingLinks: true })).toEqual({ type: "ok" });
    expect(apply({ type: "acl-token", op: "set", tokens: [token(5, { AuthMethod: "k8s" })] })).toEqual({ type: "error", error: "No such auth method with Name: k8s" });
  });

  test("cas: written only when ModifyIndex is 0 and none exists, or matches; the anonymous token cannot be deleted", () => {
    const { s, apply } = store();
    expect(apply({ type: "acl-token", op: "set", tokens: [token(1)], cas: true })).toEqual({ type: "cas", ok: true });
    expect(apply({ type: "acl-token", op: "set", tokens: [token(1)], cas: true })).toEqual({ type: "cas", ok: false });
    expect(apply({ type: "acl-token", op: "set", tokens: [token(1, { ModifyIndex: 1, Description: "x" })], cas: true })).toEqual({ type: "cas", ok: true });
    expect(tokenOf(s, 1)?.Description).toBe("x");
    apply({ type: "acl-token", op: "set", tokens: [token(9, { AccessorID: ANONYMOUS_TOKEN_ACCESSOR_ID, SecretID: "anonymous" })] });
    expect(apply({ type: "acl-token", op: "delete", accessorIds: [ANONYMOUS_TOKEN_ACCESSOR_ID] })).toEqual({ type: "error", error: "Deletion of the builtin anonymous token is not permitted" });
    expect(apply({ type: "acl-token", op: "delete", accessorIds: [token(1).AccessorID, "missing"] })).toEqual({ type: "ok" });
    expect(tokenOf(s, 1)).toBeNull();
    expect(aclTokenGetBySecret(s, ws(), token(1).SecretID).value).toBeNull();
  });

  test("bootstrap once; again only with the reset index it was used up at", () => {
    const { s, apply } = store();
    expect(aclBootstrapState(s)).toEqual({ allowed: true, resetIndex: 0 });
    expect(apply({ type: "acl-bootstrap", token: token(1), resetIndex: 0 })).toEqual({ type: "ok" });
    expect(aclBootstrapState(s)).toEqual({ allowed: false, resetIndex: 1 });
    expect(apply({ type: "acl-bootstrap", token: token(2), resetIndex: 0 })).toEqual({ type: "error", error: "ACL bootstrap no longer allowed" });
    expect(apply({ type: "acl-bootstrap", token: token(2), resetIndex: 7 })).toEqual({ type: "error", error: "Invalid ACL bootstrap reset index" });
    expect(apply({ type: "acl-bootstrap", token: token(2), resetIndex: 1 })).toEqual({ type: "ok" });
    expect(aclBootstrapState(s)).toEqual({ allowed: false, resetIndex: 4 });
  });

  test("list filters: policy, role, auth method, locality", () => {
    const { s, apply } = store();
    apply({ type: "acl-policy", op: "set", policies: [policy("p1", "one")] });
    apply({ type: "acl-role", op: "set", roles: [role("r1", "rone")] });
    apply({ type: "acl-auth-method", op: "set", method: { Name: "k8s", Type: "kubernetes", Description: "" } });
    apply({ type: "acl-token", op: "set", tokens: [token(1, { Policies: [{ ID: "p1", Name: "one" }] }), token(2, { Roles: [{ ID: "R1", Name: "rone" }], Local: true }), token(3, { AuthMethod: "K8S" })] });
    const descs = (f: Parameters<typeof aclTokenList>[2]) => aclTokenList(s, ws(), f).value.map((t) => t.Description);
    expect([descs({}), descs({ policy: "P1" }), descs({ role: "r1" }), descs({ authMethod: "k8s" }), descs({ local: false }), descs({ global: false })]).toEqual([
      ["t1", "t2", "t3"], ["t1"], ["t2"], ["t3"], ["t1", "t3"], ["t2"],
    ]);
  });
});

describe("ACL policies, roles, auth methods, binding rules", () => {
  test("names are unique case-insensitively; renaming frees the old name; global-management keeps its rules and datacenters", () => {
    const { s, apply } = store();
    apply({ type: "acl-policy", op: "set", policies: [policy("p1", "Ops")] });
    expect(apply({ type: "acl-policy", op: "set", policies: [policy("p2", "ops")] })).toEqual({ type: "error", error: 'A policy with name "ops" already exists' });
    apply({ type: "acl-policy", op: "set", policies: [policy("p1", "ops2")] });
    expect(apply({ type: "acl-policy", op: "set", policies: [policy("p2", "Ops")] })).toEqual({ type: "ok" });
    expect(aclPolicyGetByName(s, ws(), "OPS2").value?.ID).toBe("p1");
    const gm = policy(GLOBAL_MANAGEMENT_POLICY_ID, "global-management", { Rules: GLOBAL_MANAGEMENT_RULES });
    expect(apply({ type: "acl-policy", op: "set", policies: [gm] })).toEqual({ type: "ok" });
    expect(apply({ type: "acl-policy", op: "set", policies: [{ ...gm, Name: "renamed", Description: "mine" }] })).toEqual({ type: "ok" });
    expect(apply({ type: "acl-policy", op: "set", policies: [{ ...gm, Rules: `operator = "read"` }] })).toEqual({ type: "error", error: "Changing the Rules for the builtin global-management policy is not permitted" });
    expect(apply({ type: "acl-policy", op: "set", policies: [{ ...gm, Datacenters: ["dc1"] }] })).toEqual({ type: "error", error: "Changing the Datacenters of the builtin global-management policy is not permitted" });
    expect(apply({ type: "acl-policy", op: "delete", ids: [GLOBAL_MANAGEMENT_POLICY_ID] })).toEqual({ type: "error", error: "Deletion of the builtin global-management policy is not permitted" });
  });

  test("links read with current names; links to deleted objects dropped; roles filter by policy", () => {
    const { s, apply } = store();
    apply({ type: "acl-policy", op: "set", policies: [policy("p1", "one"), policy("p2", "two")] });
    apply({ type: "acl-role", op: "set", roles: [role("r1", "rone", { Policies: [{ ID: "p1", Name: "one" }] })] });
    expect(apply({ type: "acl-role", op: "set", roles: [role("r2", "RONE")] })).toEqual({ type: "error", error: 'A role with name "RONE" already exists' });
    expect(apply({ type: "acl-role", op: "set", roles: [role("r2", "rtwo", { Policies: [{ ID: "p9", Name: "x" }] })] })).toEqual({ type: "error", error: "No such policy with ID: p9" });
    apply({ type: "acl-token", op: "set", tokens: [token(1, { Policies: [{ ID: "p1", Name: "old" }, { ID: "p2", Name: "two" }], Roles: [{ ID: "r1", Name: "rone" }] })] });
    apply({ type: "acl-policy", op: "set", policies: [policy("p1", "renamed")] });
    apply({ type: "acl-policy", op: "delete", ids: ["p2"] });
    const t = withLinkNames(s, tokenOf(s, 1)!);
    expect([t.Policies, t.Roles]).toEqual([[{ ID: "p1", Name: "renamed" }], [{ ID: "r1", Name: "rone" }]]);
    expect(Object.keys(t)).toEqual(Object.keys(tokenOf(s, 1)!)); // the links stay where they were
    expect(aclRoleList(s, ws(), "p1").value.map((r) => r.ID)).toEqual(["r1"]);
  });

  test("a binding rule needs its method; deleting a method deletes its rules and its tokens", () => {
    const { s, apply } = store();
    const rule = { ID: "b1", Description: "", AuthMethod: "k8s", Selector: "", BindType: "service" as const, BindName: "web" };
    expect(apply({ type: "acl-binding-rule", op: "set", rule })).toEqual({ type: "error", error: "failed inserting acl binding rule: auth method not found" });
    expect(apply({ type: "acl-auth-method", op: "set", method: { Name: "k8s", Type: "", Description: "" } })).toEqual({ type: "error", error: "Missing auth method type" });
    apply({ type: "acl-auth-method", op: "set", method: { Name: "k8s", Type: "kubernetes", Description: "" } });
    apply({ type: "acl-binding-rule", op: "set", rule });
    apply({ type: "acl-token", op: "set", tokens: [token(1, { AuthMethod: "k8s" }), token(2)] });
    expect(aclBindingRuleList(s, ws(), "K8S").value.map((r) => r.ID)).toEqual(["b1"]);
    apply({ type: "acl-auth-method", op: "delete", name: "k8s" });
    expect([aclAuthMethodList(s, ws()).value, aclBindingRuleList(s, ws()).value, aclTokenList(s, ws()).value.map((t) => t.Description)]).toEqual([[], [], ["t2"]]);
  });
});

describe("ACL commands on the log and in snapshots", () => {
  test("malformed commands are refused naming the path", () => {
    const bad = (raw: unknown) => () => decodeCommand(new TextEncoder().encode(JSON.stringify(raw)));
    expect(bad({ type: "acl-token", op: "set", tokens: [{ AccessorID: 1 }] })).toThrow("invalid state command: acl-token.tokens[0].AccessorID must be a string");
    expect(bad({ type: "acl-policy", op: "drop", ids: [] })).toThrow("invalid state command: acl-policy.op must be set or delete");
    expect(bad({ type: "acl-binding-rule", op: "set", rule: { ID: "b", Description: "", AuthMethod: "m", Selector: "", BindType: "user", BindName: "x" } })).toThrow("acl-binding-rule.rule.BindType must be service, role or node");
    expect(bad({ type: "acl-bootstrap", token: token(1), resetIndex: -1 })).toThrow("acl-bootstrap.resetIndex must be a non-negative integer");
  });

  test("a snapshot carries the ACL tables and restores them; a state without ACLs serialises without their keys", () => {
    const { s, apply } = store();
    const empty = new TextDecoder().decode(s.snapshot());
    expect(empty).not.toContain("acl");
    apply({ type: "acl-policy", op: "set", policies: [policy("p1", "one")] });
    apply({ type: "acl-auth-method", op: "set", method: { Name: "k8s", Type: "kubernetes", Description: "" } });
    apply({ type: "acl-token", op: "set", tokens: [token(1, { Policies: [{ ID: "p1", Name: "one" }], Type: "management" })] });
    apply({ type: "acl-bootstrap", token: token(2), resetIndex: 0 });
    const copy = createStateStore({ clock: simClock() });
    copy.restore(s.snapshot());
    expect(tokenOf(copy, 1)).toEqual(tokenOf(s, 1));
    expect(aclPolicyGetByName(copy, ws(), "one").value).toEqual(aclPolicyGetByName(s, ws(), "one").value);
    expect(aclBootstrapState(copy)).toEqual({ allowed: false, resetIndex: 4 });
    expect(new TextDecoder().decode(copy.snapshot())).toBe(new TextDecoder().decode(s.snapshot()));
  });
});
