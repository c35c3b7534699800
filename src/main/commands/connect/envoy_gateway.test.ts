/**
 * `causeway connect envoy -gateway=mesh` against a recording fake agent: flag checks (nothing is sent),
 * the exact registration body, finding a registered gateway, and the bootstrap, which must equal the
 * `mesh-gateway` golden that envoy_bootstrap.test.ts writes and strictly decodes.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { runCommand as run } from "../../../../test/harness/cli_agent.ts";
import { startRecordingAgent, type FakeRoute, type RecordingAgent } from "../../../../test/harness/cli_http_fake.ts";
import { createConnectEnvoyCommand } from "./envoy.ts";

const GOLDEN = join(dirname(fileURLToPath(import.meta.url)), "testdata", "envoy", "mesh-gateway.golden.json");
const dir = mkdtempSync(join(tmpdir(), "causeway-envoy-gw-"));
const emptyBin = join(dir, "empty-bin");
let agent: RecordingAgent;

beforeAll(async () => {
  agent = await startRecordingAgent();
  mkdirSync(emptyBin);
});
afterAll(async () => {
  await agent.close();
  rmSync(dir, { recursive: true, force: true });
});

/** This "host" owns loopback, a LAN and a WAN address, and an IPv6 one. */
const HOST_IPS = ["127.0.0.1", "::1", "10.1.2.3", "198.51.100.7", "2001:db8::5"];

function envoy(env: Record<string, string> = {}) {
  return createConnectEnvoyCommand({ env: () => ({ CONSUL_HTTP_ADDR: agent.url, PATH: emptyBin, ...env }), readStdin: async () => new Uint8Array() }, () => HOST_IPS);
}

/** The agent's view of a registered gateway (as GET /v1/agent/service/<id> renders one). */
const registered = (id: string, service: string) => ({
  Kind: "mesh-gateway",
  ID: id,
  Service: service,
  Port: 8443,
  Address: "",
  Proxy: { MeshGateway: {}, Expose: {}, Config: { envoy_gateway_no_default_bind: true, envoy_gateway_bind_tagged_addresses: true } },
});

function routes(extra: Record<string, FakeRoute> = {}): Record<string, FakeRoute> {
  return {
    "PUT /v1/agent/service/register": { body: "" },
    "GET /v1/agent/service/mesh-gateway": { body: registered("mesh-gateway", "mesh-gateway") },
    ...extra,
  };
}

const GRPC = ["-grpc-addr", "127.0.0.1:8502"];
const putBodies = () => agent.requests.filter((r) => r.method === "PUT").map((r) => r.text);

