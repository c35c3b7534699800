/**
 * Script, Docker, gRPC and alias checks through the agent endpoints, over the real local agent (simulated
 * clock, fake probes; the Docker client is the real one, pointed at a socket that does not exist).
 */
import { describe, expect, test } from "bun:test";
import { simClock } from "../../test/harness/sim_clock.ts";
import {
  createLocalAgent, createMemoryCatalog, parseCheckRegistration, parseServiceRegistration, type LocalAgentOptions, type ProcessSpec,
} from "../agent/index.ts";
import { dockerEngineClient, memoryLogger, seededRng } from "../platform/index.ts";
import { AGENT_INFO, apiWith, flush, put } from "./agent_local_kit.test.ts";

const SCRIPTS_OFF = "Scripts are disabled on this agent; to enable, configure 'enable_script_checks' or 'enable_local_script_checks' to true";
const REMOTE_OFF = "Scripts are disabled on this agent from remote calls; to enable, configure 'enable_script_checks' to true";

function setup(options: Partial<LocalAgentOptions> = {}) {
  const clock = simClock();
  const spawned: ProcessSpec[] = [];
  let exitCode = 0;
  const agent = createLocalAgent({
    nodeName: "node-1", datacenter: "dc1",
    node: { nodeId: AGENT_INFO.nodeId, address: "10.0.0.1", taggedAddresses: {}, meta: {} },
    clock, rng: seededRng(1), logger: memoryLogger("error"), catalog: createMemoryCatalog(),
    probes: {
      http: async () => ({ status: 200, statusText: "OK", body: "" }), tcp: async () => {},
      grpc: async (req) => (req.service === "down" ? 2 : 1),
      process: (spec) => (spawned.push(spec), { done: Promise.resolve({ code: exitCode, output: `exit ${exitCode}`, totalBytes: 6 }), kill: () => {} }),
      docker: dockerEngineClient("unix:///nonexistent/causeway/docker.sock"),
      // A blocking read: answers at once from index 0, then waits (no change comes).
      nodeChecks: (_node, minIndex) => (minIndex >= 5 ? new Promise(() => {}) : Promise.resolve({ index: 5, checks: [{ Node: "n2", CheckID: "serfHealth", Name: "Serf Health Status", Status: "passing", Notes: "",
        Output: "", ServiceID: "", ServiceName: "", ServiceTags: null, Type: "", Definition: {}, CreateIndex: 1, ModifyIndex: 1 }] })),
    },
    ...options,
  });
  const app = apiWith({ ...agent, parseServiceRegistration, parseCheckRegistration });
  /** Lets every check run once (interval 10 s, stagger below it). */
  const runChecks = async () => {
    for (let i = 0; i < 100 && clock.nextAt() !== undefined && clock.nextAt()! <= 10_000; i++) {
      clock.runNext();
      await flush();
    }
  };
  return { app, agent, clock, spawned, runChecks, setExit: (c: number) => void (exitCode = c) };
}

const reply = async (res: Response) => [res.status, await res.text()];
const scriptCheck = JSON.stringify({ Name: "mem", Args: ["/usr/local/bin/check_mem", "-limit", "256MB"], Interval: "10s", Timeout: "1s" });

describe("script checks over /v1/agent/check/register and /v1/agent/service/register", () => {
  test("refused with Consul's text while neither setting is on; nothing is registered", async () => {
    const { app, agent } = setup();
    expect(await reply(await put(app, "/v1/agent/check/register", scriptCheck))).toEqual([400, SCRIPTS_OFF]);
    const svc = JSON.stringify({ Name: "web", Port: 80, Check: { Args: ["/bin/true"], Interval: "10s" } });
    expect(await reply(await put(app, "/v1/agent/service/register", svc))).toEqual([400, SCRIPTS_OFF]);
    expect([agent.agentServices(), agent.agentChecks()]).toEqual([{}, {}]);
    agent.stop();
  });

  test("enable_local_script_checks alone still refuses API registrations, with Consul's remote-calls text", async () => {
    const { app, agent } = setup({ enableLocalScriptChecks: true });
    expect(await reply(await put(app, "/v1/agent/check/register", scriptCheck))).toEqual([400, REMOTE_OFF]);
    agent.stop();
  });

  test("enable_script_checks: registered as a script check that runs; exit 0 passing, 1 warning, 2 critical", async () => {
    const s = setup({ enableScriptChecks: true });
    expect(await reply(await put(s.app, "/v1/agent/check/register", scriptCheck))).toEqual([200, ""]);
    await s.runChecks();
    expect(s.spawned).toEqual([{ args: ["/usr/local/bin/check_mem", "-limit", "256MB"], maxOutputBytes: 4096 }]);
    const checks = async () => (await (await s.app.request("/v1/agent/checks")).json()) as Record<string, { Status: string; Output: string; Type: string }>;
    expect((await checks()).mem).toMatchObject({ Type: "script", Status: "passing", Output: "exit 0" });
    for (const [code, status] of [[1, "warning"], [2, "critical"]] as const) {
      s.setExit(code);
      s.clock.advance(10_000);
      await flush();
      expect((await checks()).mem).toMatchObject({ Status: status, Output: `exit ${code}` });
    }
    s.agent.stop();
  });

  test("bad script checks get Consul's validation text", async () => {
    const { app, agent } = setup({ enableScriptChecks: true });
    expect(await reply(await put(app, "/v1/agent/check/register", '{"Name":"x","Args":["/bin/true"]}')))
      .toEqual([400, "Invalid check: Interval must be > 0 for Script, HTTP, or TCP checks"]);
    expect(await reply(await put(app, "/v1/agent/check/register", '{"Name":"x","Args":"/bin/true","Interval":"1s"}')))
      .toEqual([400, "Request decode failed: json: cannot unmarshal string into Go struct field CheckDefinition.ScriptArgs of type []string"]);
    agent.stop();
  });
});

