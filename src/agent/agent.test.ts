import { describe, expect, test } from "bun:test";
import { AgentError } from "./errors.ts";
import { kit, run } from "./agent_test_kit.test.ts";
import { parseCheckRegistration, parseServiceRegistration } from "./registration.ts";

const svc = (body: Record<string, unknown>) => parseServiceRegistration(body);
const chk = (body: Record<string, unknown>) => parseCheckRegistration(body);

function agentError(fn: () => unknown): [string, string] {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(AgentError);
    return [(err as AgentError).kind, (err as Error).message];
  }
  throw new Error("expected an AgentError");
}

describe("services and checks", () => {
  test("ServiceID defaults to the name; check IDs default to service:<id>[:n]; checks start critical", () => {
    const { agent } = kit();
    agent.registerService(svc({ Name: "web", Tags: ["a"], Port: 80, Checks: [{ TTL: "10s" }, { TTL: "20s", Status: "passing", Name: "named" }] }));
    agent.registerService(svc({ Name: "db", ID: "db-1", Check: { TTL: "10s" } }));
    expect(agent.services().map((s) => s.ID)).toEqual(["db-1", "web"]);
    expect(agent.checks().map((c) => [c.CheckID, c.Name, c.Status, c.ServiceID, c.ServiceName, c.ServiceTags, c.Type, c.Node])).toEqual([
      ["service:db-1", "Service 'db' check", "critical", "db-1", "db", null, "ttl", "node-1"],
      ["service:web:1", "Service 'web' check", "critical", "web", "web", ["a"], "ttl", "node-1"],
      ["service:web:2", "named", "passing", "web", "web", ["a"], "ttl", "node-1"],
    ]);
    expect(agent.service("web")?.Weights).toEqual({ Passing: 1, Warning: 1 });
  });

  test("a service's checks go with it; unknown IDs are not-found errors", () => {
    const { agent } = kit();
    agent.registerService(svc({ Name: "web", Check: { TTL: "10s" } }));
    agent.registerCheck(chk({ Name: "extra", ServiceID: "web", TTL: "5s" }));
    agent.registerCheck(chk({ Name: "node-level", TTL: "5s" }));
    agent.deregisterService("web");
    expect(agent.services()).toEqual([]);
    expect(agent.checks().map((c) => c.CheckID)).toEqual(["node-level"]);
    expect(agentError(() => agent.deregisterService("web"))).toEqual(["not-found", `Unknown service ID "web". Ensure that the service ID is passed, not the service name.`]);
    expect(agentError(() => agent.deregisterCheck("nope"))).toEqual(["not-found", `Unknown check ID "nope". Ensure that the check ID is passed, not the check name.`]);
    expect(agentError(() => agent.registerCheck(chk({ Name: "x", ServiceID: "gone", TTL: "1s" })))).toEqual(["bad-request", `ServiceID "gone" does not exist`]);
  });

  test("re-registering keeps check status; replace-existing-checks drops checks not listed", () => {
    const { agent } = kit();
    agent.registerService(svc({ Name: "web", Checks: [{ CheckID: "a", TTL: "10s" }, { CheckID: "b", TTL: "10s" }] }));
    agent.updateTTL("a", "passing", "fine");
    agent.registerService(svc({ Name: "web", Checks: [{ CheckID: "a", TTL: "10s" }] }));
    expect(agent.checks().map((c) => [c.CheckID, c.Status, c.Output])).toEqual([["a", "passing", "fine"], ["b", "critical", ""]]);
    agent.registerService(svc({ Name: "web", Checks: [{ CheckID: "a", TTL: "10s" }] }), { replaceExistingChecks: true });
    expect(agent.checks().map((c) => c.CheckID)).toEqual(["a"]);
  });

  test("TTL pass / warn / fail / update, expiry and errors", async () => {
    const k = kit();
    const { agent } = k;
    agent.registerCheck(chk({ Name: "ttl", TTL: "30s" }));
    agent.registerCheck(chk({ Name: "tcp", TCP: "127.0.0.1:1", Interval: "10s" }));
    agent.updateTTL("ttl", "passing", "note 1");
    expect(agent.check("ttl")).toMatchObject({ Status: "passing", Output: "note 1" });
    agent.updateTTL("ttl", "warning", "");
    expect(agent.check("ttl")).toMatchObject({ Status: "warning", Output: "" });
    agent.updateTTL("ttl", "critical", "x".repeat(4097));
    expect(agent.check("ttl")!.Output).toBe(`${"x".repeat(4096)} ... (captured 4096 of 4097 bytes)`);
    agent.updateTTL("ttl", "passing", "ok");
    await run(k.clock, 29_999);
    expect(agent.check("ttl")!.Status).toBe("passing");
    await run(k.clock, 1);
    expect(agent.check("ttl")).toMatchObject({ Status: "critical", Output: "TTL expired (last output before timeout follows): ok" });
    expect(agentError(() => agent.updateTTL("nope", "passing", ""))).toEqual(["not-found", `Unknown check ID "nope". Ensure that the check ID is passed, not the check name.`]);
    expect(agentError(() => agent.updateTTL("tcp", "passing", ""))).toEqual(["bad-request", `CheckID "tcp" does not have associated TTL`]);
    expect(agentError(() => agent.updateTTL("ttl", "ok", ""))).toEqual(["bad-request", "Invalid check status: 'ok'"]);
    agent.stop();
  });

  test("intervals below 1 s are raised to 1 s with a warning", async () => {
    const k = kit();
    const warnings = k.agent.registerCheck(chk({ Name: "fast", TCP: "127.0.0.1:1", Interval: "100ms" }));
    expect(warnings).toEqual([`check "fast" has interval below minimum of 1s`]);
    let probes = 0;
    k.tcpProbe = async () => void probes++;
    await run(k.clock, 10_000);
    expect(probes).toBeGreaterThanOrEqual(9);
    expect(probes).toBeLessThanOrEqual(10);
    k.agent.stop();
  });

  test("HTTP and TCP checks report through the probes", async () => {
    const k = kit();
    k.httpProbe = async (req) => ({ status: req.url.endsWith("/busy") ? 429 : 200, statusText: req.url.endsWith("/busy") ? "Too Many Requests" : "OK", body: "hi" });
    k.tcpProbe = async (addr) => {
      throw new Error(`dial tcp ${addr}: connect: connection refused`);
    };
    k.agent.registerService(svc({ Name: "web", Port: 80, Checks: [
      { HTTP: "http://127.0.0.1/ok", Interval: "5s" }, { HTTP: "http://127.0.0.1/busy", Interval: "5s" }, { TCP: "127.0.0.1:80", Interval: "5s" },
    ] }));
    await run(k.clock, 5_000);
    expect(k.agent.checks().map((c) => [c.CheckID, c.Status, c.Output, c.Type])).toEqual([
      ["service:web:1", "passing", "HTTP GET http://127.0.0.1/ok: 200 OK Output: hi", "http"],
      ["service:web:2", "warning", "HTTP GET http://127.0.0.1/busy: 429 Too Many Requests Output: hi", "http"],
      ["service:web:3", "critical", "dial tcp 127.0.0.1:80: connect: connection refused", "tcp"],
    ]);
    expect(k.agent.check("service:web:1")!.Definition).toEqual({ HTTP: "http://127.0.0.1/ok", Interval: "5s" });
    k.agent.stop();
  });
});

