import { describe, expect, test } from "bun:test";
import { AgentError } from "./errors.ts";
import { definitionsFromConfig, parseCheckRegistration, parseServiceRegistration } from "./registration.ts";

function errorOf(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(AgentError);
    expect((err as AgentError).kind).toBe("bad-request");
    return (err as Error).message;
  }
  throw new Error("expected an AgentError");
}

describe("parseServiceRegistration", () => {
  test("decodes api.AgentServiceRegistration with its checks", () => {
    const reg = parseServiceRegistration({
      ID: "web-1", Name: "web", Tags: ["v1"], Port: 8080, Address: "10.0.0.5",
      TaggedAddresses: { lan: { Address: "10.0.0.5", Port: 8080 }, wan: { Address: "1.2.3.4", Port: 80 } },
      Meta: { version: "1" }, Weights: { Passing: 10, Warning: 1 }, EnableTagOverride: true,
      Check: { TTL: "15s", Status: "passing" },
      Checks: [{ HTTP: "http://127.0.0.1:8080/health", Interval: "10s", Timeout: "2s", Header: { X: ["a"] }, Method: "POST", Body: "{}" }, { TCP: "127.0.0.1:8080", Interval: 5_000_000_000 }],
    });
    expect(reg).toMatchObject({ ID: "web-1", Name: "web", Tags: ["v1"], Port: 8080, EnableTagOverride: true, Weights: { Passing: 10, Warning: 1 } });
    expect(reg.TaggedAddresses?.wan).toEqual({ Address: "1.2.3.4", Port: 80 });
    expect(reg.Checks.map((c) => [c.TTLMs, c.HTTP, c.IntervalMs, c.TimeoutMs, c.Status])).toEqual([
      [15_000, "", 0, 0, "passing"],
      [0, "http://127.0.0.1:8080/health", 10_000, 2_000, ""],
      [0, "", 5_000, 0, ""],
    ]);
    expect(reg.Checks[1]!.Header).toEqual({ X: ["a"] });
  });

  test("accepts snake_case and any letter case like Consul's decoders", () => {
    const reg = parseServiceRegistration({
      name: "web", enable_tag_override: true, tagged_addresses: { lan: { address: "10.0.0.1", port: 1 } },
      meta: { Some_Key: "v" }, check: { ttl: "10s", deregister_critical_service_after: "90m" },
      connect: { sidecar_service: { port: 21000, proxy: { local_service_port: 80, upstreams: [{ destination_name: "db", local_bind_port: 9000 }] } } },
    });
    expect(reg.EnableTagOverride).toBe(true);
    expect(reg.Meta).toEqual({ Some_Key: "v" });
    expect(reg.TaggedAddresses).toEqual({ lan: { Address: "10.0.0.1", Port: 1 } });
    expect(reg.Checks[0]!.DeregisterCriticalServiceAfterMs).toBe(90 * 60_000);
    const sidecar = reg.Connect?.SidecarService;
    expect(sidecar?.Port).toBe(21000);
    expect(sidecar?.Proxy?.LocalServicePort).toBe(80);
    expect(sidecar?.Proxy?.Upstreams).toEqual([
      { DestinationType: "service", DestinationNamespace: "", DestinationName: "db", Datacenter: "", LocalBindAddress: "", LocalBindPort: 9000, MeshGateway: {} },
    ]);
  });

  test("an empty or null Check is ignored (api clients send null)", () => {
    expect(parseServiceRegistration({ Name: "a", Check: null, Checks: null }).Checks).toEqual([]);
    expect(parseServiceRegistration({ Name: "a", Check: {} }).Checks).toEqual([]);
  });

  const cases: [string, unknown, string][] = [
    ["not an object", [], "Request decode failed: json: cannot unmarshal array into Go struct field ServiceDefinition of type struct"],
    ["wrong type", { Name: "a", Port: "80" }, "Request decode failed: json: cannot unmarshal string into Go struct field ServiceDefinition.Port of type int"],
    ["bad duration", { Name: "a", Check: { TTL: "10x" } }, `Request decode failed: invalid "TTL": time: invalid duration "10x"`],
    ["bad header", { Name: "a", Check: { HTTP: "http://x", Interval: "1s", Header: { A: "b" } } }, `Request decode failed: invalid "Header": agent: invalid format of 'header' field`],
    ["missing name", { Port: 80 }, "Missing service name"],
    ["any address", { Name: "a", Address: "0.0.0.0" }, "Invalid service address"],
    ["weights passing", { Name: "a", Weights: { Passing: 0, Warning: 1 } }, "Invalid Weights: Passing must be greater than 0"],
    ["weights warning", { Name: "a", Weights: { Passing: 1, Warning: -1 } }, "Invalid Weights: Warning must be greater or equal than 0"],
    ["weights range", { Name: "a", Weights: { Passing: 70000, Warning: 1 } }, "Invalid Weights: DNS Weight must be between 0 and 65535"],
    ["meta chars", { Name: "a", Meta: { "a b": "v" } }, "Invalid Service Meta: Couldn't load metadata pair ('a b', 'v'): Key contains invalid characters"],
    ["meta reserved", { Name: "a", Meta: { "consul-x": "v" } }, "Invalid Service Meta: Couldn't load metadata pair ('consul-x', 'v'): Key prefix 'consul-' is reserved for internal use"],
    // Consul quotes the whole value; an oversized one is cut short here.
    ["meta value", { Name: "a", Meta: { k: "x".repeat(513) } }, `Invalid Service Meta: Couldn't load metadata pair ('k', '${"x".repeat(32)}...'): Value is too long (limit: 512 characters)`],
    ["meta count", { Name: "a", Meta: Object.fromEntries(Array.from({ length: 65 }, (_, i) => [`k${i}`, "v"])) }, "Invalid Service Meta: Node metadata cannot contain more than 64 key/value pairs"],
    ["proxy without destination", { Name: "p", Kind: "connect-proxy", Port: 21000 }, "1 error occurred:\n\t* Proxy.DestinationServiceName must be non-empty for Connect proxy services\n\n"],
    ["proxy without port", { Name: "p", Kind: "connect-proxy", Proxy: { DestinationServiceName: "web" } }, "1 error occurred:\n\t* Port must be set for a Connect proxy\n\n"],
    ["duplicate upstream bind", { Name: "p", Kind: "connect-proxy", Port: 1, Proxy: { DestinationServiceName: "web", Upstreams: [{ DestinationName: "a", LocalBindPort: 9 }, { DestinationName: "b", LocalBindPort: 9 }] } },
      `1 error occurred:\n\t* upstreams cannot contain duplicates by local bind address and port; "127.0.0.1:9" is specified twice\n\n`],
    ["gateway without port", { Name: "gw", Kind: "mesh-gateway", Proxy: { Upstreams: [{ DestinationName: "a", LocalBindPort: 1 }] } },
      "2 errors occurred:\n\t* Port must be non-zero for a mesh-gateway\n\t* The Proxy.Upstreams configuration is invalid for a mesh-gateway\n\n"],
    ["sidecar with ID", { Name: "a", Connect: { SidecarService: { ID: "x" } } }, "1 error occurred:\n\t* A SidecarService cannot specify an ID as this is managed by the agent\n\n"],
    ["ttl zero", { Name: "a", Check: { Name: "c" } }, "Invalid check: TTL must be > 0 for TTL checks"],
    ["http without interval", { Name: "a", Checks: [{ HTTP: "http://x" }] }, "Invalid check: Interval must be > 0 for Script, HTTP, or TCP checks"],
    ["interval and ttl", { Name: "a", Check: { TCP: "x:1", Interval: "1s", TTL: "1s" } }, "Invalid check: Interval and TTL cannot both be specified"],
    ["script without interval", { Name: "a", Check: { Args: ["/bin/true"] } }, "Invalid check: Interval must be > 0 for Script, HTTP, or TCP checks"],
    // Consul's IsScript is Args only: a container ID alone is a check of no kind.
    ["docker without args", { Name: "a", Check: { DockerContainerID: "abc", Interval: "10s" } }, "Invalid check: TTL must be > 0 for TTL checks"],
    ["grpc without interval", { Name: "a", Check: { GRPC: "127.0.0.1:1" } }, "Invalid check: Interval must be > 0 for Script, HTTP, or TCP checks"],
    ["alias with ttl", { Name: "a", Check: { AliasService: "db", TTL: "10s" } }, "Invalid check: TTL must be not be set for Alias checks"],
    ["alias with http", { Name: "a", Check: { AliasNode: "n2", HTTP: "http://x/", Interval: "10s" } }, "Invalid check: Interval cannot be set for Alias checks"],
    ["bad status", { Name: "a", Check: { TTL: "1s", Status: "ok" } }, "Status for checks must 'passing', 'warning', 'critical'"],
    ["sidecar check", { Name: "a", Connect: { SidecarService: { Check: { TCP: "foo" } } } }, "Invalid check in sidecar_service: Interval must be > 0 for Script, HTTP, or TCP checks"],
    ["sidecar meta", { Name: "a", Connect: { SidecarService: { Meta: { "consul-x": "1" } } } },
      "Invalid SidecarService: Couldn't load metadata pair ('consul-x', '1'): Key prefix 'consul-' is reserved for internal use"],
    ["tagged ipv4", { Name: "a", TaggedAddresses: { lan_ipv4: { Address: "::1", Port: 1 } } }, `Service tagged address "lan_ipv4" must be a valid ipv4 address`],
    ["bad mesh gateway mode", { Name: "a", Kind: "mesh-gateway", Port: 443, Proxy: { MeshGateway: { Mode: "far" } } }, `Invalid Mesh Gateway Mode: "far"`],
  ];
  for (const [name, body, message] of cases) {
    test(`rejects: ${name}`, () => expect(errorOf(() => parseServiceRegistration(body))).toBe(message));
  }

  test("mesh gateways may carry the consul-wan-federation meta key", () => {
    expect(parseServiceRegistration({ Name: "gw", Kind: "mesh-gateway", Port: 443, Meta: { "consul-wan-federation": "1" } }).Meta)
      .toEqual({ "consul-wan-federation": "1" });
  });
});