describe("Docker checks", () => {
  test("without a Docker socket: 400 naming the missing socket; nothing is registered", async () => {
    const { app, agent } = setup({ enableScriptChecks: true });
    const body = JSON.stringify({ Name: "mem", DockerContainerID: "f972c95ebf0e", Shell: "/bin/bash", Args: ["/usr/local/bin/check_mem.py"], Interval: "10s" });
    expect(await reply(await put(app, "/v1/agent/check/register", body))).toEqual([
      400, "Docker checks cannot run on this agent: there is no Docker socket at /nonexistent/causeway/docker.sock (DOCKER_HOST is \"unix:///nonexistent/causeway/docker.sock\")",
    ]);
    expect(agent.agentChecks()).toEqual({});
    agent.stop();
  });

  test("are script checks: refused first when scripts are off", async () => {
    const { app, agent } = setup();
    const body = JSON.stringify({ Name: "d", DockerContainerID: "c", Args: ["true"], Interval: "10s" });
    expect(await reply(await put(app, "/v1/agent/check/register", body))).toEqual([400, SCRIPTS_OFF]);
    agent.stop();
  });
});

describe("gRPC checks", () => {
  test("SERVING is passing, another status critical", async () => {
    const s = setup();
    expect((await put(s.app, "/v1/agent/check/register", JSON.stringify({ Name: "up", GRPC: "127.0.0.1:9000/up", GRPCUseTLS: true, Interval: "10s" }))).status).toBe(200);
    expect((await put(s.app, "/v1/agent/check/register", JSON.stringify({ Name: "down", GRPC: "127.0.0.1:9000/down", Interval: "10s" }))).status).toBe(200);
    await s.runChecks();
    const checks = (await (await s.app.request("/v1/agent/checks")).json()) as Record<string, { Status: string; Output: string; Type: string }>;
    expect(checks.up).toMatchObject({ Type: "grpc", Status: "passing", Output: "gRPC check 127.0.0.1:9000/up: success" });
    expect(checks.down).toMatchObject({ Type: "grpc", Status: "critical", Output: "gRPC application didn't report service healthy" });
    s.agent.stop();
  });
});

describe("alias checks", () => {
  test("AliasNode is watched through the catalog; AliasService alone follows the local service", async () => {
    const s = setup();
    expect((await put(s.app, "/v1/agent/check/register", '{"Name":"n2-alias","AliasNode":"n2"}')).status).toBe(200);
    expect((await put(s.app, "/v1/agent/check/register", '{"Name":"web-alias","AliasService":"web"}')).status).toBe(200);
    await flush();
    const checks = (await (await s.app.request("/v1/agent/checks")).json()) as Record<string, { Status: string; Output: string; Type: string }>;
    expect(checks["n2-alias"]).toMatchObject({ Type: "alias", Status: "passing", Output: "All checks passing." });
    expect(checks["web-alias"]).toMatchObject({ Type: "alias", Status: "critical", Output: "Service web could not be found on node node-1" });
    expect(await reply(await put(s.app, "/v1/agent/check/register", '{"Name":"x","AliasNode":"n2","TTL":"5s"}')))
      .toEqual([400, "Invalid check: TTL must be not be set for Alias checks"]);
    s.agent.stop();
  });
});
