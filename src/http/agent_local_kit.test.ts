import { simClock, type SimClock } from "../../test/harness/sim_clock.ts";
import { createLocalAgent, createMemoryCatalog, parseCheckRegistration, parseServiceRegistration, type LocalAgent } from "../agent/index.ts";
import { memoryLogger, seededRng } from "../platform/index.ts";
import { createHttpApi } from "./app.ts";
import type { AgentInfo, HttpApiDeps, LocalAgentApi } from "./deps.ts";

// Shared helpers for the local-agent route tests. Named *.test.ts so that it may use runtime globals; it has no tests itself.

export const AGENT_INFO: AgentInfo = {
  datacenter: "dc1", primaryDatacenter: "dc1", nodeName: "node-1", nodeId: "11111111-2222-3333-4444-555555555555",
  server: true, version: "0.1.0", revision: "", advertiseAddr: "10.0.0.1", serfLanPort: 8301, serverPort: 8300,
  nodeMeta: {}, debugConfig: {}, stats: () => ({}),
};

/** The HTTP API over a local agent (and, for blocking, a clock); other deps are stubs. */
export function apiWith(localAgent: LocalAgentApi | undefined, extra: Partial<HttpApiDeps> = {}) {
  return createHttpApi({ agent: AGENT_INFO, raft: { leader: () => "", peers: () => [] }, localAgent, ...extra });
}

export interface Call {
  readonly op: string;
  readonly args: readonly unknown[];
}

/** A recording LocalAgentApi: every call is logged; `overrides` replace single methods; `emit()` fires onChange listeners. */
export function fakeAgent(overrides: Partial<LocalAgentApi> = {}) {
  const calls: Call[] = [];
  const listeners = new Set<() => void>();
  const record = (op: string) => (...args: unknown[]) => void calls.push({ op, args });
  const api: LocalAgentApi = {
    parseServiceRegistration: (body) => (calls.push({ op: "parseServiceRegistration", args: [body] }), { parsed: body }),
    parseCheckRegistration: (body) => (calls.push({ op: "parseCheckRegistration", args: [body] }), { parsed: body }),
    registerService: record("registerService"),
    deregisterService: record("deregisterService"),
    registerCheck: record("registerCheck"),
    deregisterCheck: record("deregisterCheck"),
    updateTTL: record("updateTTL"),
    enableServiceMaintenance: record("enableServiceMaintenance"),
    disableServiceMaintenance: record("disableServiceMaintenance"),
    enableNodeMaintenance: record("enableNodeMaintenance"),
    disableNodeMaintenance: record("disableNodeMaintenance"),
    agentServices: () => ({}),
    agentService: () => undefined,
    agentChecks: () => ({}),
    onChange(fn) {
      listeners.add(fn);
      return () => void listeners.delete(fn);
    },
    ...overrides,
  };
  return { api, calls, listeners, emit: () => [...listeners].forEach((fn) => fn()) };
}

/** An Error shaped like src/agent's AgentError. */
export function refusal(kind: "bad-request" | "not-found", message: string): Error {
  return Object.assign(new Error(message), { kind });
}

export interface RealKit {
  readonly clock: SimClock;
  readonly agent: LocalAgent;
  /** The agent as src/main wires it into the HTTP API. */
  readonly api: LocalAgentApi;
}

/** The real local agent over a simulated clock and an in-memory catalog. */
export function realAgent(): RealKit {
  const clock = simClock();
  const agent = createLocalAgent({
    nodeName: "node-1", datacenter: "dc1",
    node: { nodeId: AGENT_INFO.nodeId, address: "10.0.0.1", taggedAddresses: {}, meta: {} },
    clock, rng: seededRng(1), logger: memoryLogger("error"),
    probes: { http: async () => ({ status: 200, statusText: "OK", body: "" }), tcp: async () => {} },
    catalog: createMemoryCatalog(),
  });
  return { clock, agent, api: { ...agent, parseServiceRegistration, parseCheckRegistration } };
}

export const flush = () => new Promise<void>((resolve) => setImmediate(resolve));

export function put(app: ReturnType<typeof apiWith>, path: string, body?: string) {
  return app.request(path, { method: "PUT", ...(body !== undefined ? { body } : {}) });
}