describe("DeregisterCriticalServiceAfter", () => {
  test("the reaper (every 30 s) removes a service whose check is critical longer than the limit, minimum 1 minute", async () => {
    const k = kit();
    k.agent.start();
    const warnings = k.agent.registerService(svc({ Name: "web", Check: { TTL: "5s", DeregisterCriticalServiceAfter: "10s" } }));
    expect(warnings).toEqual([`check "service:web" has deregister interval below minimum of 1m0s`]);
    k.agent.registerService(svc({ Name: "db", Check: { TTL: "5m", Status: "passing", DeregisterCriticalServiceAfter: "1m" } }));
    // web is critical from registration (t=0); the reap ticks are at 30, 60, 90 s and need critical > 60 s.
    await run(k.clock, 89_000);
    expect(k.agent.services().map((s) => s.ID)).toEqual(["db", "web"]);
    await run(k.clock, 1_000);
    expect(k.agent.services().map((s) => s.ID)).toEqual(["db"]);
    expect(k.logs.some((l) => l.includes("critical for too long") && l.includes("service=web"))).toBe(true);
    k.agent.stop();
  });

  test("a check that recovers resets the clock", async () => {
    const k = kit();
    k.agent.start();
    k.agent.registerService(svc({ Name: "web", Check: { TTL: "50s", DeregisterCriticalServiceAfter: "1m" } }));
    await run(k.clock, 45_000);
    k.agent.updateTTL("service:web", "passing", "");
    await run(k.clock, 50_000); // TTL expires at 95 s: critical again from then
    await run(k.clock, 60_000); // 155 s: critical for 60 s, not more
    expect(k.agent.service("web")).toBeDefined();
    await run(k.clock, 30_000); // 185 s tick... reaped at the first tick after 155 s
    expect(k.agent.service("web")).toBeUndefined();
    k.agent.stop();
  });
});