describe("parseCheckRegistration", () => {
  test("decodes api.AgentCheckRegistration; the ID defaults to the name", () => {
    const c = parseCheckRegistration({ Name: "mem", ServiceID: "web", Notes: "n", TTL: "30s", Status: "warning" });
    expect(c).toMatchObject({ CheckID: "mem", Name: "mem", ServiceID: "web", Notes: "n", TTLMs: 30_000, Status: "warning" });
    expect(parseCheckRegistration({ ID: "x", Name: "mem", TTL: "1s" }).CheckID).toBe("x");
    expect(parseCheckRegistration({ CheckID: "y", Name: "mem", TTL: "1s" }).CheckID).toBe("y");
    const http = parseCheckRegistration({ name: "h", http: "https://x/", tls_skip_verify: true, interval: "5s", service_id: "s" });
    expect(http).toMatchObject({ HTTP: "https://x/", TLSSkipVerify: true, IntervalMs: 5_000, ServiceID: "s" });
  });

  test("decodes script, Docker, gRPC and alias checks (API and config-file spellings)", () => {
    expect(parseCheckRegistration({ Name: "s", Args: ["/bin/check", "-v"], Interval: "10s", Timeout: "2s" }))
      .toMatchObject({ ScriptArgs: ["/bin/check", "-v"], IntervalMs: 10_000, TimeoutMs: 2_000 });
    expect(parseCheckRegistration({ name: "s", script_args: ["x"], interval: "1s" }).ScriptArgs).toEqual(["x"]);
    expect(parseCheckRegistration({ name: "d", docker_container_id: "f972c95ebf0e", shell: "/bin/bash", args: ["/bin/true"], interval: "10s" }))
      .toMatchObject({ DockerContainerID: "f972c95ebf0e", Shell: "/bin/bash", ScriptArgs: ["/bin/true"] });
    expect(parseCheckRegistration({ Name: "g", GRPC: "127.0.0.1:9/my.Svc", GRPCUseTLS: true, TLSSkipVerify: true, Interval: "10s" }))
      .toMatchObject({ GRPC: "127.0.0.1:9/my.Svc", GRPCUseTLS: true, TLSSkipVerify: true });
    expect(parseCheckRegistration({ name: "g", grpc: "h:1", grpc_use_tls: true, interval: "1s" })).toMatchObject({ GRPC: "h:1", GRPCUseTLS: true });
    const alias = parseCheckRegistration({ Name: "a", AliasNode: "n2", AliasService: "db" });
    expect(alias).toMatchObject({ AliasNode: "n2", AliasService: "db", TTLMs: 0, IntervalMs: 0 });
    expect(parseCheckRegistration({ name: "a", alias_service: "web" }).AliasService).toBe("web");
    // Unset kinds leave no fields behind (persisted records stay as they were).
    expect(Object.keys(parseCheckRegistration({ Name: "t", TTL: "1s" }))).not.toContain("ScriptArgs");
  });

  const cases: [string, unknown, string][] = [
    ["decode", { Name: "a", TTL: 5 }, ""],
    ["missing name", { TTL: "1s" }, "Missing check name"],
    ["bad status", { Name: "a", TTL: "1s", Status: "up" }, "Bad check status"],
    ["no type", { Name: "a" }, "Invalid check: TTL must be > 0 for TTL checks"],
    ["tcp without interval", { Name: "a", TCP: "h:1" }, "Invalid check: Interval must be > 0 for Script, HTTP, or TCP checks"],
    // Consul 1.8 no longer reads the pre-1.0 Script string: what is left is a check of no kind.
    ["legacy script", { Name: "a", Script: "/bin/true", Interval: "1s" }, "Invalid check: TTL must be > 0 for TTL checks"],
    ["bad interval", { Name: "a", TCP: "h:1", Interval: true }, `Request decode failed: invalid "Interval": invalid format`],
  ];
  for (const [name, body, message] of cases) {
    if (message === "") {
      test("durations may be nanosecond numbers", () => expect(parseCheckRegistration(body).TTLMs).toBe(5e-6));
      continue;
    }
    test(`rejects: ${name}`, () => expect(errorOf(() => parseCheckRegistration(body))).toBe(message));
  }
});

