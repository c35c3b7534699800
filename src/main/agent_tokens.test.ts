import { describe, expect, test } from "bun:test";
import { createAgentTokens, type AgentTokenFile, type AgentTokenValues } from "./agent_tokens.ts";

const CONFIGURED: AgentTokenValues = { default: "cfg-default", agent: "", agentMaster: "cfg-am", replication: "" };

function memoryFile(initial?: string): AgentTokenFile & { text: string | undefined; fail: boolean } {
  const f = {
    text: initial,
    fail: false,
    read: () => (f.text === undefined ? undefined : new TextEncoder().encode(f.text)),
    write(text: string) {
      if (f.fail) throw new Error("disk full");
      f.text = text;
    },
  };
  return f;
}

describe("the agent's tokens", () => {
  test("config values; agent falls back to default; set replaces one token in memory only without persistence", () => {
    const t = createAgentTokens(CONFIGURED, undefined, () => {});
    expect([t.default(), t.agent(), t.agentMaster(), t.replication()]).toEqual(["cfg-default", "cfg-default", "cfg-am", ""]);
    t.set("agent", "a1");
    expect([t.default(), t.agent()]).toEqual(["cfg-default", "a1"]);
  });

  test("persisted tokens win over the config at start; only tokens set through the API are written, with Consul's keys", () => {
    const file = memoryFile(JSON.stringify({ agent: "p-agent", agent_master: "", replication: "p-repl" }));
    const t = createAgentTokens(CONFIGURED, file, () => {});
    expect([t.default(), t.agent(), t.agentMaster(), t.replication()]).toEqual(["cfg-default", "p-agent", "cfg-am", "p-repl"]);
    t.set("agentMaster", "new-am");
    expect(JSON.parse(file.text!)).toEqual({ agent: "p-agent", replication: "p-repl", agent_master: "new-am" });
    const again = createAgentTokens(CONFIGURED, file, () => {});
    expect([again.default(), again.agent(), again.agentMaster(), again.replication()]).toEqual(["cfg-default", "p-agent", "new-am", "p-repl"]);
  });

  test("a failed write changes nothing and throws; a broken file is reported and ignored", () => {
    const file = memoryFile();
    const t = createAgentTokens(CONFIGURED, file, () => {});
    file.fail = true;
    expect(() => t.set("default", "x")).toThrow("disk full");
    expect([t.default(), file.text]).toEqual(["cfg-default", undefined]);

    const warnings: string[] = [];
    const broken = createAgentTokens(CONFIGURED, memoryFile("[1,2]"), (m) => warnings.push(m));
    expect(broken.default()).toBe("cfg-default");
    expect(warnings).toEqual(["acl-tokens.json: ignoring the persisted tokens: not a JSON object"]);
    createAgentTokens(CONFIGURED, memoryFile("{"), (m) => warnings.push(m));
    expect(warnings[1]).toStartWith("acl-tokens.json: ignoring the persisted tokens: ");
  });
});

describe("reloading the config's tokens", () => {
  test("each configured token replaces the running one, except a token set through the API and persisted", () => {
    const file = memoryFile(JSON.stringify({ replication: "p-repl" }));
    const t = createAgentTokens(CONFIGURED, file, () => {});
    t.set("agent", "api-agent");
    t.reloadConfigured({ default: "new-default", agent: "new-agent", agentMaster: "new-am", replication: "new-repl" });
    expect([t.default(), t.agent(), t.agentMaster(), t.replication()]).toEqual(["new-default", "api-agent", "new-am", "p-repl"]);
  });

  test("without persistence the config's tokens win, as in Consul", () => {
    const t = createAgentTokens(CONFIGURED, undefined, () => {});
    t.set("agent", "api-agent");
    t.reloadConfigured({ ...CONFIGURED, agent: "cfg-agent" });
    expect(t.agent()).toBe("cfg-agent");
  });
});