describe("maintenance", () => {
  test("node maintenance adds a critical _node_maintenance check with the reason", () => {
    const { agent } = kit();
    agent.enableNodeMaintenance("upgrading");
    agent.enableNodeMaintenance("again");
    expect(agent.check("_node_maintenance")).toMatchObject({
      Name: "Node Maintenance Mode", Status: "critical", Notes: "upgrading", ServiceID: "", Type: "maintenance",
    });
    agent.disableNodeMaintenance();
    agent.disableNodeMaintenance();
    expect(agent.check("_node_maintenance")).toBeUndefined();
    agent.enableNodeMaintenance("");
    expect(agent.check("_node_maintenance")!.Notes).toBe("Maintenance mode is enabled for this node, but no reason was provided. This is a default message.");
  });

  test("service maintenance adds _service_maintenance:<id>; unknown services are not-found", () => {
    const { agent } = kit();
    agent.registerService(svc({ Name: "web", Tags: ["t"] }));
    agent.enableServiceMaintenance("web", "");
    expect(agent.check("_service_maintenance:web")).toMatchObject({
      Name: "Service Maintenance Mode", Status: "critical", ServiceID: "web", ServiceName: "web", ServiceTags: ["t"],
      Notes: "Maintenance mode is enabled for this service, but no reason was provided. This is a default message.",
    });
    agent.disableServiceMaintenance("web");
    expect(agent.check("_service_maintenance:web")).toBeUndefined();
    expect(agentError(() => agent.enableServiceMaintenance("nope", "x"))).toEqual(["not-found", `No service registered with ID "nope"`]);
    expect(agentError(() => agent.disableServiceMaintenance("nope"))).toEqual(["not-found", `No service registered with ID "nope"`]);
  });
});

