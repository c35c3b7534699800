import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runCommand as run } from "../../../../test/harness/cli_agent.ts";
import { startRecordingAgent, type FakeRoute, type RecordingAgent } from "../../../../test/harness/cli_http_fake.ts";
import { createConnectCommand } from "../connect.ts";

const dir = mkdtempSync(join(tmpdir(), "causeway-envoy-cli-"));
const emptyBin = join(dir, "empty-bin");
const fakeBin = join(dir, "fake-bin");
const caFile = join(dir, "ca.pem");
const CA_PEM = "-----BEGIN CERTIFICATE-----\nMIIBfakeCA\n-----END CERTIFICATE-----\n";
let agent: RecordingAgent;

beforeAll(async () => {
  agent = await startRecordingAgent();
  mkdirSync(emptyBin);
  mkdirSync(fakeBin);
  writeFileSync(caFile, CA_PEM);
  // A stand-in for envoy: records its arguments and the bootstrap it can read from fd 3, exits 7.
  const script = join(fakeBin, "envoy");
  writeFileSync(script, `#!/bin/sh\nprintf '%s\\n' "$@" > "${dir}/args"\ncat "$2" > "${dir}/bootstrap.json"\nexit 7\n`);
  chmodSync(script, 0o755);
});
afterAll(async () => {
  await agent.close();
  rmSync(dir, { recursive: true, force: true });
});

function connectWith(env: Record<string, string> = {}) {
  return createConnectCommand({ env: () => ({ CONSUL_HTTP_ADDR: agent.url, PATH: emptyBin, ...env }), readStdin: async () => new Uint8Array() });
}

const proxy = (id: string, dest: string) => ({ Kind: "connect-proxy", ID: id, Service: `${dest}-sidecar-proxy`, Proxy: { DestinationServiceName: dest, DestinationServiceID: dest } });
const SERVICES = {
  web: { Kind: "", ID: "web", Service: "web" },
  "web-sidecar-proxy": proxy("web-sidecar-proxy", "web"),
  "db-sidecar-proxy": proxy("db-sidecar-proxy", "db"),
};
const REGISTRATION = { ...proxy("web-sidecar-proxy", "web"), Proxy: { DestinationServiceName: "web", DestinationServiceID: "web", Config: { envoy_stats_flush_interval: "10s" } } };

function routes(extra: Record<string, FakeRoute> = {}): Record<string, FakeRoute> {
  return {
    "GET /v1/agent/services": { body: SERVICES },
    "GET /v1/agent/self": { body: { Config: {}, DebugConfig: { GRPCPort: 8503 } } },
    "GET /v1/agent/service/web-sidecar-proxy": { body: REGISTRATION },
    ...extra,
  };
}

type Bootstrap = {
  node: { id: string; cluster: string };
  stats_flush_interval?: string;
  static_resources: { clusters: { type: string; transport_socket?: unknown; load_assignment: { endpoints: { lb_endpoints: { endpoint: { address: unknown } }[] }[] } }[] };
  dynamic_resources: { ads_config: { grpc_services: { initial_metadata: { value: string }[] }[] } };
};
const agentAddress = (b: Bootstrap) => b.static_resources.clusters[0]!.load_assignment.endpoints[0]!.lb_endpoints[0]!.endpoint.address;

