import { describe, expect, test } from "bun:test";
import { AgentError, type CheckRegistration, type ServiceRegistration } from "../agent/index.ts";
import { memoryLogger, type LogLevelSetting } from "../platform/index.ts";
import { createAgentReload } from "./agent_reload.ts";
import { buildConfig, defaultConfig, parseConfigJson, type RuntimeConfig } from "./config.ts";

const configOf = (doc: Record<string, unknown>): RuntimeConfig => buildConfig(defaultConfig("h"), [parseConfigJson("c.json", { data_dir: "/d", ...doc })]);

/** A local agent that records calls and refuses services named in `refuse`. */
function fakeAgent(refuse: Set<string> = new Set()) {
  const calls: string[] = [];
  return {
    calls,
    registerService(reg: ServiceRegistration, opts?: { token?: string; source?: string; replaceExistingChecks?: boolean }) {
      if (refuse.has(reg.Name)) throw new AgentError("bad-request", `Scripts are disabled on this agent`);
      calls.push(`+service ${reg.ID || reg.Name} ${opts?.source} token=${opts?.token}`);
      return [];
    },
    registerCheck(reg: CheckRegistration, opts?: { token?: string; source?: string; keepStatus?: boolean }) {
      calls.push(`+check ${reg.CheckID || reg.Name} ${opts?.source} keep=${opts?.keepStatus}`);
      return [];
    },
    deregisterService(id: string) {
      calls.push(`-service ${id}`);
    },
    deregisterCheck(id: string) {
      if (id === "gone") throw new AgentError("not-found", "Unknown check ID");
      calls.push(`-check ${id}`);
    },
  };
}

function setup(initial: RuntimeConfig, files: { current: RuntimeConfig | Error }, refuse?: Set<string>) {
  const agent = fakeAgent(refuse);
  const tokens: unknown[] = [];
  const logLevel: LogLevelSetting = { level: "info" };
  const logger = memoryLogger("debug");
  const reload = createAgentReload({
    initial,
    reread: () => {
      if (files.current instanceof Error) throw files.current;
      return files.current;
    },
    localAgent: agent,
    agentTokens: { reloadConfigured: (t) => void tokens.push(t) },
    logLevel,
    logger,
  });
  return { reload, agent, tokens, logLevel, logger };
}

describe("agent reload", () => {
  test("applies the definitions, the log level and the tokens; names what needs a restart", async () => {
    const initial = configOf({ services: [{ name: "web", port: 80 }, { name: "old", port: 1 }], checks: [{ id: "gone", name: "gone", ttl: "1m" }] });
    const files = { current: configOf({ log_level: "debug", ports: { http: 9000 }, acl: { tokens: { agent: "a2" } }, services: [{ name: "web", port: 80 }, { name: "db", port: 5, token: "t" }], checks: [{ id: "disk", name: "disk", ttl: "1m" }] }) };
    const { reload, agent, tokens, logLevel, logger } = setup(initial, files);
    await reload();
    // "gone" is no longer there (deregistered through the API): nothing to undo.
    expect(agent.calls).toEqual(["-service old", "+service web config token=", "+service db config token=t", "+check disk config keep=true"]);
    expect(logLevel.level).toBe("debug");
    expect(tokens).toEqual([files.current.acl.tokens]);
    expect(logger.lines.some((l) => l.includes("apply only after a restart") && l.includes("settings=ports.http"))).toBe(true);
    // The same files again: nothing to remove, every definition registered again (as Consul's reload does).
    agent.calls.length = 0;
    await reload();
    expect(agent.calls).toEqual(["+service web config token=", "+service db config token=t", "+check disk config keep=true"]);
  });

  test("a configuration that does not read changes nothing and fails with its reason", async () => {
    const files: { current: RuntimeConfig | Error } = { current: new Error("c.json: invalid config key colour") };
    const { reload, agent, logLevel } = setup(configOf({ services: [{ name: "web", port: 80 }] }), files);
    await expect(reload()).rejects.toThrow("Failed to reload configs: c.json: invalid config key colour");
    expect(agent.calls).toEqual([]);
    expect(logLevel.level).toBe("info");
  });

  test("a refused definition fails the reload after the others are applied, and is tried again next time", async () => {
    const refuse = new Set(["script"]);
    const files = { current: configOf({ services: [{ name: "script", port: 1 }, { name: "db", port: 5 }] }) };
    const { reload, agent } = setup(configOf({}), files, refuse);
    await expect(reload()).rejects.toThrow('Failed reloading services and checks: service "script": Scripts are disabled on this agent');
    expect(agent.calls).toEqual(["+service db config token="]);
    refuse.clear();
    agent.calls.length = 0;
    await reload();
    expect(agent.calls).toEqual(["+service script config token=", "+service db config token="]);
  });

  test("reloads run one at a time", async () => {
    const files = { current: configOf({ services: [{ name: "web", port: 80 }] }) };
    const { reload, agent } = setup(configOf({}), files);
    await Promise.all([reload(), reload()]);
    expect(agent.calls).toEqual(["+service web config token=", "+service web config token="]);
  });
});
