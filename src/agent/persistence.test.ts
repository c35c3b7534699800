import { describe, expect, test } from "bun:test";
import type { AgentPersistence, PersistedCheckState } from "./agent.ts";
import type { MaintenanceRecord } from "./maintenance.ts";
import { kit, run } from "./agent_test_kit.test.ts";
import type { CheckRegistration, ServiceRegistration } from "./types.ts";
import { parseCheckRegistration, parseServiceRegistration } from "./registration.ts";

/** A persistence that records calls and keeps the records in maps. */
function recording() {
  const services = new Map<string, ServiceRegistration>();
  const tokens = new Map<string, string>();
  const checks = new Map<string, CheckRegistration>();
  const states = new Map<string, PersistedCheckState>();
  const maintenance = new Map<string, MaintenanceRecord>();
  const p: AgentPersistence = {
    saveService: (id, reg, token) => void (services.set(id, reg), tokens.set(`service ${id}`, token)),
    removeService: (id) => void services.delete(id),
    saveCheck: (id, reg, token) => void (checks.set(id, reg), tokens.set(`check ${id}`, token)),
    removeCheck: (id) => void (checks.delete(id), states.delete(id), maintenance.delete(id)),
    saveCheckState: (id, s) => void states.set(id, s),
    saveMaintenance: (id, m) => void maintenance.set(id, m),
  };
  return { p, services, checks, states, maintenance, tokens };
}