describe("definitionsFromConfig", () => {
  test("reads service, services, check and checks blocks in config-file snake_case", () => {
    const defs = definitionsFromConfig({
      datacenter: "dc1",
      service: { name: "web", port: 80, check: { id: "web-alive", http: "http://localhost/", interval: "10s" } },
      services: [{ name: "db", id: "db-1", tags: ["primary"], checks: [{ tcp: "localhost:5432", interval: "5s" }, { ttl: "30s", name: "db-ttl" }] }],
      check: { id: "mem", name: "Memory", ttl: "1m" },
      checks: [{ name: "disk", service_id: "db-1", ttl: "1m" }],
    });
    expect(defs.services.map((s) => [s.Name, s.ID, s.Checks.length])).toEqual([["web", "", 1], ["db", "db-1", 2]]);
    expect(defs.services[0]!.Checks[0]!.CheckID).toBe("web-alive");
    expect(defs.checks.map((c) => [c.CheckID, c.ServiceID])).toEqual([["mem", ""], ["disk", "db-1"]]);
  });

  test("names the block that failed", () => {
    expect(errorOf(() => definitionsFromConfig({ services: [{ name: "a" }, { port: 1 }] }))).toBe("services[1]: Missing service name");
    expect(errorOf(() => definitionsFromConfig({ check: { name: "x", args: ["/bin/true"] } })))
      .toBe("check: Invalid check: Interval must be > 0 for Script, HTTP, or TCP checks");
  });

  test("ignores configs without definitions", () => {
    expect(definitionsFromConfig({ datacenter: "dc1" })).toEqual({ services: [], checks: [], serviceTokens: [], checkTokens: [] });
    expect(definitionsFromConfig(null)).toEqual({ services: [], checks: [], serviceTokens: [], checkTokens: [] });
  });
});

