import { describe, expect, test } from "bun:test";
import { simClock } from "../../test/harness/sim_clock.ts";
import { decodeCommand, encodeCommand } from "./codec.ts";
import type { AclBindingRuleWrite, StateCommand } from "./commands.ts";
import { isAclAuthRead, runAclAuthRead } from "./queries_acl_auth.ts";
import { aclTokenList } from "./queries_acl.ts";
import { createStateStore, type StateStore } from "./store.ts";
import { WatchSet } from "./watch.ts";

const rule = (id: string, method: string, more: Partial<AclBindingRuleWrite> = {}): AclBindingRuleWrite => ({
  ID: id, Description: "", AuthMethod: method, Selector: "", BindType: "service", BindName: "web", ...more,
});

function store() {
  const s = createStateStore({ clock: simClock() });
  let index = 0;
  const apply = (cmd: StateCommand) => s.apply(++index, decodeCommand(encodeCommand(cmd)));
  apply({ type: "acl-auth-method", op: "set", method: { Name: "k8s", Type: "kubernetes", Description: "", Config: { Host: "https://k8s", ServiceAccountJWT: "secret" } } });
  apply({ type: "acl-auth-method", op: "set", method: { Name: "jwt", Type: "jwt", Description: "j", MaxTokenTTL: "1h0m0s", TokenLocality: "global" } });
  apply({ type: "acl-binding-rule", op: "set", rule: rule("b2", "k8s") });
  apply({ type: "acl-binding-rule", op: "set", rule: rule("b1", "jwt", { BindType: "role", BindName: "ops", Selector: "value.user == x" }) });
  return { s, apply };
}

const run = (s: StateStore, q: Parameters<typeof runAclAuthRead>[2], ws = new WatchSet()) => runAclAuthRead(s, ws, q);

describe("auth method and binding rule reads", () => {
  test("get and list with their tables' indexes; rules filter by method case-insensitively; the login view has no Config", () => {
    const { s } = store();
    expect(run(s, { type: "auth-method-get", name: "K8S" })).toMatchObject({ index: 2, value: { Name: "k8s", CreateIndex: 1, ModifyIndex: 1 } });
    expect(run(s, { type: "auth-method-get", name: "nope" })).toEqual({ index: 2, value: null });
    expect((run(s, { type: "auth-method-list" }).value as { Name: string }[]).map((m) => m.Name)).toEqual(["jwt", "k8s"]);
    expect(run(s, { type: "binding-rule-get", id: "B1" })).toMatchObject({ index: 4, value: { ID: "b1", AuthMethod: "jwt" } });
    expect((run(s, { type: "binding-rule-list" }).value as { ID: string }[]).map((r) => r.ID)).toEqual(["b1", "b2"]);
    expect((run(s, { type: "binding-rule-list", authMethod: "K8s" }).value as { ID: string }[]).map((r) => r.ID)).toEqual(["b2"]);
    expect(run(s, { type: "auth-method-login", name: "k8s" })).toEqual({ index: 2, value: { Name: "k8s", Type: "kubernetes" } });
    expect(run(s, { type: "auth-method-login", name: "nope" }).value).toBeNull();
    expect(isAclAuthRead({ type: "binding-rule-list" })).toBe(true);
    expect(isAclAuthRead({ type: "acl-role-list" })).toBe(false);
  });

  test("each read watches its own table", () => {
    const { s } = store();
    const watched = (q: Parameters<typeof runAclAuthRead>[2]) => {
      const ws = new WatchSet();
      run(s, q, ws);
      return [...ws.topics].join(" ");
    };
    expect(watched({ type: "binding-rule-list", authMethod: "k8s" })).toContain("acl-binding-rules");
    expect(watched({ type: "binding-rule-get", id: "b1" })).toContain("acl-binding-rules");
    expect(watched({ type: "auth-method-login", name: "k8s" })).toContain("acl-auth-methods");
    expect(watched({ type: "auth-method-list" })).not.toContain("acl-binding-rules");
  });

  test("deleting a method deletes its rules and tokens only; a rule for a missing method writes nothing", () => {
    const { s, apply } = store();
    apply({
      type: "acl-token", op: "set", tokens: [
        { AccessorID: "a1", SecretID: "s1", Description: "from k8s", Local: true, AuthMethod: "k8s", CreateTime: "2020-01-01T00:00:00Z", Hash: "h" },
        { AccessorID: "a2", SecretID: "s2", Description: "plain", Local: false, CreateTime: "2020-01-01T00:00:00Z", Hash: "h" },
      ],
    });
    expect(apply({ type: "acl-binding-rule", op: "set", rule: rule("b3", "gone") })).toEqual({ type: "error", error: "failed inserting acl binding rule: auth method not found" });
    expect(run(s, { type: "binding-rule-get", id: "b3" }).value).toBeNull();
    apply({ type: "acl-auth-method", op: "delete", name: "K8S" });
    expect((run(s, { type: "auth-method-list" }).value as { Name: string }[]).map((m) => m.Name)).toEqual(["jwt"]);
    expect((run(s, { type: "binding-rule-list" }).value as { ID: string }[]).map((r) => r.ID)).toEqual(["b1"]);
    expect(aclTokenList(s, new WatchSet()).value.map((t) => t.AccessorID)).toEqual(["a2"]);
  });

  test("a snapshot carries auth methods and binding rules with their indexes", () => {
    const { s } = store();
    const copy = createStateStore({ clock: simClock() });
    copy.restore(s.snapshot());
    for (const q of [{ type: "auth-method-list" }, { type: "binding-rule-list" }, { type: "auth-method-get", name: "k8s" }] as const) expect(run(copy, q)).toEqual(run(s, q));
    expect(run(copy, { type: "binding-rule-get", id: "b1" }).value).toEqual({ ...rule("b1", "jwt", { BindType: "role", BindName: "ops", Selector: "value.user == x" }), CreateIndex: 4, ModifyIndex: 4 });
    expect(new TextDecoder().decode(copy.snapshot())).toBe(new TextDecoder().decode(s.snapshot()));
  });

  test("a snapshot with a binding rule of an unknown bind type, or a duplicate rule, is refused", () => {
    const { s } = store();
    const doc = JSON.parse(new TextDecoder().decode(s.snapshot()));
    const restore = (d: unknown) => () => createStateStore({ clock: simClock() }).restore(new TextEncoder().encode(JSON.stringify(d)));
    expect(restore({ ...doc, aclBindingRules: [{ ...doc.aclBindingRules[0], BindType: "user" }] })).toThrow("BindType must be service, role or node");
    expect(restore({ ...doc, aclBindingRules: [doc.aclBindingRules[0], doc.aclBindingRules[0]] })).toThrow();
  });
});