describe("agent state across restarts", () => {
  test("API registrations are persisted, config ones are not; deregistration and the reaper remove them", async () => {
    const r = recording();
    const { agent, clock } = kit({ persistence: r.p });
    agent.registerService(parseServiceRegistration({ Name: "web", ID: "web-1", Port: 80, Connect: { SidecarService: {} } }));
    agent.registerService(parseServiceRegistration({ Name: "cfg", Port: 81 }), { source: "config" });
    agent.registerCheck(parseCheckRegistration({ Name: "mem", TTL: "30s" }));
    agent.registerCheck(parseCheckRegistration({ Name: "disk", TTL: "30s" }), { source: "config" });
    expect([...r.services.keys()]).toEqual(["web-1"]); // the sidecar comes back with its parent's registration
    expect([...r.checks.keys()]).toEqual(["mem"]);
    agent.updateTTL("mem", "passing", "ok");
    expect(r.states.get("mem")).toEqual({ status: "passing", output: "ok", expiresAtMs: clock.now() + 30_000 });
    agent.deregisterCheck("mem");
    expect([r.checks.size, r.states.size]).toEqual([0, 0]);
    agent.deregisterService("web-1");
    expect(r.services.size).toBe(0);
    // A service the reaper deregisters does not come back either.
    agent.registerService(parseServiceRegistration({ Name: "db", Check: { TTL: "1s", DeregisterCriticalServiceAfter: "1m" } }));
    expect([...r.services.keys()]).toEqual(["db"]);
    agent.start();
    await run(clock, 3 * 60_000);
    expect(agent.service("db")).toBeUndefined();
    expect(r.services.size).toBe(0);
    agent.stop();
  });

  test("restore registers what was saved and brings back TTL statuses that have not expired", async () => {
    const first = recording();
    const a = kit({ persistence: first.p });
    a.agent.registerService(parseServiceRegistration({ Name: "web", ID: "web-1", Port: 80, Check: { CheckID: "web-ttl", TTL: "10m" } }));
    a.agent.registerCheck(parseCheckRegistration({ Name: "mem", TTL: "1s" }));
    a.agent.updateTTL("web-ttl", "passing", "fine");
    a.agent.updateTTL("mem", "warning", "low");
    const b = kit();
    b.clock.advance(a.clock.now() - b.clock.now() + 5_000); // restarted 5 s later: "mem"'s state has expired
    const problems = b.agent.restore({ services: [...first.services.values()], checks: [...first.checks.values()], checkStates: first.states });
    expect(problems).toEqual([]);
    expect(Object.keys(b.agent.agentServices())).toEqual(["web-1"]);
    expect(b.agent.check("web-ttl")).toMatchObject({ Status: "passing", Output: "fine" });
    expect(b.agent.check("mem")?.Status).toBe("critical");
    const bad = b.agent.restore({ services: [], checks: [{ ...parseCheckRegistration({ Name: "x", TTL: "1s" }), ServiceID: "gone" }], checkStates: new Map() });
    expect(bad).toEqual(['check "x": ServiceID "gone" does not exist']);
  });

  test("maintenance modes are kept until they are turned off, and come back on restore", () => {
    const first = recording();
    const a = kit({ persistence: first.p });
    a.agent.registerService(parseServiceRegistration({ Name: "web", ID: "web-1", Port: 80 }));
    a.agent.registerService(parseServiceRegistration({ Name: "db", ID: "db-1", Port: 81 }));
    a.agent.enableNodeMaintenance("");
    a.agent.enableServiceMaintenance("web-1", "upgrading");
    a.agent.enableServiceMaintenance("db-1", "moving");
    a.agent.disableServiceMaintenance("db-1");
    expect([...first.maintenance.entries()]).toEqual([["_node_maintenance", { serviceId: "", reason: "" }], ["_service_maintenance:web-1", { serviceId: "web-1", reason: "upgrading" }]]);
    const b = kit();
    const problems = b.agent.restore({ services: [...first.services.values()], checks: [], checkStates: new Map(), maintenance: [...first.maintenance.values()] });
    expect(problems).toEqual([]);
    expect(b.agent.check("_service_maintenance:web-1")).toMatchObject({ Status: "critical", Notes: "upgrading", ServiceID: "web-1" });
    expect(b.agent.check("_node_maintenance")).toMatchObject({ Status: "critical", Name: "Node Maintenance Mode" });
    expect(b.agent.check("_service_maintenance:db-1")).toBeUndefined();
  });

  test("a persisted maintenance of a service that did not come back is reported, not invented", () => {
    const b = kit();
    expect(b.agent.restore({ services: [], checks: [], checkStates: new Map(), maintenance: [{ serviceId: "gone", reason: "x" }] }))
      .toEqual(['maintenance of service "gone": No service registered with ID "gone"']);
  });

  test("a registration's ACL token is persisted with it and comes back on restore", async () => {
    const r = recording();
    const a = kit({ persistence: r.p });
    a.agent.registerService(parseServiceRegistration({ Name: "web", Port: 80 }), { token: "web-secret" });
    a.agent.registerCheck(parseCheckRegistration({ Name: "mem", TTL: "30s" }), { token: "check-secret" });
    expect([...r.tokens]).toEqual([["service web", "web-secret"], ["check mem", "check-secret"]]);
    const b = kit({});
    const problems = b.agent.restore({
      services: [...r.services.values()], checks: [...r.checks.values()], checkStates: new Map(),
      tokens: { services: new Map([["web", "web-secret"]]), checks: new Map([["mem", "check-secret"]]) },
    });
    expect(problems).toEqual([]);
    expect([b.agent.serviceToken("web"), b.agent.state.checkToken("mem")]).toEqual(["web-secret", "check-secret"]);
  });
  test("a config definition wins over a persisted API registration of the same ID, whose copy is dropped (Consul's loadServices)", () => {
    const r = recording();
    const { agent } = kit({ persistence: r.p });
    agent.registerService(parseServiceRegistration({ Name: "web", Port: 80 }), { source: "config" });
    agent.registerCheck(parseCheckRegistration({ Name: "disk", TTL: "30s" }), { source: "config" });
    r.services.set("web", parseServiceRegistration({ Name: "web", Port: 9 }));
    r.checks.set("disk", parseCheckRegistration({ Name: "disk", TTL: "5s", Notes: "api" }));
    const problems = agent.restore({ services: [...r.services.values()], checks: [...r.checks.values()], checkStates: new Map() });
    expect(problems).toEqual([]);
    expect(agent.service("web")?.Port).toBe(80);
    expect(agent.check("disk")?.Notes).toBe("");
    expect([r.services.size, r.checks.size]).toEqual([0, 0]);
  });
});
