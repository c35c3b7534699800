import { describe, expect, test } from "bun:test";
import type { AclPolicy, AclRole, AclToken } from "../model/index.ts";
import { GLOBAL_MANAGEMENT_POLICY_ID, GLOBAL_MANAGEMENT_RULES } from "./builtin.ts";
import { policyAuthorizer } from "./authorizer.ts";
import { ParsedPolicyCache, tokenAuthorizer, type AclObjects } from "./resolve.ts";
import { parseRules } from "./rules_parse.ts";

const policy = (id: string, rules: string, more: Partial<AclPolicy> = {}): AclPolicy => ({
  ID: id, Name: id, Description: "", Rules: rules, Hash: "", CreateIndex: 1, ModifyIndex: 1, ...more,
});
const token = (more: Partial<AclToken>): AclToken => ({
  AccessorID: "a", SecretID: "s", Description: "", Local: false, CreateTime: "2020-01-01T00:00:00Z", Hash: "", CreateIndex: 1, ModifyIndex: 1, ...more,
});

function objects(policies: AclPolicy[], roles: AclRole[] = []): AclObjects {
  return { policy: (id) => policies.find((p) => p.ID === id), role: (id) => roles.find((r) => r.ID === id) };
}

describe("token resolution", () => {
  const cache = new ParsedPolicyCache();
  const o = (defaultPolicy: "allow" | "deny") => ({ datacenter: "dc1", defaultPolicy, cache });

  test("the built-in global-management rules grant everything, the ACL API and snapshots included", () => {
    const a = policyAuthorizer(parseRules(GLOBAL_MANAGEMENT_RULES));
    expect([a.check("acl", "write"), a.snapshot(), a.check("key", "write", "x"), a.check("intention", "write", "web"), a.keyWritePrefix("")]).toEqual(["allow", "allow", "allow", "allow", "allow"]);
    const mgmt = tokenAuthorizer(token({ Policies: [{ ID: GLOBAL_MANAGEMENT_POLICY_ID, Name: "global-management" }] }), objects([policy(GLOBAL_MANAGEMENT_POLICY_ID, GLOBAL_MANAGEMENT_RULES)]), o("deny"));
    expect(mgmt.check("operator", "write")).toBe("allow");
  });

  test("policies, roles' policies and identities merge; deleted links and other datacenters' policies grant nothing", () => {
    const ps = [
      policy("p1", `key_prefix "app/" { policy = "write" }`),
      policy("p2", `node_prefix "" { policy = "read" }`),
      policy("p3", `operator = "write"`, { Datacenters: ["dc2"] }),
    ];
    const roles: AclRole[] = [{ ID: "r1", Name: "r", Description: "", Policies: [{ ID: "p2", Name: "p2" }], ServiceIdentities: [{ ServiceName: "db" }], Hash: "", CreateIndex: 1, ModifyIndex: 1 }];
    const t = token({
      Policies: [{ ID: "p1", Name: "p1" }, { ID: "p3", Name: "p3" }, { ID: "gone", Name: "gone" }], Roles: [{ ID: "r1", Name: "r" }],
      ServiceIdentities: [{ ServiceName: "web" }, { ServiceName: "api", Datacenters: ["dc9"] }], NodeIdentities: [{ NodeName: "n1", Datacenter: "dc1" }, { NodeName: "n2", Datacenter: "dc2" }],
    });
    const a = tokenAuthorizer(t, objects(ps, roles), o("deny"));
    expect([a.check("key", "write", "app/x"), a.check("node", "read", "any"), a.check("operator", "read")]).toEqual(["allow", "allow", "deny"]);
    expect(["web", "db", "api"].map((s) => a.check("service", "write", s))).toEqual(["allow", "allow", "deny"]);
    expect([a.check("node", "write", "n1"), a.check("node", "write", "n2")]).toEqual(["allow", "deny"]);
  });

  test("no rules: the default policy decides; legacy Rules are prefix rules", () => {
    expect(tokenAuthorizer(token({}), objects([]), o("allow")).check("key", "write", "x")).toBe("allow");
    expect(tokenAuthorizer(token({}), objects([]), o("deny")).check("key", "read", "x")).toBe("deny");
    const legacy = tokenAuthorizer(token({ Rules: `key "app" { policy = "write" }` }), objects([]), o("deny"));
    expect([legacy.check("key", "write", "app/x"), legacy.check("key", "read", "other")]).toEqual(["allow", "deny"]);
  });

  test("a changed policy is parsed again (by ModifyIndex)", () => {
    const c = new ParsedPolicyCache(2);
    const v1 = policy("p", `operator = "read"`);
    expect(c.get(v1).scalars.operator).toBe("read");
    expect(c.get({ ...v1, Rules: `operator = "write"`, ModifyIndex: 2 }).scalars.operator).toBe("write");
    expect(c.get({ ...v1, Rules: `operator = "deny"`, ModifyIndex: 2 }).scalars.operator).toBe("write"); // same index: cached
  });
});
