/**
 * The agent's HTTP API: Consul's /v1 routes (src/http) over the agent's parts, served on the client
 * address. startAgent (agent.ts) builds the parts; this is where they become the API's dependencies.
 */
import { createHttpApi, MAX_REQUEST_BODY_BYTES, type AgentInfo, type RaftStatus } from "../http/index.ts";
import { createUi, normalizeContentPath } from "../ui/index.ts";
import { serveHttp, systemClock, type HttpServerHandle, type Logger, type LogTap, type LogTaps } from "../platform/index.ts";
import type { RunningServer } from "../server/index.ts";
import { checkAclSubject, serviceAclSubjects } from "./acl_subjects.ts";
import { intentionDefaultAllow, type agentTokenResolver } from "./acl_resolver.ts";
import type { AgentTokens } from "./agent_tokens.ts";
import type { startClientRpc } from "./client_rpc.ts";
import type { RuntimeConfig } from "./config.ts";
import type { createStateAccess } from "./state_access.ts";
import type { connectCaApiOver } from "./connect_access.ts";
import type { startGossip } from "./gossip.ts";
import type { AgentMetrics } from "./metrics.ts";
import { autopilotHealthOver, operatorApiOver, raftStatusOver } from "./operator_api.ts";
import { snapshotApiOver } from "./snapshot_api.ts";
import { createEventsApi, parseCheckRegistration, parseServiceRegistration, type createLocalAgent } from "../agent/index.ts";
import type { CheckRegistration, RegisterServiceOptions, ServiceRegistration } from "../agent/index.ts";

export interface AgentHttpParts {
  readonly config: RuntimeConfig;
  readonly logger: Logger;
  readonly agentInfo: AgentInfo;
  /** This agent's server, or undefined on a client agent (then `clientRpc`). */
  readonly server: RunningServer | undefined;
  readonly clientRpc: ReturnType<typeof startClientRpc> | undefined;
  readonly gossip: Awaited<ReturnType<typeof startGossip>>;
  /** Every known datacenter, nearest first. */
  readonly datacenters: () => readonly string[] | Promise<readonly string[]>;
  readonly wanCoordinateMaps: NonNullable<Parameters<typeof createHttpApi>[0]["coordinates"]>["datacenters"] | undefined;
  readonly stateAccess: ReturnType<typeof createStateAccess> | undefined;
  readonly connectCa: ReturnType<typeof connectCaApiOver> | undefined;
  readonly localAgent: ReturnType<typeof createLocalAgent> | undefined;
  readonly agentTokens: AgentTokens;
  readonly aclResolver: ReturnType<typeof agentTokenResolver> | undefined;
  readonly metrics: AgentMetrics;
  /** The logger's taps (commands/agent.ts), for /v1/agent/monitor. */
  readonly logTaps: LogTaps | undefined;
  /** The agent's reload (PUT /v1/agent/reload); absent when it cannot reload. */
  readonly reload?: () => Promise<void>;
}