describe("connect envoy -gateway: flag checks send nothing", () => {
  const cases: Array<[string[], string, Record<string, string>?]> = [
    [["-mesh-gateway", "-gateway=mesh"], "The mesh-gateway flag is deprecated and cannot be used alongside the gateway flag\n"],
    [["-expose-servers"], "'-expose-servers' can only be used for mesh gateways\n"],
    [["-gateway=mesh", "-expose-servers"], "'-expose-servers' requires '-register'\n"],
    [["-mesh-gateway", "-expose-servers"], "'-expose-servers' requires '-register'\n"],
    [["-gateway=terminating", "-register", "-expose-servers"], "'-expose-servers' can only be used for mesh gateways\n"],
    [["-gateway=bogus"], "Gateway must be one of: terminating, mesh, or ingress\n"],
    [["-gateway=constructor"], "Gateway must be one of: terminating, mesh, or ingress\n"],
    [["-gateway=terminating", "-register"], "-gateway=terminating is not supported: Causeway only supports -gateway=mesh"],
    [["-gateway=ingress"], "-gateway=ingress is not supported: Causeway only supports -gateway=mesh"],
    [["-register"], "Auto-Registration can only be used for gateways\n"],
    [["-register", "-proxy-id", "web-sidecar-proxy"], "Auto-Registration can only be used for gateways\n"],
    [["-gateway=mesh", "-sidecar-for", "web"], "-sidecar-for (or CONNECT_SIDECAR_FOR) cannot be used with -gateway"],
    [["-mesh-gateway", "-register"], "-sidecar-for (or CONNECT_SIDECAR_FOR) cannot be used with -gateway", { CONNECT_SIDECAR_FOR: "web" }],
  ];
  for (const [args, message, env] of cases) {
    test(args.join(" "), async () => {
      agent.reset(routes());
      const { code, out, err } = await run(envoy(env), [...args, ...GRPC, "-bootstrap"]);
      expect(out).toBe("");
      expect(code).toBe(1);
      expect(err).toStartWith(message);
      expect(err).not.toContain("Usage:");
      expect(agent.lines()).toEqual([]);
    });
  }

  test("a bad address value is a usage error naming the flag, as Go's flag package prints it", async () => {
    const usage: Array<[string[], string]> = [
      [["-address", "10.0.0.1"], 'invalid value "10.0.0.1" for flag -address: Error parsing address "10.0.0.1": address 10.0.0.1: missing port in address\n'],
      [["-wan-address", "203.0.113.1:wan"], 'invalid value "203.0.113.1:wan" for flag -wan-address: Error parsing port "wan": strconv.Atoi: parsing "wan": invalid syntax\n'],
      [["-address", "2001:db8::5:8443"], "address 2001:db8::5:8443: too many colons in address\n"],
      [["-address", "10.0.0.1:70000"], 'Error parsing port "70000": must be between 0 and 65535\n'],
      [["-address", "{{ GetPrivateAddress }}:8443"], 'Error parsing address "{{ GetPrivateAddress }}:8443": function "GetPrivateAddress" not defined\n'],
      [["-wan-address", '{{ GetInterfaceIP "^lo$" }}:443'], "the template gave no address (GetInterfaceIP skips addresses that are not forwardable"],
      [["-bind-address", "lan=10.1.2.3:8443", "-bind-address", "wan"], 'invalid value "wan" for flag -bind-address: Missing "=" in argument: wan\n'],
    ];
    agent.reset(routes());
    for (const [args, message] of usage) {
      const { code, out, err } = await run(envoy(), ["-gateway=mesh", "-register", ...args, ...GRPC, "-bootstrap"]);
      expect([code, out]).toEqual([1, ""]);
      expect(err).toContain(message);
      expect(err).toContain("Usage: causeway connect envoy");
    }
    expect(agent.lines()).toEqual([]);
  });
});