describe("causeway connect envoy -bootstrap", () => {
  test("-sidecar-for finds the proxy, reads its config and the gRPC port from the agent", async () => {
    agent.reset(routes());
    const { code, out, err } = await run(connectWith(), ["envoy", "-sidecar-for", "web", "-token", "t0k", "-bootstrap"]);
    expect(err).toBe("");
    expect(code).toBe(0);
    const b = JSON.parse(out) as Bootstrap;
    expect(b.node.id).toBe("web-sidecar-proxy");
    expect(b.node.cluster).toBe("web");
    expect(b.stats_flush_interval).toBe("10s");
    expect(agentAddress(b)).toEqual({ socket_address: { address: "127.0.0.1", port_value: 8503 } });
    expect(b.static_resources.clusters[0]!.transport_socket).toBeUndefined();
    expect(b.dynamic_resources.ads_config.grpc_services[0]!.initial_metadata[0]!.value).toBe("t0k");
    expect(agent.lines()).toEqual(["GET /v1/agent/services", "GET /v1/agent/self", "GET /v1/agent/service/web-sidecar-proxy"]);
    expect(agent.requests.every((r) => r.headers.get("x-consul-token") === "t0k")).toBe(true);
  });

  test("-proxy-id with an https -grpc-addr and -ca-file: TLS to the agent with its CA", async () => {
    agent.reset(routes());
    const { code, out } = await run(connectWith(), ["envoy", "-proxy-id", "web-sidecar-proxy", "-grpc-addr", "https://localhost:8502", "-ca-file", caFile, "-bootstrap"]);
    expect(code).toBe(0);
    const b = JSON.parse(out) as Bootstrap;
    expect(agentAddress(b)).toEqual({ socket_address: { address: "127.0.0.1", port_value: 8502 } });
    expect(b.static_resources.clusters[0]!.transport_socket).toEqual({
      name: "tls",
      typed_config: {
        "@type": "type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext",
        common_tls_context: { validation_context: { trusted_ca: { inline_string: CA_PEM } } },
      },
    });
    expect(agent.lines()).toEqual(["GET /v1/agent/service/web-sidecar-proxy"]);
  });

  test("CONSUL_GRPC_ADDR, unix sockets, host names, CONSUL_HTTP_TOKEN and -no-central-config", async () => {
    agent.reset(routes());
    const unix = await run(connectWith({ CONSUL_GRPC_ADDR: "unix:///run/agent.sock", CONSUL_HTTP_TOKEN: "envtok" }), ["envoy", "-proxy-id", "web-sidecar-proxy", "-no-central-config", "-bootstrap"]);
    const b = JSON.parse(unix.out) as Bootstrap;
    expect(agentAddress(b)).toEqual({ pipe: { path: "/run/agent.sock" } });
    expect(b.node.cluster).toBe("web-sidecar-proxy");
    expect(b.dynamic_resources.ads_config.grpc_services[0]!.initial_metadata[0]!.value).toBe("envtok");
    expect(agent.lines()).toEqual([]);

    const dns = await run(connectWith({ CONSUL_GRPC_ADDR: "http://agent.internal:8502" }), ["envoy", "-proxy-id", "web-sidecar-proxy", "-bootstrap"]);
    const d = JSON.parse(dns.out) as Bootstrap;
    expect(d.static_resources.clusters[0]!.type).toBe("LOGICAL_DNS");
    expect(agentAddress(d)).toEqual({ socket_address: { address: "agent.internal", port_value: 8502 } });
  });

  test("an agent without a gRPC port: a warning on stderr and port 8502", async () => {
    agent.reset(routes({ "GET /v1/agent/self": { body: { DebugConfig: { GRPCPort: -1 } } } }));
    const { code, out, err } = await run(connectWith(), ["envoy", "-proxy-id", "web-sidecar-proxy", "-bootstrap"]);
    expect(code).toBe(0);
    expect(err).toContain("-grpc-addr not provided and unable to discover a gRPC address for xDS. Defaulting to localhost:8502");
    expect(agentAddress(JSON.parse(out) as Bootstrap)).toEqual({ socket_address: { address: "127.0.0.1", port_value: 8502 } });
  });
});

