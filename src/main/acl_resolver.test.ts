import { describe, expect, test } from "bun:test";
import { AclResolveError, chainAuthorizers, parseRules, policyAuthorizer, staticAuthorizer, type TokenResolver } from "../acl/index.ts";
import type { AgentService } from "../agent/index.ts";
import { intentionDefaultAllow, resolvedTokenTtlMs, xdsStreamAuthorizer } from "./acl_resolver.ts";
import { DEFAULT_ACL } from "./config.ts";

const resolver: TokenResolver = {
  authorizer: async (token) => {
    if (token !== "web-writer") throw new AclResolveError("ACL not found", 403);
    return chainAuthorizers([policyAuthorizer(parseRules(`service "web" { policy = "write" }`)), staticAuthorizer("deny")]);
  },
};
const services = {
  "web-sidecar-proxy": { ID: "web-sidecar-proxy", Service: "web-sidecar-proxy", Kind: "connect-proxy", Proxy: { DestinationServiceName: "web" } },
  "db-sidecar-proxy": { ID: "db-sidecar-proxy", Service: "db-sidecar-proxy", Kind: "connect-proxy", Proxy: { DestinationServiceName: "db" } },
  gw: { ID: "gw", Service: "mesh-gateway", Kind: "mesh-gateway" },
} as unknown as Record<string, AgentService>;

describe("xDS stream authorization", () => {
  test("a proxy needs service:write on its destination, a gateway on its own name; unknown tokens are unauthenticated", async () => {
    const auth = xdsStreamAuthorizer(resolver, () => services);
    expect(await auth("web-sidecar-proxy", "web-writer")).toEqual({ ok: true });
    expect(await auth("db-sidecar-proxy", "web-writer")).toEqual({ ok: false, code: "permission-denied", message: "permission denied" });
    expect(await auth("gw", "web-writer")).toEqual({ ok: false, code: "permission-denied", message: "permission denied" });
    expect(await auth("web-sidecar-proxy", "nope")).toEqual({ ok: false, code: "unauthenticated", message: "ACL not found" });
  });
});

describe("agent ACL settings", () => {
  test("a resolved token is cached for the shortest of token_ttl, policy_ttl and role_ttl", () => {
    expect(resolvedTokenTtlMs({ tokenTtlMs: 30_000, policyTtlMs: 30_000, roleTtlMs: 30_000 })).toBe(30_000);
    expect(resolvedTokenTtlMs({ tokenTtlMs: 60_000, policyTtlMs: 5_000, roleTtlMs: 30_000 })).toBe(5_000);
    expect(resolvedTokenTtlMs({ tokenTtlMs: 60_000, policyTtlMs: 50_000, roleTtlMs: 10_000 })).toBe(10_000);
  });

  test("intentions default to allow without ACLs and follow default_policy with them", () => {
    expect(intentionDefaultAllow({ acl: DEFAULT_ACL })).toBe(true);
    expect(intentionDefaultAllow({ acl: { ...DEFAULT_ACL, enabled: true, defaultPolicy: "deny" } })).toBe(false);
    expect(intentionDefaultAllow({ acl: { ...DEFAULT_ACL, enabled: true, defaultPolicy: "allow" } })).toBe(true);
    expect(intentionDefaultAllow({ acl: { ...DEFAULT_ACL, enabled: false, defaultPolicy: "deny" } })).toBe(true);
  });
});