describe("connect envoy -gateway=mesh -register", () => {
  test("-address and -wan-address take go-sockaddr templates, evaluated over this host's interfaces", async () => {
    agent.reset(routes());
    const lo = '{{ GetAllInterfaces | include "flags" "loopback" | include "type" "ipv4" | attr "address" }}';
    const { code, err } = await run(envoy(), ["-gateway=mesh", "-register", "-address", `${lo}:8443`, "-wan-address", `${lo}:443`, ...GRPC, "-bootstrap"]);
    expect(err).toBe("");
    expect(code).toBe(0);
    expect(putBodies()[0]).toContain('"Address":"127.0.0.1","TaggedAddresses":{"lan":{"Address":"127.0.0.1","Port":8443},"wan":{"Address":"127.0.0.1","Port":443}}');
  });

  test("defaults: service, ID and node cluster mesh-gateway, port 8443, a TCP check on loopback; the bootstrap is the golden", async () => {
    agent.reset(routes());
    const { code, out, err } = await run(envoy(), ["-gateway=mesh", "-register", ...GRPC, "-bootstrap"]);
    expect(err).toBe("");
    expect(code).toBe(0);
    expect(putBodies()).toEqual([
      '{"Kind":"mesh-gateway","ID":"mesh-gateway","Name":"mesh-gateway","Port":8443,' +
        '"Check":{"Name":"mesh-gateway listening","Interval":"10s","TCP":"127.0.0.1:8443","DeregisterCriticalServiceAfter":"6h"},"Checks":null}\n',
    ]);
    expect(agent.lines()).toEqual(["PUT /v1/agent/service/register", "GET /v1/agent/service/mesh-gateway"]);
    expect(out).toBe(readFileSync(GOLDEN, "utf8"));
  });

  test("-expose-servers: the same registration with Meta consul-wan-federation = 1, and the same bootstrap", async () => {
    agent.reset(routes());
    const plain = await run(envoy(), ["-gateway=mesh", "-register", "-address", "10.1.2.3:8443", "-wan-address", "198.51.100.7:443", ...GRPC, "-bootstrap"]);
    const exposed = await run(envoy(), ["-gateway=mesh", "-register", "-expose-servers", "-address", "10.1.2.3:8443", "-wan-address", "198.51.100.7:443", ...GRPC, "-bootstrap"]);
    expect(exposed.err).toBe("");
    expect(exposed.code).toBe(0);
    expect(exposed.out).toBe(plain.out);
    const [, body] = putBodies();
    expect(body).toBe(
      '{"Kind":"mesh-gateway","ID":"mesh-gateway","Name":"mesh-gateway","Port":8443,"Address":"10.1.2.3",' +
        '"TaggedAddresses":{"lan":{"Address":"10.1.2.3","Port":8443},"wan":{"Address":"198.51.100.7","Port":443}},' +
        '"Meta":{"consul-wan-federation":"1"},' +
        '"Check":{"Name":"mesh-gateway listening","Interval":"10s","TCP":"10.1.2.3:8443","DeregisterCriticalServiceAfter":"6h"},"Checks":null,' +
        '"Proxy":{"Config":{"envoy_gateway_bind_tagged_addresses":true,"envoy_gateway_no_default_bind":true},"MeshGateway":{},"Expose":{}}}\n',
    );
    // Without addresses: only the meta is added to the defaults.
    agent.reset(routes());
    const defaults = await run(envoy(), ["-mesh-gateway", "-register", "-expose-servers", ...GRPC, "-bootstrap"]);
    expect(defaults.code).toBe(0);
    expect(putBodies()).toEqual([
      '{"Kind":"mesh-gateway","ID":"mesh-gateway","Name":"mesh-gateway","Port":8443,"Meta":{"consul-wan-federation":"1"},' +
        '"Check":{"Name":"mesh-gateway listening","Interval":"10s","TCP":"127.0.0.1:8443","DeregisterCriticalServiceAfter":"6h"},"Checks":null}\n',
    ]);
  });

  test("the deprecated -mesh-gateway registers the same gateway", async () => {
    agent.reset(routes());
    const a = await run(envoy(), ["-gateway=mesh", "-register", ...GRPC, "-bootstrap"]);
    const b = await run(envoy(), ["-mesh-gateway", "-register", ...GRPC, "-bootstrap"]);
    expect(b.code).toBe(0);
    expect(b.out).toBe(a.out);
    const [first, second] = putBodies();
    expect(second).toBe(first!);
  });

  test("LAN and WAN addresses of this host: tagged addresses, listeners on them, the check on the LAN address", async () => {
    agent.reset(routes());
    const args = ["-gateway=mesh", "-register", "-address", "10.1.2.3:8443", "-wan-address", "198.51.100.7:443", "-deregister-after-critical", "90m", ...GRPC, "-bootstrap"];
    const { code } = await run(envoy(), args);
    expect(code).toBe(0);
    expect(putBodies()).toEqual([
      '{"Kind":"mesh-gateway","ID":"mesh-gateway","Name":"mesh-gateway","Port":8443,"Address":"10.1.2.3",' +
        '"TaggedAddresses":{"lan":{"Address":"10.1.2.3","Port":8443},"wan":{"Address":"198.51.100.7","Port":443}},' +
        '"Check":{"Name":"mesh-gateway listening","Interval":"10s","TCP":"10.1.2.3:8443","DeregisterCriticalServiceAfter":"90m"},"Checks":null,' +
        '"Proxy":{"Config":{"envoy_gateway_bind_tagged_addresses":true,"envoy_gateway_no_default_bind":true},"MeshGateway":{},"Expose":{}}}\n',
    ]);
  });

  test("a WAN address that is not this host's: no bind options (one listener on the service address)", async () => {
    agent.reset(routes());
    const { code } = await run(envoy(), ["-gateway=mesh", "-register", "-address", "[2001:db8::5]:8443", "-wan-address", "203.0.113.9:443", ...GRPC, "-bootstrap"]);
    expect(code).toBe(0);
    expect(putBodies()).toEqual([
      '{"Kind":"mesh-gateway","ID":"mesh-gateway","Name":"mesh-gateway","Port":8443,"Address":"2001:db8::5",' +
        '"TaggedAddresses":{"lan":{"Address":"2001:db8::5","Port":8443},"wan":{"Address":"203.0.113.9","Port":443}},' +
        '"Check":{"Name":"mesh-gateway listening","Interval":"10s","TCP":"[2001:db8::5]:8443","DeregisterCriticalServiceAfter":"6h"},"Checks":null}\n',
    ]);
  });

  test("-bind-address (repeated, a name given twice keeps the last), -service and -proxy-id", async () => {
    agent.reset(routes({ "GET /v1/agent/service/edge-1": { body: registered("edge-1", "edge") } }));
    const args = [
      "-gateway=mesh", "-register", "-service", "edge", "-proxy-id", "edge-1",
      "-address", "192.0.2.10:8443", "-wan-address", "203.0.113.9:443",
      "-bind-address", "wan=0.0.0.0:9443", "-bind-address", "lan=0.0.0.0:1", "-bind-address", "lan=0.0.0.0:8443",
      ...GRPC, "-bootstrap",
    ];
    const { code, out, err } = await run(envoy(), args);
    expect(err).toBe("");
    expect(code).toBe(0);
    expect(putBodies()).toEqual([
      '{"Kind":"mesh-gateway","ID":"edge-1","Name":"edge","Port":8443,"Address":"192.0.2.10",' +
        '"TaggedAddresses":{"lan":{"Address":"192.0.2.10","Port":8443},"wan":{"Address":"203.0.113.9","Port":443}},' +
        '"Check":{"Name":"mesh-gateway listening","Interval":"10s","TCP":"192.0.2.10:8443","DeregisterCriticalServiceAfter":"6h"},"Checks":null,' +
        '"Proxy":{"Config":{"envoy_gateway_bind_addresses":{"lan":{"Address":"0.0.0.0","Port":8443},"wan":{"Address":"0.0.0.0","Port":9443}},' +
        '"envoy_gateway_no_default_bind":true},"MeshGateway":{},"Expose":{}}}\n',
    ]);
    const node = (JSON.parse(out) as { node: { id: string; cluster: string } }).node;
    expect(node).toMatchObject({ id: "edge-1", cluster: "edge" });
    expect(agent.lines()).toEqual(["PUT /v1/agent/service/register", "GET /v1/agent/service/edge-1"]);
  });

  test("a LAN address this host cannot bind, without -bind-address: Consul's error, nothing registered", async () => {
    agent.reset(routes());
    const { code, out, err } = await run(envoy(), ["-gateway=mesh", "-register", "-address", "192.0.2.10:8443", ...GRPC, "-bootstrap"]);
    expect([code, out]).toEqual([1, ""]);
    expect(err).toBe('The LAN address "192.0.2.10" will not be bindable. Either set a bindable address or override the bind addresses with -bind-address\n');
    expect(agent.lines()).toEqual([]);
  });

  test("a bad local input fails before the registration; the agent's refusal is reported with the service name", async () => {
    agent.reset(routes());
    const admin = await run(envoy(), ["-gateway=mesh", "-register", ...GRPC, "-admin-bind", "localhost", "-bootstrap"]);
    expect(admin.code).toBe(1);
    expect(admin.err).toContain("Invalid Consul HTTP address: address localhost: missing port in address");
    expect(agent.lines()).toEqual([]);

    agent.reset(routes({ "PUT /v1/agent/service/register": { status: 400, body: "Port must be non-zero for a mesh-gateway" } }));
    const refused = await run(envoy(), ["-gateway=mesh", "-register", "-address", "10.1.2.3:0", ...GRPC, "-bootstrap"]);
    expect([refused.code, refused.out]).toEqual([1, ""]);
    expect(refused.err).toBe('Error registering service "mesh-gateway": Unexpected response code: 400 (Port must be non-zero for a mesh-gateway)\n');
    expect(agent.lines()).toEqual(["PUT /v1/agent/service/register"]);
  });

  test("without -bootstrap it says what it registered on stdout, then runs Envoy", async () => {
    agent.reset(routes());
    const { code, out, err } = await run(envoy(), ["-gateway=mesh", "-register", ...GRPC]);
    expect(code).toBe(1);
    expect(out).toBe("Registered service: mesh-gateway\n");
    expect(err).toContain("Couldn't find envoy binary");
  });
});