/** Builds the API over `p` and serves it on `client_addr:ports.http`. */
export function startAgentHttp(p: AgentHttpParts): Promise<HttpServerHandle> {
  const { config, logger, agentInfo, server, clientRpc, gossip, wanCoordinateMaps, stateAccess, connectCa, localAgent, agentTokens, aclResolver, metrics } = p;
  // A client agent has no Raft of its own: it asks a server of its datacenter over RPC.
  const rpc = server ? server.rpc : clientRpc ? () => clientRpc.pool.transport({ datacenter: config.datacenter }) : undefined;
  // This datacenter's status from the local Raft on a server; another datacenter's over RPC (forwarded).
  const remoteStatus = rpc ? raftStatusOver(rpc) : undefined;
  const raft: RaftStatus = server
    ? {
      leader: (dc?: string) => (dc && dc !== config.datacenter && remoteStatus ? remoteStatus.leader(dc) : server.raft.leader()),
      peers: (dc?: string) => (dc && dc !== config.datacenter && remoteStatus ? remoteStatus.peers(dc) : server.raft.peers()),
    }
    : remoteStatus ?? { leader: () => "", peers: () => [] };
  const catalog = { datacenters: p.datacenters };
  const httpLog = logger.named("http");
  const app = createHttpApi({
    agent: agentInfo,
    ...(p.reload ? { agentReload: p.reload } : {}),
    raft,
    membership: server
      ? { ...gossip.membership, leave: async () => { await server!.stepDown(); await gossip.membership.leave(); } }
      : gossip.membership,
    keyring: gossip.keyring,
    catalog,
    coordinates: {
      enabled: !config.disableCoordinates,
      lan: () => gossip.lan.coordinate(),
      ...(wanCoordinateMaps ? { datacenters: wanCoordinateMaps } : {}),
    },
    state: stateAccess,
    sessionRenewal: stateAccess,
    connectCa,
    localAgent: localAgent
      ? {
        ...localAgent,
        parseServiceRegistration,
        parseCheckRegistration,
        serviceAclSubjects: (reg: unknown) => serviceAclSubjects(reg as ServiceRegistration),
        checkAclSubject: (reg: unknown) => checkAclSubject(reg as CheckRegistration),
        // Consul's AddService waits for the service's central config before registering it.
        registerService: (reg: unknown, opts: RegisterServiceOptions) => localAgent.registerServiceWithCentralConfig(reg as ServiceRegistration, opts),
      }
      : undefined,
    clock: systemClock(),
    snapshots: stateAccess ? snapshotApiOver(stateAccess, systemClock()) : undefined,
    operator: rpc ? operatorApiOver(rpc, agentTokens.default) : undefined,
    autopilot: rpc ? autopilotHealthOver(rpc, agentTokens.default) : undefined,
    events: createEventsApi({
      lan: gossip.lan,
      local: {
        nodeName: config.nodeName,
        services: () => Object.values(localAgent?.agentServices() ?? {}).map((s) => ({ service: s.Service, tags: s.Tags ?? [] })),
      },
      clock: systemClock(),
      newId: () => crypto.randomUUID(),
      onBadEvent: (name) => logger.named("events").warn("dropping a user event that does not decode", { event: name }),
    }),
    random: Math.random,
    newId: () => crypto.randomUUID(),
    metrics: metrics.api,
    acl: { enabled: config.acl.enabled },
    ...(aclResolver ? { aclAuthorizer: aclResolver.authorizer } : {}),
    ...(config.acl.enabled ? { intentionDefaultAllow: intentionDefaultAllow(config) } : {}),
    ...(config.acl.enabled ? { agentTokens: { set: agentTokens.set, onUpdated: (name: string) => logger.named("agent").info("Updated agent's ACL token", { token: name }) } } : {}),
    // The logger's taps (commands/agent.ts): /v1/agent/monitor reads every line at its own level.
    ...(p.logTaps ? {
      monitor: {
        tap: (t: LogTap) => p.logTaps!.add(t),
        onDropped: (count: number) => logger.named("agent").warn("Dropped logs during monitor request", { dropped_count: count }),
      },
    } : {}),
    logError: (err, request) => httpLog.error("request failed", { method: request.method, path: request.path, error: err }),
  });
  const ui = config.ui.enabled ? webUi(p, app) : undefined;
  return serveHttp({
    host: config.clientAddr,
    port: config.ports.http,
    handler: (req, info) => (ui?.serves(new URL(req.url).pathname) ? ui.app.fetch(req) : app.fetch(req, info)),
    maxRequestBodyBytes: MAX_REQUEST_BODY_BYTES,
    onError: (err) => httpLog.error("request failed", { error: err }),
    onClientAbort: (abort) => httpLog.warn("client closed the connection mid-request", { ...abort }),
  });
}

/**
 * The web UI over the agent's own API (in process: the same handlers and ACL checks as over the
 * network), and which paths are its: the content path, and "/" (Consul redirects it to the UI).
 */
function webUi(p: AgentHttpParts, api: ReturnType<typeof createHttpApi>): { app: ReturnType<typeof createUi>; serves(path: string): boolean } {
  const base = normalizeContentPath(p.config.ui.contentPath);
  const app = createUi({
    datacenter: p.config.datacenter,
    contentPath: base,
    datacenters: p.datacenters,
    api: (call) => {
      const headers = new Headers();
      if (call.token) headers.set("X-Consul-Token", call.token);
      const init: RequestInit = { method: call.method ?? "GET", headers, ...(call.body !== undefined ? { body: call.body } : {}), ...(call.signal ? { signal: call.signal } : {}) };
      return Promise.resolve(api.fetch(new Request(`http://ui.internal${call.path}`, init), { remoteAddress: "127.0.0.1" }));
    },
    clock: systemClock(),
  });
  return { app, serves: (path) => path === "/" || path === base.replace(/\/$/, "") || path.startsWith(base) };
}