describe("size limits on what the catalog indexes and matches", () => {
  const long = (n: number) => "x".repeat(n);
  test("service names, IDs and tags up to 512 bytes, 256 tags, 64 checks pass", () => {
    const checks = Array.from({ length: 64 }, (_, i) => ({ CheckID: `c${i}`, TTL: "10s" }));
    const reg = parseServiceRegistration({ Name: long(512), ID: long(512), Tags: Array.from({ length: 256 }, () => long(512)), Checks: checks });
    expect([reg.Name.length, reg.Tags?.length, reg.Checks.length]).toEqual([512, 256, 64]);
  });

  test.each([
    ["a long name", { Name: long(513) }, "Service name is too long (limit: 512 bytes)"],
    ["a long name in UTF-8 bytes", { Name: "é".repeat(257) }, "Service name is too long (limit: 512 bytes)"],
    ["a long ID", { Name: "a", ID: long(513) }, "Service ID is too long (limit: 512 bytes)"],
    ["a long tag", { Name: "a", Tags: ["ok", long(513)] }, "Service tag is too long (limit: 512 bytes)"],
    ["too many tags", { Name: "a", Tags: Array.from({ length: 257 }, (_, i) => `t${i}`) }, "Service has too many tags (limit: 256)"],
    ["too many checks", { Name: "a", Checks: Array.from({ length: 65 }, (_, i) => ({ CheckID: `c${i}`, TTL: "10s" })) }, "Service has too many checks (limit: 64)"],
    ["a long check ID", { Name: "a", Check: { CheckID: long(513), TTL: "10s" } }, "Check ID is too long (limit: 512 bytes)"],
    ["a long sidecar name", { Name: "a", Port: 1, Connect: { SidecarService: { Name: long(600) } } }, "Service name is too long (limit: 512 bytes)"],
  ])("%s is refused", (_what: string, body: unknown, message: string) => {
    expect(errorOf(() => parseServiceRegistration(body))).toBe(message);
  });

  test("an upstream's datacenter must be a datacenter name", () => {
    const proxy = (dc: string) => ({ Name: "p", Kind: "connect-proxy", Port: 1, Proxy: { DestinationServiceName: "web", Upstreams: [{ DestinationName: "db", Datacenter: dc, LocalBindPort: 9 }] } });
    expect(errorOf(() => parseServiceRegistration(proxy("dc 2")))).toBe(`1 error occurred:\n\t* Invalid upstream datacenter name "dc 2": a datacenter name is up to 63 letters, digits, '-' and '_'\n\n`);
    expect(parseServiceRegistration(proxy("dc-2")).Proxy?.Upstreams?.[0]?.Datacenter).toBe("dc-2");
  });

  test("check registrations: name, ID and service ID", () => {
    expect(errorOf(() => parseCheckRegistration({ Name: long(513), TTL: "10s" }))).toBe("Check name is too long (limit: 512 bytes)");
    expect(errorOf(() => parseCheckRegistration({ Name: "a", ID: long(513), TTL: "10s" }))).toBe("Check ID is too long (limit: 512 bytes)");
    expect(errorOf(() => parseCheckRegistration({ Name: "a", ServiceID: long(513), TTL: "10s" }))).toBe("Check service ID is too long (limit: 512 bytes)");
  });
});

