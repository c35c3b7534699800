import { describe, expect, test } from "bun:test";
import type { AgentPersistence, PersistedCheckState } from "./agent.ts";
import { kit, run } from "./agent_test_kit.test.ts";
import type { CheckRegistration, ServiceRegistration } from "./types.ts";
import { parseCheckRegistration, parseServiceRegistration } from "./registration.ts";

/** A persistence that records calls and keeps the records in maps. */
function recording() {
  const services = new Map<string, ServiceRegistration>();
  const checks = new Map<string, CheckRegistration>();
  const states = new Map<string, PersistedCheckState>();
  const p: AgentPersistence = {
    saveService: (id, reg) => void services.set(id, reg),
    removeService: (id) => void services.delete(id),
    saveCheck: (id, reg) => void checks.set(id, reg),
    removeCheck: (id) => void (checks.delete(id), states.delete(id)),
    saveCheckState: (id, s) => void states.set(id, s),
  };
  return { p, services, checks, states };
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
});
