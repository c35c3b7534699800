import { describe, expect, test } from "bun:test";
import { loadAgentConfig } from "./commands/agent.ts";
import { buildConfig, ConfigError, defaultConfig, DEV_SOURCE, parseConfigJson } from "./config.ts";

describe("config", () => {
  test("defaults, then -dev, then files, then flags; ports merge key by key", () => {
    const cfg = buildConfig(defaultConfig("host-a"), [
      DEV_SOURCE,
      parseConfigJson("a.json", { datacenter: "west", ports: { http: 9500 } }),
      parseConfigJson("b.json", { ports: { server: 9300 }, node_meta: { k: "v" } }),
      { nodeName: "flag-node" },
    ]);
    expect(cfg).toMatchObject({ dev: true, server: true, datacenter: "west", nodeName: "flag-node", bindAddr: "127.0.0.1", logLevel: "debug", nodeMeta: { k: "v" } });
    expect(cfg.ports).toEqual({
      http: 9500, grpc: 8502, server: 9300, serfLan: 8301, serfWan: 8302, dns: 8600, sidecarMin: 21000, sidecarMax: 21255, exposeMin: 21500, exposeMax: 21755,
    });
  });

  test("without -dev the gRPC port is disabled and a data dir is required", () => {
    expect(defaultConfig("h").ports.grpc).toBe(-1);
    expect(() => buildConfig(defaultConfig("h"), [])).toThrow(new ConfigError("data_dir cannot be empty (set -data-dir or data_dir)"));
  });

  test("unknown keys and wrong types name the file and the key", () => {
    expect(() => parseConfigJson("x.json", { datacentre: "dc1" })).toThrow("x.json: invalid config key datacentre");
    expect(() => parseConfigJson("x.json", { ports: { htp: 1 } })).toThrow("x.json: invalid config key ports.htp");
    expect(() => parseConfigJson("x.json", { server: "yes" })).toThrow('x.json: server must be true or false, got "yes"');
    expect(() => parseConfigJson("x.json", { ports: { http: 70000 } })).toThrow("x.json: ports.http must be a port number");
    expect(() => parseConfigJson("x.json", [])).toThrow("x.json: config must be a JSON object");
  });

  test("validation: datacenter names, node IDs, bootstrap_expect needs server", () => {
    const base = { ...defaultConfig("h"), dataDir: "/d" };
    expect(() => buildConfig(base, [{ datacenter: "DC 1" }])).toThrow(/datacenter "DC 1"/);
    expect(() => buildConfig(base, [{ nodeId: "nope" }])).toThrow(/node_id "nope" must be a UUID/);
    expect(() => buildConfig(base, [{ bootstrapExpect: 3 }])).toThrow("bootstrap_expect requires server mode");
    expect(buildConfig(base, [{ bootstrapExpect: 3, server: true }]).bootstrapExpect).toBe(3);
  });

  test("raft_snapshot_threshold and raft_snapshot_interval: Consul's defaults, names and checks", () => {
    const base = { ...defaultConfig("h"), dataDir: "/d" };
    expect(buildConfig(base, []).raftSnapshotThreshold).toBe(16_384);
    expect(buildConfig(base, []).raftSnapshotIntervalMs).toBe(120_000);
    const cfg = buildConfig(base, [parseConfigJson("r.json", { raft_snapshot_threshold: 256, raft_snapshot_interval: "5s" })]);
    expect([cfg.raftSnapshotThreshold, cfg.raftSnapshotIntervalMs]).toEqual([256, 5000]);
    expect(() => parseConfigJson("r.json", { raft_snapshot_threshold: -1 })).toThrow("r.json: raft_snapshot_threshold must be a non-negative integer");
    expect(() => parseConfigJson("r.json", { raft_snapshot_interval: "often" })).toThrow("r.json: raft_snapshot_interval must be a duration");
  });
});

describe("tls settings", () => {
  test("Consul's TLS keys are read from config files", () => {
    const cfg = buildConfig({ ...defaultConfig("h"), dataDir: "/d" }, [
      parseConfigJson("t.json", { ca_file: "/ca.pem", cert_file: "/c.pem", key_file: "/k.pem", verify_incoming_rpc: true, verify_outgoing: true, verify_server_hostname: true }),
    ]);
    expect(cfg.tls).toEqual({ caFile: "/ca.pem", certFile: "/c.pem", keyFile: "/k.pem", verifyIncoming: false, verifyIncomingRpc: true, verifyOutgoing: true, verifyServerHostname: true });
    expect(() => parseConfigJson("t.json", { verify_outgoing: "yes" })).toThrow("t.json: verify_outgoing must be true or false");
  });
});

