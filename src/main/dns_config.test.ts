import { describe, expect, test } from "bun:test";
import { buildConfig, defaultConfig, parseConfigJson } from "./config.ts";
import { DEFAULT_DNS, parseDnsConfigBlock, recursorProblem } from "./dns_config.ts";
import { dnsConfigOf } from "./dns.ts";
import { loadAgentConfig } from "./commands/agent.ts";

const build = (...docs: unknown[]) => buildConfig({ ...defaultConfig("h"), dataDir: "/d" }, docs.map((d, i) => parseConfigJson(`f${i}.json`, d)));

describe("dns_config, recursors, alt_domain", () => {
  test("Consul's defaults", () => {
    expect(build().dns).toEqual(DEFAULT_DNS);
    expect(dnsConfigOf(build())).toMatchObject({ domain: "consul.", altDomain: "", udpAnswerLimit: 3, soa: { refresh: 3600, retry: 600, expire: 86400, minTtl: 0 }, recursorTimeoutMs: 2000 });
  });

  test("every key of the block; TTLs in whole seconds; soa keys merge with the defaults", () => {
    const cfg = build({
      dns_config: {
        allow_stale: false, node_ttl: "10s", service_ttl: { "*": "5s", db: "1m30s" }, only_passing: true, udp_answer_limit: 5, a_record_limit: 2,
        enable_truncate: true, enable_additional_node_meta_txt: false, disable_compression: true, recursor_timeout: "500ms", recursor_strategy: "random",
        soa: { min_ttl: 30 }, max_stale: "1m", use_cache: false, cache_max_age: "0s",
      },
      recursors: ["8.8.8.8"], alt_domain: "Example.",
    });
    expect(cfg.dns).toEqual({
      allowStale: false, nodeTtl: 10, serviceTtl: { "*": 5, db: 90 }, onlyPassing: true, udpAnswerLimit: 5, aRecordLimit: 2, enableTruncate: true,
      enableAdditionalNodeMetaTxt: false, disableCompression: true, recursorTimeoutMs: 500, recursorStrategy: "random",
      soa: { refresh: 3600, retry: 600, expire: 86400, minTtl: 30 }, recursors: ["8.8.8.8"], altDomain: "Example.", maxStaleMs: 60_000,
    });
    expect(dnsConfigOf(cfg).altDomain).toBe("example.");
  });

  test("recursors from several sources and flags append, in order", () => {
    const { config } = loadAgentConfig(["-dev", "-recursor", "1.1.1.1", "-recursor", "[::1]:5353", "-alt-domain", "alt", "-dns-port", "8653"]);
    expect(config!.dns.recursors).toEqual(["1.1.1.1", "[::1]:5353"]);
    expect(config!.dns.altDomain).toBe("alt");
    expect(config!.ports.dns).toBe(8653);
    expect(build({ recursors: ["1.1.1.1"] }, { recursors: ["9.9.9.9:53"] }).dns.recursors).toEqual(["1.1.1.1", "9.9.9.9:53"]);
  });

  test("bad values name the key; nothing else is read", () => {
    expect(parseDnsConfigBlock({ node_ttl: 5 })).toBe('dns_config.node_ttl must be a duration such as "30s", got 5');
    expect(parseDnsConfigBlock({ nope: 1 })).toBe("invalid config key dns_config.nope");
    expect(parseDnsConfigBlock({ soa: { serial: 1 } })).toBe("invalid config key dns_config.soa.serial");
    expect(parseDnsConfigBlock({ udp_answer_limit: -1 })).toBe("dns_config.udp_answer_limit must be a non-negative integer, got -1");
    expect(parseDnsConfigBlock({ recursor_strategy: "fastest" })).toBe('dns_config.recursor_strategy must be "sequential" or "random", got "fastest"');
    expect(parseDnsConfigBlock({ service_ttl: { db: "x" } })).toBe('dns_config.service_ttl.db must be a duration such as "10s", got "x"');
    expect(() => build({ dns_config: { only_passing: "yes" } })).toThrow("f0.json: dns_config.only_passing must be true or false");
    expect(() => build({ recursors: ["dns.google"] })).toThrow('recursor "dns.google" must be an IP address with an optional port');
    expect(() => build({ recursors: ["0.0.0.0"] })).toThrow("cannot be the unspecified address");
    expect(() => build({ alt_domain: "service.example" })).toThrow('alt_domain "service.example" cannot start with a DNS query keyword or the datacenter');
    expect(recursorProblem("10.0.0.1:5353")).toBeUndefined();
    expect(recursorProblem("2001:db8::1")).toBeUndefined();
  });
});
