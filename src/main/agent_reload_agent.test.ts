/**
 * Reload against a real local agent (src/agent's, over the test kit's simulated clock and catalog): what
 * an operator's services and checks look like after `causeway reload`, as with Consul's reload.
 */
import { describe, expect, test } from "bun:test";
import { kit } from "../agent/agent_test_kit.test.ts";
import { memoryLogger } from "../platform/index.ts";
import { createAgentReload } from "./agent_reload.ts";
import { buildConfig, defaultConfig, parseConfigJson, type RuntimeConfig } from "./config.ts";

const configOf = (doc: Record<string, unknown>): RuntimeConfig => buildConfig(defaultConfig("h"), [parseConfigJson("c.json", { data_dir: "/d", ...doc })]);

/** A kit agent with `initial`'s definitions registered as at start, and a reload that reads `files.current`. */
function started(initial: RuntimeConfig) {
  const k = kit();
  initial.definitions.services.forEach((reg) => k.agent.registerService(reg, { source: "config" }));
  initial.definitions.checks.forEach((reg) => k.agent.registerCheck(reg, { source: "config" }));
  const files = { current: initial };
  const reload = createAgentReload({ initial, reread: () => files.current, localAgent: k.agent, agentTokens: { reloadConfigured: () => {} }, logger: memoryLogger("debug") });
  const checks = () => k.agent.checks().map((c) => c.CheckID).sort();
  return { agent: k.agent, files, reload, checks };
}

const web = (port: number, checks: unknown[] = []) => ({ id: "web", name: "web", port, checks });

describe("reload with a real local agent", () => {
  test("a changed service keeps its other checks: a check definition naming it, an API check, its maintenance", async () => {
    const s = started(configOf({ services: [web(80)], checks: [{ id: "web-ttl", name: "web ttl", ttl: "1m", service_id: "web" }] }));
    s.agent.registerCheck({ ...s.files.current.definitions.checks[0]!, CheckID: "api-ttl", Name: "api ttl" });
    s.agent.enableServiceMaintenance("web", "upgrading");
    s.files.current = configOf({ services: [web(81)], checks: [{ id: "web-ttl", name: "web ttl", ttl: "1m", service_id: "web" }] });
    await s.reload();
    expect(s.agent.service("web")?.Port).toBe(81);
    expect(s.checks()).toEqual(["_service_maintenance:web", "api-ttl", "web-ttl"]);
  });

  test("an embedded check the new definition dropped goes; the kept one keeps its status", async () => {
    const s = started(configOf({ services: [web(80, [{ id: "a", name: "a", ttl: "1m" }, { id: "b", name: "b", ttl: "1m" }])] }));
    s.agent.updateTTL("a", "passing", "fine");
    s.files.current = configOf({ services: [web(80, [{ id: "a", name: "a", ttl: "1m", notes: "n" }])] });
    await s.reload();
    expect(s.checks()).toEqual(["a"]);
    expect(s.agent.check("a")?.Status).toBe("passing");
  });

  test("a changed check definition keeps the check's status and output", async () => {
    const s = started(configOf({ checks: [{ id: "t", name: "t", ttl: "10m" }] }));
    s.agent.updateTTL("t", "passing", "ok");
    s.files.current = configOf({ checks: [{ id: "t", name: "t", ttl: "10m", notes: "changed" }] });
    await s.reload();
    expect([s.agent.check("t")?.Status, s.agent.check("t")?.Output]).toEqual(["passing", "ok"]);
  });

  test("a config service or check removed through the API comes back, as Consul reloads every definition", async () => {
    const s = started(configOf({ services: [web(80)], checks: [{ id: "disk", name: "disk", ttl: "1m" }] }));
    s.agent.deregisterService("web");
    s.agent.deregisterCheck("disk");
    await s.reload();
    expect(s.agent.services().map((x) => x.ID)).toEqual(["web"]);
    expect(s.checks()).toEqual(["disk"]);
  });
});