describe("gossip settings", () => {
  test("join lists accumulate across sources; durations and keys are read with Consul's names", () => {
    const cfg = buildConfig({ ...defaultConfig("h"), dataDir: "/d" }, [
      parseConfigJson("a.json", { retry_join: ["10.0.0.1"], retry_interval: "5s", encrypt: "k", retry_max: 3 }),
      parseConfigJson("b.json", { retry_join: ["10.0.0.2"], start_join: ["10.0.0.9"] }),
      { gossip: { retryJoin: ["10.0.0.3"] } },
    ]);
    expect(cfg.gossip.retryJoin).toEqual(["10.0.0.1", "10.0.0.2", "10.0.0.3"]);
    expect(cfg.gossip.startJoin).toEqual(["10.0.0.9"]);
    expect(cfg.gossip.retryIntervalMs).toBe(5000);
    expect(cfg.gossip.retryMax).toBe(3);
    expect(cfg.gossip.encrypt).toBe("k");
  });

  test("bad values name the key", () => {
    expect(() => parseConfigJson("g.json", { retry_interval: "soon" })).toThrow('g.json: retry_interval must be a duration such as "30s"');
    expect(() => parseConfigJson("g.json", { retry_join: "10.0.0.1" })).toThrow("g.json: retry_join must be a list of strings");
  });
});

describe("service and check definitions", () => {
  test("service, services, check and checks blocks become validated registrations, accumulating across files", () => {
    const a = parseConfigJson("a.json", { service: { name: "web", port: 80, check: { ttl: "10s" } }, checks: [{ id: "disk", name: "disk", ttl: "1m" }] });
    const b = parseConfigJson("b.json", { services: [{ name: "api", port: 9000 }] });
    const cfg = buildConfig({ ...defaultConfig("host"), dataDir: "/data" }, [a, b]);
    expect(cfg.definitions.services.map((s) => s.Name)).toEqual(["web", "api"]);
    expect(cfg.definitions.checks.map((c) => c.ID ?? c.Name)).toEqual(["disk"]);
  });

  test("a definition's token goes with it, by position, across files; a non-string token is refused", () => {
    const a = parseConfigJson("a.json", { services: [{ name: "web", token: "web-secret" }, { name: "db" }], check: { name: "mem", ttl: "10s", Token: "chk" } });
    const b = parseConfigJson("b.json", { service: { name: "api", token: "api-secret" } });
    const cfg = buildConfig({ ...defaultConfig("host"), dataDir: "/data" }, [a, b]);
    expect(cfg.definitions.services.map((s) => s.Name)).toEqual(["web", "db", "api"]);
    expect(cfg.definitions.serviceTokens).toEqual(["web-secret", "", "api-secret"]);
    expect(cfg.definitions.checkTokens).toEqual(["chk"]);
    expect(() => parseConfigJson("t.json", { service: { name: "x", token: 5 } })).toThrow("t.json: service: token must be a string");
  });

  test("a bad definition is a config error naming the file and the block", () => {
    expect(() => parseConfigJson("svc.json", { services: [{ port: 1 }] })).toThrow(/^svc\.json: services\[0\]: Missing service name/);
  });
});

describe("connect", () => {
  test("connect { enabled } turns the CA on; -dev turns it on; unknown keys are refused", () => {
    const base = { ...defaultConfig("host"), dataDir: "/data" };
    expect(buildConfig(base, []).connectEnabled).toBe(false);
    expect(buildConfig(base, [parseConfigJson("c.json", { connect: { enabled: true } })]).connectEnabled).toBe(true);
    expect(buildConfig(base, [DEV_SOURCE]).connectEnabled).toBe(true);
    expect(() => parseConfigJson("c.json", { connect: { enable: true } })).toThrow("c.json: invalid config key connect.enable");
    expect(() => parseConfigJson("c.json", { connect: { enabled: "yes" } })).toThrow("connect.enabled must be true or false");
  });
});