describe("causeway connect envoy errors", () => {
  const fails = async (args: string[], message: string, env: Record<string, string> = {}) => {
    const { code, out, err } = await run(connectWith(env), ["envoy", ...args]);
    expect(out).toBe("");
    expect(code).toBe(1);
    expect(err).toContain(message);
  };

  test("no sidecar, several sidecars, no proxy ID", async () => {
    agent.reset(routes());
    await fails(["-sidecar-for", "api", "-bootstrap"], "No sidecar proxy registered for api\n");
    agent.reset(routes({ "GET /v1/agent/services": { body: { ...SERVICES, "web-proxy-2": proxy("web-proxy-2", "web") } } }));
    await fails(["-sidecar-for", "web", "-bootstrap"], "More than one sidecar proxy registered for web.\n    Start proxy with -proxy-id and one of the following IDs: web-proxy-2, web-sidecar-proxy\n");
    await fails(["-bootstrap"], "No proxy ID specified. One of -proxy-id, -sidecar-for, or -gateway is required");
    agent.reset({});
    await fails(["-sidecar-for", "web", "-bootstrap"], "Failed looking up sidecar proxy info for web: Unexpected response code: 404 (not found)");
  });

  test("an unknown proxy, a service that is not a proxy, a bad Proxy.Config, bad addresses", async () => {
    agent.reset(routes({ "GET /v1/agent/service/web": { body: SERVICES.web } }));
    await fails(["-proxy-id", "nope", "-grpc-addr", "127.0.0.1:8502", "-bootstrap"], "failed fetch proxy config from local agent: Unexpected response code: 404");
    await fails(["-proxy-id", "web", "-grpc-addr", "127.0.0.1:8502", "-bootstrap"], "service is not a Connect proxy or gateway");
    agent.reset(routes({ "GET /v1/agent/service/web-sidecar-proxy": { body: { ...REGISTRATION, Proxy: { Config: { envoy_extra_static_clusters_json: "{" } } } } }));
    await fails(["-proxy-id", "web-sidecar-proxy", "-grpc-addr", "127.0.0.1:8502", "-bootstrap"], "failed parsing envoy_extra_static_clusters_json");
    await fails(["-proxy-id", "x", "-grpc-addr", "127.0.0.1", "-bootstrap"], "Invalid Consul HTTP address: address 127.0.0.1: missing port in address");
    await fails(["-proxy-id", "x", "-grpc-addr", "127.0.0.1:8502", "-admin-bind", "localhost", "-bootstrap"], "Invalid Consul HTTP address: address localhost: missing port in address");
    await fails(["-proxy-id", "x", "-grpc-addr", "127.0.0.1:8502", "-ca-file", join(dir, "missing.pem"), "-bootstrap"], "Failed to read CA file:");
  });

  test("without -bootstrap and no envoy on PATH: exit 1 with an error naming -bootstrap", async () => {
    agent.reset(routes());
    const { code, out, err } = await run(connectWith(), ["envoy", "-sidecar-for", "web"]);
    expect(code).toBe(1);
    expect(out).toBe("");
    expect(err).toContain(`Couldn't find envoy binary: exec: "envoy": executable file not found in $PATH\n`);
    expect(err).toContain("Use the -bootstrap option");
    const missing = await run(connectWith(), ["envoy", "-sidecar-for", "web", "-envoy-binary", join(dir, "no-such-envoy")]);
    expect(missing.code).toBe(1);
    expect(missing.err).toContain(`Failed to exec envoy: fork/exec ${join(dir, "no-such-envoy")}: no such file or directory`);
    expect(missing.err).toContain("-bootstrap");
  });
});

describe("causeway connect envoy runs envoy", () => {
  test("found on PATH: the bootstrap on fd 3, hot restart off, pass-through arguments, envoy's exit code", async () => {
    agent.reset(routes());
    const expected = JSON.parse((await run(connectWith(), ["envoy", "-sidecar-for", "web", "-bootstrap"])).out) as unknown;
    const { code, out } = await run(connectWith({ PATH: `${emptyBin}:${fakeBin}` }), ["envoy", "-sidecar-for", "web", "--", "--log-level", "debug"]);
    expect(out).toBe("");
    expect(code).toBe(7);
    expect(readFileSync(join(dir, "args"), "utf8")).toBe("--config-path\n/dev/fd/3\n--disable-hot-restart\n--log-level\ndebug\n");
    expect(JSON.parse(readFileSync(join(dir, "bootstrap.json"), "utf8"))).toEqual(expected);
  });

  test("-envoy-binary, and a hot-restart option keeps hot restart on", async () => {
    agent.reset(routes());
    const { code } = await run(connectWith(), ["envoy", "-sidecar-for", "web", "-envoy-binary", join(fakeBin, "envoy"), "--", "--restart-epoch=1"]);
    expect(code).toBe(7);
    expect(readFileSync(join(dir, "args"), "utf8")).toBe("--config-path\n/dev/fd/3\n--restart-epoch=1\n");
  });
});
