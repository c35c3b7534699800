import { describe, expect, test } from "bun:test";
import { buildConfig, defaultConfig, parseConfigJson } from "./config.ts";
import { debugConfig } from "./debug_config.ts";
import { isLegacyAclKey, parseLegacyAclKey } from "./acl_config.ts";

const base = { ...defaultConfig("h"), dataDir: "/d" };
const build = (...docs: unknown[]) => buildConfig(base, docs.map((d, i) => parseConfigJson(`${i}.json`, d)));
/** The settings as parsed, merged and validated. */
const parsed = (...docs: unknown[]) => build(...docs).acl;

describe("acl settings", () => {
  test("Consul 1.8's defaults: off, default allow, extend-cache, 30 s TTLs, no tokens", () => {
    expect(build().acl).toEqual({
      enabled: false, defaultPolicy: "allow", downPolicy: "extend-cache", enableTokenPersistence: false, enableKeyListPolicy: false, enableTokenReplication: false,
      tokenTtlMs: 30_000, policyTtlMs: 30_000, roleTtlMs: 30_000, tokens: { master: "", agent: "", agentMaster: "", replication: "", default: "" },
    });
  });

  test("the block's keys; later sources win key by key, tokens too; initial_management and agent_recovery are aliases", () => {
    const docs = [
      { acl: { enabled: true, default_policy: "deny", down_policy: "async-cache", token_ttl: "1m", tokens: { master: "m1", agent: "a1" } } },
      { acl: { enable_token_persistence: true, tokens: { agent: "a2", agent_recovery: "r" } } },
      { acl: { tokens: { initial_management: "m2" } } },
    ];
    expect(parsed(...docs)).toMatchObject({ defaultPolicy: "deny", downPolicy: "async-cache", tokenTtlMs: 60_000, enableTokenPersistence: true });
    expect(parsed(...docs).tokens).toEqual({ master: "m2", agent: "a2", agentMaster: "r", replication: "", default: "" });
    const cfg = build(...docs.map((d) => ({ acl: { ...d.acl, enabled: false } })));
    const d = debugConfig(cfg, { dataDir: "/d", nodeId: "n", advertiseAddr: "10.0.0.1", addresses: {} });
    expect(d).toMatchObject({ ACLsEnabled: false, ACLDefaultPolicy: "deny", ACLTokenTTL: "1m0s", ACLMasterToken: "hidden", ACLTokens: { ACLAgentToken: "hidden", ACLDefaultToken: "" } });
  });

  test("the legacy flat keys; acl_datacenter is the primary datacenter and turns ACLs on", () => {
    const source = parseConfigJson("l.json", { acl_datacenter: "dc1", acl_default_policy: "deny", acl_master_token: "m", acl_token: "t", acl_ttl: "10s" });
    expect(source.primaryDatacenter).toBe("dc1");
    expect(source.acl).toMatchObject({ enabled: true, defaultPolicy: "deny", tokenTtlMs: 10_000, roleTtlMs: 10_000, tokens: { master: "m", default: "t" } });
  });

  test("acl.enabled runs in the primary datacenter and in secondaries", () => {
    expect(build({ acl: { enabled: true } }).acl.enabled).toBe(true);
    expect(build({ acl: { enabled: true }, datacenter: "dc2", primary_datacenter: "dc1" }).acl.enabled).toBe(true);
  });

  test("bad values and keys name the file and the key", () => {
    const bad = (doc: unknown) => () => parseConfigJson("a.json", doc);
    expect(bad({ acl: { default_policy: "maybe" } })).toThrow('a.json: acl.default_policy must be one of "allow", "deny", got "maybe"');
    expect(bad({ acl: { down_policy: "panic" } })).toThrow('a.json: acl.down_policy must be one of "allow", "deny", "extend-cache", "async-cache", got "panic"');
    expect(bad({ acl: { enabled: "yes" } })).toThrow('a.json: acl.enabled must be true or false, got "yes"');
    expect(bad({ acl: { token_ttl: 30 } })).toThrow('a.json: acl.token_ttl must be a duration such as "30s", got 30');
    expect(bad({ acl: { tokens: { root: "x" } } })).toThrow("a.json: invalid config key acl.tokens.root");
    expect(bad({ acl: { tokens: { master: "a", initial_management: "b" } } })).toThrow("a.json: acl.tokens.initial_management and its alias are both set, to different tokens");
    expect(bad({ acl: { enable: true } })).toThrow("a.json: invalid config key acl.enable");
    expect(bad({ acl: [] })).toThrow('a.json: "acl" must be an object');
    expect(bad({ acl_down_policy: "x" })).toThrow("a.json: acl_down_policy must be one of allow, deny, extend-cache, async-cache");
  });

  test("a name of Object.prototype is no legacy key, and parseLegacyAclKey refuses it rather than calling it", () => {
    for (const name of ["constructor", "toString", "__proto__", "hasOwnProperty", "valueOf"]) {
      expect(isLegacyAclKey(name)).toBe(false);
      expect(parseLegacyAclKey(name, "x")).toBe(`invalid config key ${name}`);
    }
    expect(parseLegacyAclKey("acl_token", "t")).toEqual({ tokens: { default: "t" } });
  });
});
