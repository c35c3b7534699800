import { describe, expect, test } from "bun:test";
import type { AclPolicy, AclTokenRecord } from "../model/index.ts";
import { AclResolveError, createTokenResolver, type ResolvedToken, type TokenResolverOptions } from "./token_resolver.ts";

const policy: AclPolicy = { ID: "p1", Name: "kv", Description: "", Rules: `key_prefix "app/" { policy = "write" }`, Hash: "", CreateIndex: 1, ModifyIndex: 1 };
const token = (secret: string): AclTokenRecord => ({
  AccessorID: `a-${secret}`, SecretID: secret, Description: "", Policies: [{ ID: "p1", Name: "kv" }], Local: false, CreateTime: "", Hash: "", CreateIndex: 1, ModifyIndex: 1,
});

function setup(over: Partial<TokenResolverOptions> = {}) {
  let now = 0;
  let down = false;
  const fetched: string[] = [];
  const known = new Map<string, ResolvedToken>([["s1", { token: token("s1"), policies: [policy], roles: [] }], ["anonymous", { token: { ...token("anonymous"), Policies: [] }, policies: [], roles: [] }]]);
  const r = createTokenResolver({
    fetch: async (secret) => {
      fetched.push(secret);
      if (down) throw new Error("no servers");
      return known.get(secret) ?? null;
    },
    now: () => now, ttlMs: 30_000, datacenter: "dc1", nodeName: "n1", defaultPolicy: "deny", downPolicy: "extend-cache", defaultToken: () => "", agentMasterToken: () => "am",
    ...over,
  });
  return { r, fetched, advance: (ms: number) => void (now += ms), setDown: (d: boolean) => void (down = d) };
}

const error = async (p: Promise<unknown>) => {
  try {
    await p;
  } catch (e) {
    return [(e as AclResolveError).statusCode, (e as Error).message];
  }
  return "resolved";
};

describe("an agent's token resolution", () => {
  test("fetched once per TTL; no token is the default (anonymous); unknown is ACL not found; root names refused", async () => {
    const { r, fetched, advance } = setup();
    expect((await r.authorizer("s1")).check("key", "write", "app/x")).toBe("allow");
    await r.authorizer("s1");
    expect(fetched).toEqual(["s1"]);
    advance(30_001);
    await r.authorizer("s1");
    expect(fetched).toEqual(["s1", "s1"]);
    expect((await r.authorizer(undefined)).check("key", "read", "x")).toBe("deny");
    expect(fetched.at(-1)).toBe("anonymous");
    expect(await error(r.authorizer("nope"))).toEqual([403, "ACL not found"]);
    expect(await error(r.authorizer("deny"))).toEqual([500, "Cannot resolve root ACL"]);
  });

  test("agent_master is local: write on this agent, read on nodes, nothing else, never fetched", async () => {
    const { r, fetched } = setup();
    const a = await r.authorizer("am");
    expect([a.check("agent", "write", "n1"), a.check("node", "read", "x"), a.check("key", "read", "x")]).toEqual(["allow", "allow", "deny"]);
    expect(fetched).toEqual([]);
  });

  test("servers down: extend-cache keeps a cached authorizer; with nothing cached default_policy decides; allow/deny down policies", async () => {
    const { r, setDown, advance } = setup();
    await r.authorizer("s1");
    setDown(true);
    advance(60_000);
    expect((await r.authorizer("s1")).check("key", "write", "app/x")).toBe("allow");
    expect((await r.authorizer("never-seen")).check("key", "read", "x")).toBe("deny");
    const allow = setup({ downPolicy: "allow" });
    allow.setDown(true);
    expect((await allow.r.authorizer("s1")).check("key", "write", "x")).toBe("allow");
  });
});
