import { describe, expect, test } from "bun:test";
import { buildConfig, defaultConfig, parseConfigJson } from "./config.ts";
import { debugConfig } from "./debug_config.ts";

const actual = { dataDir: "/var/lib/causeway", nodeId: "0f8a4a52-5a52-4d8e-9a3c-2ef3a0c1d5b0", advertiseAddr: "10.0.0.5", addresses: { http: "127.0.0.1:18500" } };

describe("DebugConfig", () => {
  test("secrets read hidden, durations are Go durations, bound ports win over configured ones", () => {
    const config = buildConfig(defaultConfig("host-1"), [parseConfigJson("test.json", {
      data_dir: "/var/lib/causeway",
      encrypt: "pUqJrVyVRj5jsiYEkM/tFQYfWyJIv4s3XkvDwy7Cu5s=",
      ca_file: "ca.pem", cert_file: "agent.pem", key_file: "agent-key.pem",
      retry_join: ["10.0.0.1"], retry_interval: "15s",
      autopilot: { cleanup_dead_servers: false, last_contact_threshold: "1s" },
    })]);
    const d = debugConfig(config, actual);
    expect(d).toMatchObject({
      NodeName: "host-1", EncryptKey: "hidden", KeyFile: "hidden", CertFile: "agent.pem", CAFile: "ca.pem",
      RetryJoinLAN: ["10.0.0.1"], RetryJoinIntervalLAN: "15s", HTTPPort: 18500,
      AutopilotCleanupDeadServers: false, AutopilotLastContactThreshold: "1s", AutopilotServerStabilizationTime: "10s", AutopilotMaxTrailingLogs: 250,
    });
    expect(JSON.stringify(d)).not.toContain("pUqJrVyVRj5jsiYEkM");
  });

  test("unset secrets stay empty rather than hidden", () => {
    const d = debugConfig(buildConfig(defaultConfig("host-1"), [parseConfigJson("t.json", { data_dir: "/d" })]), actual);
    expect(d).toMatchObject({ EncryptKey: "", KeyFile: "" });
  });
});

describe("WAN federation in DebugConfig", () => {
  test("Consul's RuntimeConfig names; the interval is a Go duration; primary_datacenter defaults to the datacenter", () => {
    const off = debugConfig(buildConfig(defaultConfig("s1"), [parseConfigJson("t.json", { data_dir: "/d", datacenter: "dc2" })]), actual);
    expect(off).toMatchObject({
      PrimaryDatacenter: "dc2", ConnectMeshGatewayWANFederationEnabled: false, PrimaryGateways: [], PrimaryGatewaysInterval: "30s", DisablePrimaryGatewayFallback: false,
    });
    const on = debugConfig(buildConfig(defaultConfig("s1"), [parseConfigJson("t.json", {
      data_dir: "/d", server: true, datacenter: "dc2", primary_datacenter: "dc1",
      connect: { enable_mesh_gateway_wan_federation: true }, primary_gateways: ["10.0.0.1:8443"], primary_gateways_interval: "1m30s", disable_primary_gateway_fallback: true,
      ca_file: "ca.pem", cert_file: "s1.pem", key_file: "s1-key.pem", verify_incoming_rpc: true, verify_outgoing: true, verify_server_hostname: true,
    })]), actual);
    expect(on).toMatchObject({
      PrimaryDatacenter: "dc1", ConnectMeshGatewayWANFederationEnabled: true, PrimaryGateways: ["10.0.0.1:8443"], PrimaryGatewaysInterval: "1m30s", DisablePrimaryGatewayFallback: true,
    });
  });
});

describe("autopilot config block", () => {
  test("unknown keys and wrong types are refused naming the key", () => {
    expect(() => parseConfigJson("a.json", { autopilot: { cleanup_dead: true } })).toThrow("a.json: invalid config key autopilot.cleanup_dead");
    expect(() => parseConfigJson("a.json", { autopilot: { max_trailing_logs: "x" } })).toThrow("autopilot.max_trailing_logs");
    expect(() => parseConfigJson("a.json", { autopilot: 3 })).toThrow('"autopilot" must be an object');
  });
  test("later sources override key by key", () => {
    const c = buildConfig(defaultConfig("h"), [
      parseConfigJson("1.json", { data_dir: "/d", autopilot: { min_quorum: 3, max_trailing_logs: 10 } }),
      parseConfigJson("2.json", { autopilot: { max_trailing_logs: 20 } }),
    ]);
    expect(c.autopilot).toEqual({ MinQuorum: 3, MaxTrailingLogs: 20 });
  });
});

describe("xds config block", () => {
  test("update_max_per_second and proxyless_clients; 0 is unlimited, a negative rate and unknown keys are refused", () => {
    const c = buildConfig(defaultConfig("h"), [parseConfigJson("x.json", { data_dir: "/d", xds: { update_max_per_second: 0, proxyless_clients: ["grpc-app"] } })]);
    expect(c.xds).toEqual({ updateMaxPerSecond: 0, proxylessClients: ["grpc-app"] });
    expect(buildConfig(defaultConfig("h"), [parseConfigJson("x.json", { data_dir: "/d" })]).xds.updateMaxPerSecond).toBe(250);
    expect(() => buildConfig(defaultConfig("h"), [parseConfigJson("x.json", { data_dir: "/d", xds: { update_max_per_second: -1 } })])).toThrow("x.json: xds.update_max_per_second must be a non-negative integer, got -1");
    expect(() => parseConfigJson("x.json", { xds: { rate: 1 } })).toThrow("x.json: invalid config key xds.rate");
  });
});

describe("sidecar and expose port ranges", () => {
  test("set in the ports block; a range whose minimum passes its maximum is refused", () => {
    const c = buildConfig(defaultConfig("h"), [parseConfigJson("p.json", { data_dir: "/d", ports: { expose_min_port: 22000, expose_max_port: 22010, sidecar_min_port: 23000, sidecar_max_port: 23100 } })]);
    expect([c.ports.exposeMin, c.ports.exposeMax, c.ports.sidecarMin, c.ports.sidecarMax]).toEqual([22000, 22010, 23000, 23100]);
    expect(() => buildConfig(defaultConfig("h"), [parseConfigJson("p.json", { data_dir: "/d", ports: { expose_min_port: 22000, expose_max_port: 21999 } })]))
      .toThrow("ports.expose_min_port 22000 must not exceed ports.expose_max_port 21999");
  });
});