describe("connect envoy -gateway=mesh without -register", () => {
  const FILTER = "GET /v1/agent/services?filter=Kind+%3D%3D+%60mesh-gateway%60";

  test("runs the one mesh gateway registered with the agent: its ID and its name, whatever -service says", async () => {
    agent.reset(routes({
      "GET /v1/agent/services": { body: { "edge-1": registered("edge-1", "edge") } },
      "GET /v1/agent/service/edge-1": { body: registered("edge-1", "edge") },
    }));
    const { code, out, err } = await run(envoy(), ["-gateway=mesh", "-service", "ignored", ...GRPC, "-bootstrap"]);
    expect(err).toBe("");
    expect(code).toBe(0);
    expect((JSON.parse(out) as { node: unknown }).node).toMatchObject({ id: "edge-1", cluster: "edge" });
    expect(agent.lines()).toEqual([FILTER, "GET /v1/agent/service/edge-1"]);
  });

  test("-proxy-id names the gateway: no lookup, the cluster is -service or mesh-gateway", async () => {
    agent.reset(routes({ "GET /v1/agent/service/edge-1": { body: registered("edge-1", "edge") } }));
    const plain = await run(envoy(), ["-gateway=mesh", "-proxy-id", "edge-1", ...GRPC, "-bootstrap"]);
    expect((JSON.parse(plain.out) as { node: unknown }).node).toMatchObject({ id: "edge-1", cluster: "mesh-gateway" });
    const named = await run(envoy({ CONNECT_PROXY_ID: "edge-1" }), ["-gateway=mesh", "-service", "edge", ...GRPC, "-bootstrap"]);
    expect((JSON.parse(named.out) as { node: unknown }).node).toMatchObject({ id: "edge-1", cluster: "edge" });
    expect(agent.lines()).toEqual(["GET /v1/agent/service/edge-1", "GET /v1/agent/service/edge-1"]);
  });

  test("none, several, or a failed lookup: Consul's errors", async () => {
    const fails = async (reply: FakeRoute, message: string) => {
      agent.reset(routes({ "GET /v1/agent/services": reply }));
      const { code, out, err } = await run(envoy(), ["-gateway=mesh", ...GRPC, "-bootstrap"]);
      expect([code, out, err]).toEqual([1, "", `${message}\n`]);
      expect(agent.lines()).toEqual([FILTER]);
    };
    await fails({ body: {} }, "No mesh-gateway services registered with this agent");
    await fails({ body: { a: registered("a", "gw"), b: registered("b", "gw") } }, "Cannot lookup the mesh-gateway's proxy ID because multiple are registered with the agent");
    await fails({ status: 500, body: "boom" }, "Failed looking up mesh-gateway instances: Unexpected response code: 500 (boom)");
  });
});
