import { describe, expect, test } from "bun:test";
import { kit, run } from "./agent_test_kit.test.ts";
import { REMOTE_SCRIPTS_DISABLED, SCRIPTS_DISABLED } from "./check_runtime.ts";
import { emptyCheckType } from "./convert.ts";
import type { DockerEngine, ProcessSpec, Probes } from "./ports.ts";
import type { CheckRegistration, ServiceRegistration } from "./types.ts";

const script: CheckRegistration = { ...emptyCheckType(), CheckID: "s", Name: "s", ServiceID: "", ScriptArgs: ["/bin/true"], IntervalMs: 10_000 };
const docker: CheckRegistration = { ...script, CheckID: "d", Name: "d", DockerContainerID: "c1" };
const service = (checks: ServiceRegistration["Checks"]): ServiceRegistration => ({
  Kind: "", ID: "web", Name: "web", Tags: null, Address: "", TaggedAddresses: undefined, Meta: null, Port: 80, Weights: undefined,
  EnableTagOverride: false, Proxy: undefined, Connect: undefined, Checks: checks,
});

function probes(extra: Partial<Probes> = {}) {
  const spawned: ProcessSpec[] = [];
  const p: Probes = {
    http: async () => ({ status: 200, statusText: "OK", body: "" }), tcp: async () => {},
    process: (spec) => (spawned.push(spec), { done: Promise.resolve({ code: 0, output: "ok", totalBytes: 2 }), kill: () => {} }),
    ...extra,
  };
  return { p, spawned };
}

describe("script checks are gated as in Consul's Agent.addCheck", () => {
  test("neither setting: refused from config files and the API, and nothing is written", () => {
    const k = kit({ probes: probes().p });
    expect(() => k.agent.registerCheck(script, { source: "config" })).toThrow(SCRIPTS_DISABLED);
    expect(() => k.agent.registerCheck(script)).toThrow(SCRIPTS_DISABLED);
    expect(() => k.agent.registerService(service([{ ...script, CheckID: "" }]))).toThrow(SCRIPTS_DISABLED);
    expect([k.agent.checks(), k.agent.services()]).toEqual([[], []]);
    expect(SCRIPTS_DISABLED).toBe("Scripts are disabled on this agent; to enable, configure 'enable_script_checks' or 'enable_local_script_checks' to true");
  });

  test("enable_local_script_checks: config files only; the API gets Consul's remote-calls text", () => {
    const k = kit({ probes: probes().p, enableLocalScriptChecks: true });
    expect(() => k.agent.registerCheck(script)).toThrow(REMOTE_SCRIPTS_DISABLED);
    expect(REMOTE_SCRIPTS_DISABLED).toBe("Scripts are disabled on this agent from remote calls; to enable, configure 'enable_script_checks' to true");
    k.agent.registerCheck(script, { source: "config" });
    expect(k.agent.check("s")).toMatchObject({ Type: "script", Status: "critical" });
    k.agent.stop();
  });

  test("enable_script_checks: any source; the check runs and passes", async () => {
    const { p, spawned } = probes();
    const k = kit({ probes: p, enableScriptChecks: true });
    k.agent.registerService(service([{ ...script, CheckID: "" }]));
    await run(k.clock, 10_000);
    expect(spawned).toEqual([{ args: ["/bin/true"], maxOutputBytes: 4096 }]);
    expect(k.agent.check("service:web")).toMatchObject({ Type: "script", Status: "passing", Output: "ok" });
    k.agent.stop();
  });

  test("a script interval below 1 s is raised to it with a warning", () => {
    const k = kit({ probes: probes().p, enableScriptChecks: true });
    expect(k.agent.registerCheck({ ...script, IntervalMs: 100 })).toEqual(['check "s" has interval below minimum of 1s']);
    k.agent.stop();
  });
});

describe("Docker checks", () => {
  const engine = (why: string | undefined): DockerEngine => ({ unavailable: () => why, call: async () => ({ status: 500, body: "", totalBytes: 0 }) });

  test("are script checks: the script settings gate them first", () => {
    const k = kit({ probes: probes({ docker: engine(undefined) }).p });
    expect(() => k.agent.registerCheck(docker)).toThrow(SCRIPTS_DISABLED);
  });

  test("without a Docker socket the registration fails with the engine's reason and writes nothing", () => {
    const why = "Docker checks cannot run on this agent: there is no Docker socket at /var/run/docker.sock (DOCKER_HOST is not set)";
    const k = kit({ probes: probes({ docker: engine(why) }).p, enableScriptChecks: true });
    expect(() => k.agent.registerCheck(docker)).toThrow(why);
    expect(k.agent.checks()).toEqual([]);
    const none = kit({ probes: probes().p, enableScriptChecks: true });
    expect(() => none.agent.registerCheck(docker)).toThrow("Docker checks cannot run on this agent: it has no Docker Engine client");
  });

  test("with a socket the check is registered as type docker", () => {
    const k = kit({ probes: probes({ docker: engine(undefined) }).p, enableScriptChecks: true });
    k.agent.registerCheck(docker);
    expect(k.agent.check("d")).toMatchObject({ Type: "docker" });
    k.agent.stop();
  });
});

describe("gRPC checks", () => {
  test("need the gRPC prober; registered as type grpc", () => {
    const g: CheckRegistration = { ...emptyCheckType(), CheckID: "g", Name: "g", ServiceID: "", GRPC: "127.0.0.1:1", IntervalMs: 5_000 };
    expect(() => kit().agent.registerCheck(g)).toThrow("gRPC checks cannot run on this agent: it has no gRPC prober");
    const k = kit({ probes: probes({ grpc: async () => 1 }).p });
    k.agent.registerCheck(g);
    expect(k.agent.check("g")).toMatchObject({ Type: "grpc" });
    k.agent.stop();
  });
});