describe("script checks", () => {
  test("enable_script_checks / enable_local_script_checks keys and flags; off by default and in -dev", () => {
    const base = { ...defaultConfig("host"), dataDir: "/data" };
    expect([buildConfig(base, []).enableScriptChecks, buildConfig(base, []).enableLocalScriptChecks]).toEqual([false, false]);
    expect(buildConfig(base, [DEV_SOURCE])).toMatchObject({ enableScriptChecks: false, enableLocalScriptChecks: false });
    const file = parseConfigJson("s.json", { enable_script_checks: true, enable_local_script_checks: true });
    expect(buildConfig(base, [file])).toMatchObject({ enableScriptChecks: true, enableLocalScriptChecks: true });
    expect(() => parseConfigJson("s.json", { enable_script_checks: "yes" })).toThrow("s.json: enable_script_checks must be true or false");
    expect(loadAgentConfig(["-dev"]).config).toMatchObject({ enableScriptChecks: false, enableLocalScriptChecks: false });
    expect(loadAgentConfig(["-dev", "-enable-script-checks"]).config).toMatchObject({ enableScriptChecks: true, enableLocalScriptChecks: false });
    expect(loadAgentConfig(["-dev", "-enable-local-script-checks=true"]).config).toMatchObject({ enableScriptChecks: false, enableLocalScriptChecks: true });
  });

  test("a script check in a config file is accepted by the config loader (the agent decides whether it may run)", () => {
    const cfg = parseConfigJson("c.json", { check: { id: "mem", name: "mem", args: ["/bin/true"], interval: "10s" } });
    expect(cfg.definitions?.checks[0]).toMatchObject({ CheckID: "mem", ScriptArgs: ["/bin/true"], IntervalMs: 10_000 });
  });
});

describe("WAN federation settings", () => {
  const base = { ...defaultConfig("s1"), dataDir: "/d", server: true };

  test("primary_datacenter defaults to the datacenter; federation is off with Consul's defaults", () => {
    const cfg = buildConfig(base, [parseConfigJson("a.json", { datacenter: "west" })]);
    expect(cfg.primaryDatacenter).toBe("west");
    expect(cfg.federation).toEqual({ meshGatewayWanFederation: false, primaryGateways: [], primaryGatewaysIntervalMs: 30_000, disablePrimaryGatewayFallback: false });
    expect(buildConfig(base, [{ datacenter: "dc2", primaryDatacenter: "dc1" }]).primaryDatacenter).toBe("dc1");
  });

  test("Consul's keys are read; primary_gateways accumulate across sources like the join lists", () => {
    const cfg = buildConfig(base, [
      parseConfigJson("a.json", { datacenter: "dc2", primary_datacenter: "dc1", primary_gateways: ["10.0.0.1:8443"], primary_gateways_interval: "5s" }),
      parseConfigJson("b.json", { connect: { enable_mesh_gateway_wan_federation: true }, primary_gateways: ["10.0.0.2:8443"], disable_primary_gateway_fallback: true }),
      { federation: { primaryGateways: ["10.0.0.3:443"] } },
      { tls: { caFile: "/ca", certFile: "/c", keyFile: "/k", verifyIncomingRpc: true, verifyOutgoing: true, verifyServerHostname: true } },
    ]);
    expect(cfg.federation).toEqual({
      meshGatewayWanFederation: true, primaryGateways: ["10.0.0.1:8443", "10.0.0.2:8443", "10.0.0.3:443"], primaryGatewaysIntervalMs: 5_000, disablePrimaryGatewayFallback: true,
    });
    expect(cfg.connectEnabled).toBe(false);
  });

  test("wrong types name the key", () => {
    expect(() => parseConfigJson("w.json", { connect: { enable_mesh_gateway_wan_federation: "yes" } })).toThrow('w.json: connect.enable_mesh_gateway_wan_federation must be true or false, got "yes"');
    expect(() => parseConfigJson("w.json", { primary_gateways: "10.0.0.1:8443" })).toThrow("w.json: primary_gateways must be a list of strings");
    expect(() => parseConfigJson("w.json", { primary_gateways_interval: 30 })).toThrow('w.json: primary_gateways_interval must be a duration such as "30s"');
    expect(() => parseConfigJson("w.json", { disable_primary_gateway_fallback: 1 })).toThrow("w.json: disable_primary_gateway_fallback must be true or false");
    expect(() => parseConfigJson("w.json", { connect: { enable_mesh_gateway_wanfed: true } })).toThrow("w.json: invalid config key connect.enable_mesh_gateway_wanfed");
  });
});

