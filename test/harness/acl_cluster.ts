/**
 * An ACL-enabled server in one process for tests: the HTTP API over the agent's StateAccess, the
 * State service and the replicated state with ACL enforcement (default deny), on a consensus of one.
 * `call` makes HTTP requests; `fetch` is the same app as a fetch function (for CLI commands); `tokens`
 * are the agent's tokens (agent_master is "am"), set through `PUT /v1/agent/token/<name>`.
 */
import type { ConsensusNode, ConsensusStatus } from "../../src/consensus/index.ts";
import { createHttpApi, type AgentInfo } from "../../src/http/index.ts";
import { seededRng, silentLogger, uuidFrom } from "../../src/platform/index.ts";
import { createServerStateCaller, type RpcContext } from "../../src/rpc/index.ts";
import { createLeaderRunner } from "../../src/server/leader_routines.ts";
import { createReplicatedState } from "../../src/server/replicated_state.ts";
import type { StateResult } from "../../src/state/index.ts";
import { flushMacrotask, simClock } from "./sim_clock.ts";
import { createStateAccess } from "../../src/main/state_access.ts";
import { agentTokenResolver } from "../../src/main/acl_resolver.ts";
import { createAgentTokens } from "../../src/main/agent_tokens.ts";
import { DEFAULT_ACL } from "../../src/main/config.ts";

const agent: AgentInfo = {
  datacenter: "dc1", primaryDatacenter: "dc1", nodeName: "s1", nodeId: "id", server: true, version: "1.8.0", revision: "", advertiseAddr: "127.0.0.1",
  serfLanPort: 8301, serverPort: 8300, nodeMeta: {}, debugConfig: {}, stats: () => ({}),
};

export async function aclCluster(enabled = true) {
  const clock = simClock(Date.parse("2026-12-03T12:00:00Z"));
  const rng = seededRng(3);
  const rs = createReplicatedState({
    clock, rng, logger: silentLogger(), datacenter: "dc1", nodeName: "s1", ...(enabled ? { acl: { masterToken: "", defaultPolicy: "deny" as const, defaultToken: () => "", enableKeyListPolicy: false } } : {}),
  });
  let index = 0;
  rs.attach({ propose: async (b: Uint8Array) => rs.stateMachine.apply(++index, b), read: async () => {}, status: () => ({ term: 1, leader: "s1" }) } as unknown as ConsensusNode<StateResult>);
  createLeaderRunner(rs.leaderRoutines, silentLogger()).setLeader(true);
  await flushMacrotask();
  const ctx: RpcContext = {
    datacenter: "dc1", node: "s1", pool: { transport: () => { throw new Error("unused"); }, connections: () => 0, retire: () => 0, targets: () => 0, close: () => {} },
    raft: { status: () => ({ role: "Leader", leader: "s1", lastLeaderContactMs: 0 }) as unknown as ConsensusStatus, changeMembership: () => Promise.reject(new Error("unused")) },
    servers: { lookup: () => undefined },
  };
  const tokens = createAgentTokens({ ...DEFAULT_ACL.tokens, agentMaster: "am" }, undefined, () => {});
  const state = createStateAccess(createServerStateCaller(ctx, rs.backend), tokens.default);
  const settings = { datacenter: "dc1", nodeName: "s1", acl: { ...DEFAULT_ACL, enabled, defaultPolicy: "deny" as const, tokens: { ...DEFAULT_ACL.tokens, agentMaster: "am" } } };
  const resolver = agentTokenResolver(settings, state, tokens);
  const app = createHttpApi({
    agent, raft: { leader: () => "", peers: () => [] }, state, newId: () => uuidFrom(rng), now: () => clock.now(), clock, acl: { enabled },
    ...(enabled ? { aclAuthorizer: resolver.authorizer, agentTokens: tokens, intentionDefaultAllow: false } : {}),
  });
  const call = async (method: string, path: string, token?: string, body?: unknown) => {
    const res = await app.request(path, { method, ...(token ? { headers: { "X-Consul-Token": token } } : {}), ...(body !== undefined ? { body: typeof body === "string" ? body : JSON.stringify(body) } : {}) });
    const text = await res.text();
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      json = undefined;
    }
    return { status: res.status, text, json: json as Record<string, unknown> & unknown[] };
  };
  return { call, fetch: (url: string, init: RequestInit) => app.request(url, init), tokens };
}