describe("service ports", () => {
  const refusal = (body: unknown) => {
    try {
      parseServiceRegistration(body);
    } catch (err) {
      return (err as Error).message;
    }
    return "accepted";
  };

  test("every port of a registration is a TCP port (0-65535): the service's, tagged, proxy, upstream, expose and sidecar", () => {
    expect(refusal({ Name: "web", Port: 65535 })).toBe("accepted");
    expect(refusal({ Name: "web", Port: 65536 })).toBe("Invalid port 65536 in Service.Port: must be between 0 and 65535");
    expect(refusal({ Name: "web", Port: -1 })).toContain("Service.Port");
    expect(refusal({ Name: "web", TaggedAddresses: { wan: { Address: "1.2.3.4", Port: 70000 } } })).toContain("Service.TaggedAddresses[wan].Port");
    expect(refusal({ Name: "p", Kind: "connect-proxy", Port: 21000, Proxy: { DestinationServiceName: "web", Upstreams: [{ DestinationName: "db", LocalBindPort: 99999 }] } }))
      .toContain("Service.Proxy.Upstreams[0].LocalBindPort");
    expect(refusal({ Name: "web", Port: 80, Connect: { SidecarService: { Port: 100000 } } })).toContain("Service.Connect.SidecarService.Port");
  });
});