describe("sidecar_service", () => {
  test("registers a connect proxy with Consul's defaults, ports from 21000, and removes it with its parent", async () => {
    const k = kit();
    k.agent.registerService(svc({ Name: "web", Port: 8080, Address: "10.0.0.9", Connect: { SidecarService: {} } }));
    k.agent.registerService(svc({ Name: "api", Port: 9090, Connect: { SidecarService: { Proxy: { Upstreams: [{ DestinationName: "web", LocalBindPort: 9191 }] } } } }));
    const proxy = k.agent.service("web-sidecar-proxy")!;
    expect(proxy).toMatchObject({
      Kind: "connect-proxy", Service: "web-sidecar-proxy", Port: 21000, Address: "10.0.0.9",
      Proxy: { DestinationServiceName: "web", DestinationServiceID: "web", LocalServiceAddress: "127.0.0.1", LocalServicePort: 8080 },
    });
    expect(k.agent.service("api-sidecar-proxy")!.Port).toBe(21001);
    // Re-registering keeps the port.
    k.agent.registerService(svc({ Name: "web", Port: 8080, Connect: { SidecarService: {} } }));
    expect(k.agent.service("web-sidecar-proxy")!.Port).toBe(21000);
    expect(k.agent.checks().filter((c) => c.ServiceID === "web-sidecar-proxy").map((c) => [c.CheckID, c.Name, c.Type, c.Definition.TCP])).toEqual([
      ["service:web-sidecar-proxy:1", "Connect Sidecar Listening", "tcp", "127.0.0.1:21000"],
      ["service:web-sidecar-proxy:2", "Connect Sidecar Aliasing web", "alias", undefined],
    ]);
    k.agent.deregisterService("web");
    expect(k.agent.services().map((s) => s.ID)).toEqual(["api", "api-sidecar-proxy"]);
    k.agent.stop();
  });

  test("the alias check mirrors the parent's and the node's checks", () => {
    const { agent } = kit();
    agent.registerService(svc({ Name: "web", Port: 80, Check: { TTL: "10s", Status: "passing" }, Connect: { SidecarService: {} } }));
    const alias = () => agent.check("service:web-sidecar-proxy:2")!;
    expect(alias()).toMatchObject({ Status: "passing", Output: "All checks passing." });
    agent.updateTTL("service:web", "critical", "down");
    expect(alias()).toMatchObject({ Status: "critical", Output: `Aliased check "Service 'web' check" failing: down` });
    agent.updateTTL("service:web", "passing", "");
    agent.enableNodeMaintenance("x");
    expect(alias().Status).toBe("critical");
    agent.stop();
  });

  test("no port left is an error", () => {
    const { agent } = kit({ sidecarPorts: { min: 21000, max: 21000 } });
    agent.registerService(svc({ Name: "a", Port: 1, Connect: { SidecarService: {} } }));
    expect(agentError(() => agent.registerService(svc({ Name: "b", Port: 2, Connect: { SidecarService: {} } })))).toEqual([
      "bad-request", "Invalid SidecarService: no port provided for sidecar_service and none left in the configured range [21000, 21000]",
    ]);
    agent.stop();
  });
});

describe("views and notifications", () => {
  test("agent endpoints' shapes", () => {
    const { agent } = kit();
    agent.registerService(svc({ Name: "web", Port: 80, Check: { TTL: "10s" } }));
    agent.registerService(svc({ Name: "gw", Kind: "mesh-gateway", Port: 443, Meta: { "consul-wan-federation": "1" } }));
    expect(agent.agentServices().web).toEqual({
      ID: "web", Service: "web", Tags: [], Meta: {}, Port: 80, Address: "", Weights: { Passing: 1, Warning: 1 }, EnableTagOverride: false,
    });
    expect(agent.agentServices().gw).toMatchObject({ Kind: "mesh-gateway", Proxy: { MeshGateway: {}, Expose: {} } });
    const one = agent.agentService("web")!;
    expect(one.ContentHash).toMatch(/^[0-9a-f]{16}$/);
    agent.registerService(svc({ Name: "web", Port: 81, Check: { TTL: "10s" } }));
    expect(agent.agentService("web")!.ContentHash).not.toBe(one.ContentHash);
    expect(agent.agentChecks()["service:web"]).toMatchObject({ ServiceTags: [], Status: "critical", CreateIndex: 0, ModifyIndex: 0 });
    agent.stop();
  });

  test("onChange fires on registrations and status changes, not on identical updates", () => {
    const { agent } = kit();
    let n = 0;
    const off = agent.onChange(() => n++);
    agent.registerCheck(chk({ Name: "c", TTL: "10s" }));
    const afterAdd = n;
    expect(afterAdd).toBeGreaterThan(0);
    agent.updateTTL("c", "passing", "x");
    expect(n).toBe(afterAdd + 1);
    agent.updateTTL("c", "passing", "x");
    expect(n).toBe(afterAdd + 1);
    off();
    agent.updateTTL("c", "warning", "x");
    expect(n).toBe(afterAdd + 1);
    agent.stop();
  });
});
