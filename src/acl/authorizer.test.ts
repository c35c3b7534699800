import { describe, expect, test } from "bun:test";
import { chainAuthorizers, enforce, policyAuthorizer, staticAuthorizer, type Authorizer } from "./authorizer.ts";
import { agentMasterRules, serviceIdentityRules } from "./builtin.ts";
import { mergeRules } from "./merge.ts";
import { emptyRules, type AccessLevel, type ParsedRules, type ScalarResource, type SegmentResource, type SegmentRule } from "./rules.ts";

/** Rules from a compact spec: `{ key_prefix: { "app/": "write" }, service: { web: ["write", "deny"] }, operator: "read" }`. */
function rules(spec: Record<string, AccessLevel | Record<string, AccessLevel | [AccessLevel, AccessLevel]>>): ParsedRules {
  const out = emptyRules();
  for (const [name, value] of Object.entries(spec)) {
    if (typeof value === "string") {
      (out.scalars as Record<string, AccessLevel>)[name as ScalarResource] = value;
      continue;
    }
    const prefix = name.endsWith("_prefix");
    const resource = name.replace(/_prefix$/, "") as SegmentResource;
    for (const [segment, v] of Object.entries(value)) {
      const rule: SegmentRule = typeof v === "string" ? { policy: v } : { policy: v[0], intentions: v[1] };
      (out.segments[resource][prefix ? "prefix" : "exact"] as Map<string, SegmentRule>).set(segment, rule);
    }
  }
  return out;
}

const withDefault = (r: ParsedRules, d: "allow" | "deny") => chainAuthorizers([policyAuthorizer(r), staticAuthorizer(d)]);

describe("enforce", () => {
  test("write grants everything, list read and list, read only read, deny nothing; no rule defers", () => {
    const table = (["write", "list", "read", "deny", undefined] as const).map((l) => (["read", "list", "write"] as const).map((a) => enforce(l, a)));
    expect(table).toEqual([
      ["allow", "allow", "allow"], ["allow", "allow", "deny"], ["allow", "deny", "deny"], ["deny", "deny", "deny"], ["default", "default", "default"],
    ]);
  });
});

describe("policy authorizer", () => {
  test("an exact rule wins; else the longest prefix; '' matches all; no rule defers to the chain", () => {
    const a = policyAuthorizer(rules({ key_prefix: { "": "read", "app/": "write", "app/secret/": "deny" }, key: { "app/secret/ok": "write" }, node: { n1: "write" } }));
    expect(a.check("key", "write", "app/x")).toBe("allow");
    expect(a.check("key", "read", "app/secret/x")).toBe("deny");
    expect(a.check("key", "write", "app/secret/ok")).toBe("allow");
    expect(a.check("key", "write", "other")).toBe("deny"); // read rule: does not defer
    expect(a.check("node", "write", "n1")).toBe("allow");
    expect(a.check("node", "read", "n2")).toBe("default");
    expect(a.check("operator", "read")).toBe("default");
  });

  test("intentions come from the service rule's intentions, else read for read/write rules and deny for deny", () => {
    const a = policyAuthorizer(rules({ service: { web: ["read", "write"], db: "write", secret: "deny" }, service_prefix: { "": "read" } }));
    expect([a.check("intention", "write", "web"), a.check("intention", "read", "db"), a.check("intention", "write", "db")]).toEqual(["allow", "allow", "deny"]);
    expect([a.check("intention", "read", "secret"), a.check("intention", "read", "anything")]).toEqual(["deny", "allow"]);
  });

  test("keyWritePrefix: the covering prefix must grant write and nothing under it may grant less", () => {
    const a = policyAuthorizer(rules({ key_prefix: { "app/": "write", "app/ro/": "read" }, key: { "web/x": "read" } }));
    expect(a.keyWritePrefix("app/")).toBe("deny"); // app/ro/ under it
    expect(a.keyWritePrefix("app/rw/")).toBe("allow");
    expect(a.keyWritePrefix("app/ro/x")).toBe("deny"); // covered by a read prefix
    expect(a.keyWritePrefix("web/")).toBe("deny"); // an exact read rule under it
    expect(a.keyWritePrefix("zzz/")).toBe("default");
  });

  test("snapshot needs acl = write", () => {
    expect(policyAuthorizer(rules({ acl: "write" })).snapshot()).toBe("allow");
    expect(policyAuthorizer(rules({ acl: "read" })).snapshot()).toBe("deny");
    expect(policyAuthorizer(rules({})).snapshot()).toBe("default");
  });
});

describe("chains and static authorizers", () => {
  test("default allow: everything but the ACL API and snapshots; an explicit deny still wins", () => {
    const a = withDefault(rules({ key_prefix: { "secret/": "deny" } }), "allow");
    expect([a.check("key", "write", "x"), a.check("key", "read", "secret/x"), a.check("acl", "read"), a.snapshot()]).toEqual(["allow", "deny", "deny", "deny"]);
    expect(a.intentionDefaultAllow()).toBe("allow");
  });

  test("default deny: only what rules grant; manage-all grants everything", () => {
    const a = withDefault(rules({ service_prefix: { "": "read" } }), "deny");
    expect([a.check("service", "read", "x"), a.check("service", "write", "x"), a.check("node", "read", "n"), a.intentionDefaultAllow()]).toEqual(["allow", "deny", "deny", "deny"]);
    const m: Authorizer = staticAuthorizer("manage");
    expect([m.check("acl", "write"), m.snapshot(), m.keyWritePrefix("")]).toEqual(["allow", "allow", "allow"]);
  });

  test("synthesized identities: a service identity writes its service and sidecar and reads the rest", () => {
    const a = withDefault(serviceIdentityRules("web"), "deny");
    expect(["web", "web-sidecar-proxy", "db"].map((s) => a.check("service", "write", s))).toEqual(["allow", "allow", "deny"]);
    expect([a.check("service", "read", "db"), a.check("node", "read", "n1"), a.check("node", "write", "n1")]).toEqual(["allow", "allow", "deny"]);
    const agent = chainAuthorizers([policyAuthorizer(agentMasterRules("n1")), staticAuthorizer("deny")]);
    expect([agent.check("agent", "write", "n1"), agent.check("agent", "read", "n2"), agent.check("node", "read", "n2")]).toEqual(["allow", "deny", "allow"]);
  });
});

describe("merging policies", () => {
  test("per segment deny > write > list > read; a more specific segment still overrides a shorter prefix", () => {
    const merged = mergeRules([
      rules({ key_prefix: { "": "write" }, key: { a: "read" }, operator: "read" }),
      rules({ key_prefix: { "": "read", "b/": "deny" }, key: { a: "list" }, operator: "write" }),
    ]);
    const a = policyAuthorizer(merged);
    expect([a.check("key", "write", "x"), a.check("key", "read", "b/1"), a.check("key", "list", "a"), a.check("key", "write", "a")]).toEqual(["allow", "deny", "allow", "deny"]);
    expect(a.check("operator", "write")).toBe("allow");
  });

  test("service intentions merge on their derived levels, as Consul fills them in at parse time", () => {
    const a = policyAuthorizer(mergeRules([rules({ service: { web: "deny" } }), rules({ service: { web: ["write", "write"] } })]));
    expect([a.check("service", "write", "web"), a.check("intention", "read", "web")]).toEqual(["deny", "deny"]);
    const b = policyAuthorizer(mergeRules([rules({ service: { web: "read" } }), rules({ service: { web: "write" } })]));
    expect([b.check("service", "write", "web"), b.check("intention", "read", "web"), b.check("intention", "write", "web")]).toEqual(["allow", "allow", "deny"]);
  });
});