describe("config keys named like Object.prototype members", () => {
  /** Names every plain object answers through its prototype; as config keys they are as unknown as any other. */
  const BUILT_INS = ["constructor", "toString", "__proto__", "hasOwnProperty", "valueOf", "isPrototypeOf"];
  /**
   * Where a key can stand: a config file's JSON text with `@` for the key, the path the error names (`@`
   * again), and what the block adds after the path. Parsed from text, as a file is: JSON.parse makes
   * `__proto__` an own key, where an object literal would set the prototype.
   */
  const PLACES: readonly (readonly [json: string, path: string, tail?: string])[] = [
    ['{"@": 1}', "@"],
    ['{"ports": {"@": 5}}', "ports.@"],
    ['{"xds": {"@": 1}}', "xds.@"],
    ['{"autopilot": {"@": true}}', "autopilot.@"],
    ['{"acl": {"@": true}}', "acl.@"],
    ['{"acl": {"tokens": {"@": "t"}}}', "acl.tokens.@"],
    ['{"dns_config": {"@": true}}', "dns_config.@"],
    ['{"dns_config": {"soa": {"@": 1}}}', "dns_config.soa.@"],
    ['{"telemetry": {"@": true}}', "telemetry.@"],
    ['{"connect": {"@": true}}', "connect.@"],
    ['{"ui_config": {"@": true}}', "ui_config.@", " (Causeway's UI takes enabled and content_path)"],
  ];

  test.each(PLACES)("%s: every built-in name is an invalid config key, with the path", (json: string, path: string, tail = "") => {
    const prototypeKeys = Object.getOwnPropertyNames(Object.prototype);
    for (const name of BUILT_INS) {
      const doc: unknown = JSON.parse(json.replace("@", name));
      expect(() => parseConfigJson("k.json", doc)).toThrow(new ConfigError(`k.json: invalid config key ${path.replace("@", name)}${tail}`));
    }
    expect(Object.getOwnPropertyNames(Object.prototype)).toEqual(prototypeKeys);
  });

  test("the example from the bug report is refused at its first built-in key", () => {
    const doc: unknown = JSON.parse('{"datacenter":"dc1","constructor":1,"ports":{"toString":5}}');
    expect(() => parseConfigJson("F", doc)).toThrow(new ConfigError("F: invalid config key constructor"));
  });

  test("the known keys of those blocks still parse", () => {
    const source = parseConfigJson("k.json", {
      datacenter: "dc1",
      ports: { http: 1, grpc: 2, server: 3, serf_lan: 4, serf_wan: 5, dns: 6, sidecar_min_port: 7, sidecar_max_port: 8, expose_min_port: 9, expose_max_port: 10 },
      xds: { update_max_per_second: 5, proxyless_clients: ["web"] },
      autopilot: { min_quorum: 3, last_contact_threshold: "1s" },
      acl: { enabled: true, token_ttl: "1s", tokens: { agent: "a", initial_management: "m" } },
      acl_token: "t",
      dns_config: { allow_stale: false, soa: { refresh: 60 } },
      telemetry: { disable_hostname: true },
      connect: { enabled: true },
      ui_config: { enabled: true },
    });
    expect(source).toEqual({
      datacenter: "dc1",
      ports: { http: 1, grpc: 2, server: 3, serfLan: 4, serfWan: 5, dns: 6, sidecarMin: 7, sidecarMax: 8, exposeMin: 9, exposeMax: 10 },
      xds: { updateMaxPerSecond: 5, proxylessClients: ["web"] },
      autopilot: { MinQuorum: 3, LastContactThresholdMs: 1000 },
      acl: { enabled: true, tokenTtlMs: 1000, tokens: { agent: "a", master: "m", default: "t" } },
      dns: { allowStale: false, soa: { refresh: 60, retry: 600, expire: 86400, minTtl: 0 } },
      telemetry: { disableHostname: true },
      connectEnabled: true,
      ui: { enabled: true },
    });
  });

  test("names a user chooses (node_meta keys, service_ttl service names) are values, kept as own keys", () => {
    const doc: unknown = JSON.parse('{"node_meta":{"constructor":"a","__proto__":"b"},"dns_config":{"service_ttl":{"constructor":"5s","__proto__":"10s"}}}');
    const source = parseConfigJson("k.json", doc);
    expect(Object.entries(source.nodeMeta!)).toEqual([["constructor", "a"], ["__proto__", "b"]]);
    expect(Object.entries(source.dns!.serviceTtl!)).toEqual([["constructor", 5], ["__proto__", 10]]);
    expect(Object.getPrototypeOf(source.dns!.serviceTtl)).toBe(Object.prototype);
  });
});
