/**
 * What the HTTP API needs from the rest of the agent. The composition root (src/main) provides these;
 * the HTTP layer never reaches for a server object. Every dependency interface of an API area is
 * declared here, so that the area files import this file and this file imports none of them.
 */
import type { UserEvents } from "../agent/index.ts";
import type { CAConfiguration, IssuedCert } from "../connect/index.ts";
import type { DatacenterMap, NetworkCoordinate, ReadQuery, ReadValue, Session } from "../model/index.ts";
import type { Clock, LogTap } from "../platform/index.ts";
import type { StateCommand, StateResult } from "../state/index.ts";
import type { MetricsRegistry } from "../telemetry/index.ts";
import type { Authorizer } from "../acl/index.ts";
import type { QueryMeta, ReadOptions } from "./query_options.ts";

/** The agent's user events (src/agent/user_events.ts), as `/v1/event/*` uses them. */
export type EventsApi = UserEvents;

/** Facts about the local agent, as the agent knows them now. Read at request time. */
export interface AgentInfo {
  readonly datacenter: string;
  readonly primaryDatacenter: string;
  readonly nodeName: string;
  readonly nodeId: string;
  readonly server: boolean;
  readonly version: string;
  /** The source revision the agent was built from, or "" when unknown (running from source). */
  readonly revision: string;
  /** The address other agents reach this one at (advertise address). */
  readonly advertiseAddr: string;
  readonly serfLanPort: number;
  readonly serverPort: number;
  readonly nodeMeta: Readonly<Record<string, string>>;
  /** Effective configuration for DebugConfig (plain data, already redacted of secrets). */
  readonly debugConfig: Readonly<Record<string, unknown>>;
  /** Runtime facts for Stats (plain data). */
  stats(): Readonly<Record<string, Readonly<Record<string, string>>>>;
}

/** Raft status as the local server sees it (a client agent asks a server). */
export interface RaftStatus {
  /**
   * The leader's server address (`ip:port`), or "" when no leader is known; of `datacenter` when given
   * (its servers answer; rejects with "No path to datacenter" for an unknown one).
   */
  leader(datacenter?: string): string | Promise<string>;
  /** Server addresses of the voting peers (of `datacenter` when given); empty before Raft starts. */
  peers(datacenter?: string): readonly string[] | Promise<readonly string[]>;
}

/** The agent's log, as `/v1/agent/monitor` reads it. */
export interface MonitorApi {
  /** Adds a reader of every log line at its level and above; returns its removal. */
  tap(tap: LogTap): () => void;
  /** A monitor request ended having dropped `count` lines its client was too slow for. */
  onDropped?(count: number): void;
}

/** The agent's metrics: what `/v1/agent/metrics` shows and where the API records its request timings. */
export interface MetricsApi {
  readonly registry: MetricsRegistry;
  /** `telemetry.prometheus_retention_time` in ms; 0 or less refuses `?format=prometheus` (415, as Consul). */
  readonly prometheusRetentionMs: number;
  /** Monotonic milliseconds, for request durations. */
  monotonic(): number;
}

export interface HttpApiDeps {
  readonly agent: AgentInfo;
  readonly raft: RaftStatus;
  /** Gossip pools; absent while gossip is not running. */
  readonly membership?: MembershipApi;
  /**
   * Reads the agent's configuration again and applies what changes at run time (PUT /v1/agent/reload);
   * rejects with the reason it failed. Absent: the route answers 500.
   */
  readonly agentReload?: () => Promise<void>;
  readonly catalog?: CatalogApi;
  /** Network coordinates (/v1/coordinate/*, `Coord` of /v1/agent/self); absent: enabled, but no local or WAN coordinates known. */
  readonly coordinates?: CoordinateApi;
  /** Gossip keyring management (/v1/operator/keyring); absent while gossip is not running. */
  readonly keyring?: KeyringApi;
  /** The replicated state (catalog, health, KV, sessions); absent when this agent cannot reach it. */
  readonly state?: StateAccess;
  /** `/v1/operator/raft/*`; absent when this agent cannot reach a server. */
  readonly operator?: OperatorApi;
  /** `/v1/operator/autopilot/health`; absent when this agent cannot reach a server. */
  readonly autopilot?: AutopilotHealthApi;
  /** `/v1/event/*`; absent when gossip is not running. */
  readonly events?: EventsApi;
  /** `/v1/snapshot`; absent when this agent cannot take or restore snapshots. */
  readonly snapshots?: SnapshotApi;
  /** `/v1/connect/ca/configuration` PUT and the agent's leaf certificates; absent when this agent cannot reach a server. */
  readonly connectCa?: ConnectCaApi;
  /** ACLs (`acl.enabled`): absent or off, every /v1/acl route answers 401 "ACL support disabled". */
  readonly acl?: { readonly enabled: boolean };
  /**
   * With ACLs on: the authorizer of a request's token (undefined: none given), resolved by the agent
   * for the endpoints no server checks (acl_agent_rules.ts); rejects with an error carrying its status.
   */
  readonly aclAuthorizer?: (token: string | undefined) => Promise<Authorizer>;
  /**
   * With ACLs on: what an intention check or authorization decides when no intention matches (the ACL
   * default policy, Consul's IntentionDefaultAllow). Absent: ACLs are off, which allows.
   */
  readonly intentionDefaultAllow?: boolean;
  /** With ACLs on: the agent's own tokens, set by `PUT /v1/agent/token/<name>` (agent_token.ts). */
  readonly agentTokens?: {
    /** Persists (when configured) and sets the token; throws when it cannot be persisted, changing nothing. */
    set(name: "default" | "agent" | "agentMaster" | "replication", secret: string): void;
    /** Told after a change, with the name the request used (for the log). */
    onUpdated?(pathName: string): void;
  };
  /** The agent's log for /v1/agent/monitor; absent: that route answers 500. */
  readonly monitor?: MonitorApi;
  /** Metrics (/v1/agent/metrics, request timings); absent: that route answers 500 and nothing is timed. */
  readonly metrics?: MetricsApi;
  /** A number in [0, 1) for blocking-query jitter; injected so tests are deterministic. */
  readonly random?: () => number;
  /** A fresh random UUID per call, for new session IDs (Consul's uuid.GenerateUUID); session create answers 500 without it. */
  readonly newId?: () => string;
  /** Session TTL renewal on the leader (/v1/session/renew); that route answers 500 without it. */
  readonly sessionRenewal?: SessionRenewal;
  /** The local agent's services and checks (/v1/agent/service*, /v1/agent/check*, maintenance, local health); those routes answer 500 without it. */
  readonly localAgent?: LocalAgentApi;
  /** Time for waits the HTTP layer does itself (hash-based blocking on /v1/agent/service/:id); without it such reads answer at once. */
  readonly clock?: Clock;
  /** Wall-clock ms since the epoch for timestamps (intention CreatedAt/UpdatedAt); falls back to clock.now(); intention writes answer 500 without either. */ readonly now?: () => number;
  /**
   * Hears an error a route did not answer itself (the app answers it with errorResponse): only those
   * answered 5xx, once each, with the request's method and path. Absent: such errors are not logged.
   */
  readonly logError?: (err: unknown, request: { readonly method: string; readonly path: string }) => void;
}

/**
 * Renews a session's TTL timer on the leader of `datacenter` (undefined: the agent's own) and resolves
 * to the session as stored, or to an empty list (or undefined) when no such session exists; rejects
 * with a message for the client on failure (Consul's Session.Renew).
 */
export interface SessionRenewal {
  /** As the holder of `token` (undefined: the agent's default), who needs session:write on the session's node. */
  renewSession(id: string, datacenter: string | undefined, token?: string): Promise<readonly Session[] | undefined>;
}

/** One server of the Raft configuration in Consul's api.RaftServer shape. */
export interface RaftServerView {
  readonly ID: string;
  readonly Node: string;
  readonly Address: string;
  readonly Leader: boolean;
  readonly ProtocolVersion: string;
  readonly Voter: boolean;
}

/**
 * Raft membership as an operator sees it; calls are served by the datacenter's leader (or any server
 * with stale), made with the request's `token` (undefined: the agent's default), which the serving
 * server checks with ACLs (operator:read, write for changes).
 */
export interface OperatorApi {
  raftConfiguration(o: { datacenter: string | undefined; stale: boolean; token?: string }): Promise<{ readonly Servers: readonly RaftServerView[]; readonly Index: number }>;
  /** Removes a server by Raft ID or by server address; rejects with the reason (e.g. unknown id). */
  removePeer(o: { datacenter: string | undefined; id?: string; address?: string; token?: string }): Promise<void>;
  /**
   * Hands leadership to voter `id` (undefined: the most caught-up other voter) and resolves once a new
   * leader is known; rejects with the reason (an unknown id or a non-voter as a request fault, no other
   * voter, or no new leader in time). Absent: the agent cannot do it (answered 500).
   */
  transferLeader?(o: { datacenter: string | undefined; id?: string; token?: string }): Promise<void>;
}

/** One server's health as the leader judged it (Consul's autopilot.ServerHealth), in Causeway's units. */
export interface AutopilotServerHealthView {
  readonly id: string;
  readonly name: string;
  readonly address: string;
  readonly serfStatus: string;
  readonly version: string;
  readonly leader: boolean;
  readonly voter: boolean;
  readonly healthy: boolean;
  /** Undefined when unknown (shown as Consul's "-1ns"). */
  readonly lastContactMs: number | undefined;
  readonly lastTerm: number;
  readonly lastIndex: number;
  /** Wall-clock ms since the epoch; undefined when never judged (Go's zero time). */
  readonly stableSinceMs: number | undefined;
}

/** Autopilot's server health, served by the leader of a datacenter (Consul's Operator.ServerHealth). */
export interface AutopilotHealthApi {
  /** The leader's latest judgement (asked with `token`, as OperatorApi); rejects with a message for the client when it cannot be had. */
  serverHealth(datacenter: string | undefined, token?: string): Promise<{ readonly healthy: boolean; readonly failureTolerance: number; readonly servers: readonly AutopilotServerHealthView[] }>;
}

/** One gossip pool's answer to a keyring operation (Consul's structs.KeyringResponse). */
export interface KeyringPoolResult {
  readonly wan: boolean;
  readonly datacenter: string;
  /** Network segment; "" for the default one. */
  readonly segment: string;
  /** Node name -> error or warning that node reported. */
  readonly messages: Readonly<Record<string, string>>;
  /** Base64 key -> number of nodes that have it installed (list only). */
  readonly keys: Readonly<Record<string, number>>;
  /** Live members of the pool when the operation started. */
  readonly numNodes: number;
  /** "" when every node answered and none refused; else serf's error ("1/3 nodes reported failure"). */
  readonly error: string;
}

/**
 * The agent's gossip keyrings, operated on cluster-wide. Each method resolves to one result per pool
 * (WAN first, then LAN, as Consul orders them) and rejects only when the operation could not run at all.
 * Keys reaching install/use/remove were checked by the route (keyring.ts) to be base64 of 16, 24 or 32 bytes.
 */
export interface KeyringApi {
  list(): Promise<readonly KeyringPoolResult[]>;
  install(key: string): Promise<readonly KeyringPoolResult[]>;
  use(key: string): Promise<readonly KeyringPoolResult[]>;
  remove(key: string): Promise<readonly KeyringPoolResult[]>;
}

/** What the CA routes need beyond the replicated state's reads. */
export interface ConnectCaApi {
  /**
   * Applies a CA configuration through the leader of `datacenter` as the holder of `token` (undefined:
   * the agent's default); rejects with a message for the client.
   */
  setConfiguration(config: CAConfiguration, datacenter: string | undefined, token?: string): Promise<void>;
  /**
   * The local agent's cached leaf for `service` with its index, signed for the holder of `token` (each
   * token has its own cached leaf); with `minIndex` > 0 waits (up to `maxWaitMs`) for a newer one.
   * Rejects with a message when no leaf can be signed.
   */
  leaf(service: string, options: { readonly minIndex: number; readonly maxWaitMs: number; readonly token?: string }): Promise<{ readonly cert: IssuedCert; readonly index: number }>;
}

/** The catalog as far as it exists today: datacenters known through the WAN pool. */
export interface CatalogApi {
  /** Known datacenters, nearest first (round-trip time); fails with a message when this agent cannot tell. */
  datacenters(): readonly string[] | Promise<readonly string[]>;
}

/** The agent's network coordinates as the HTTP API shows them. */
export interface CoordinateApi {
  /** False with `disable_coordinates`: every /v1/coordinate route answers 401 "Coordinate support disabled" and `Coord` is null. */
  readonly enabled: boolean;
  /** This agent's LAN coordinate now (serf GetCoordinate), or undefined when gossip is not running. */
  lan(): NetworkCoordinate | undefined;
  /**
   * The WAN coordinates of every known server by datacenter (Consul's Coordinate.ListDatacenters): a
   * server's WAN pool, or a client agent's answer from a server; absent on agents that cannot tell (the
   * route then answers 500). Rejects with a message for the client.
   */
  datacenters?(): readonly DatacenterMap[] | Promise<readonly DatacenterMap[]>;
}

/** Serf member status, as Consul's HTTP API reports it (an integer on the wire, see `MEMBER_STATUS_CODES`). */
export type MemberStatus = "none" | "alive" | "leaving" | "left" | "failed";

/** One member of a gossip pool as the local agent sees it now. */
export interface MemberView {
  readonly name: string;
  /** The member's gossip IP address (no port). */
  readonly addr: string;
  /** The member's gossip port. */
  readonly port: number;
  /** Serf tags (`role`, `dc`, `id`, `vsn`, `build`, `port`, `segment`, ...). */
  readonly tags: Readonly<Record<string, string>>;
  readonly status: MemberStatus;
}

/**
 * The gossip pools of the local agent, for /v1/agent/members, join, leave and force-leave. Absent when
 * gossip is not running; the HTTP API then answers those routes with 500 rather than inventing members.
 */
export interface MembershipApi {
  /** Members of the LAN pool, or the WAN pool (servers only) when wan is true. */
  members(wan: boolean): readonly MemberView[];
  /** Joins the pool through `address` (`host` or `host:port`); resolves to the number of nodes contacted, rejects with a message on failure. */
  join(address: string, wan: boolean): Promise<number>;
  /** Leaves gracefully; the agent shuts down afterwards (the caller arranges that after answering). */
  leave(): Promise<void>;
  /** Forces `node` into the left state (and out of the member list with prune); rejects if the node is unknown. */
  forceLeave(node: string, options: { prune: boolean; wan: boolean }): Promise<void>;
}

/**
 * The replicated state as the HTTP API reaches it: reads with Consul's options (routed to the right
 * server, blocking when asked) and writes through Raft. Failures reject with an Error whose message
 * is meant for the client (e.g. "No cluster leader"); the route answers 500 with it.
 */
export interface StateAccess {
  read<Q extends ReadQuery>(query: Q, options: ReadOptions): Promise<{ readonly value: ReadValue<Q>; readonly meta: QueryMeta }>;
  /** Applies `command` as the holder of `token` (undefined: the request carried none). */
  write(command: StateCommand, datacenter: string | undefined, token?: string): Promise<StateResult>;
}

/** Saving and restoring the whole replicated state as a snapshot archive. */
export interface SnapshotApi {
  /** The archive of the state as the serving server has it, with the meta for X-Consul-* headers. */
  save(options: ReadOptions): Promise<{ readonly archive: Uint8Array; readonly meta: QueryMeta }>;
  /**
   * Replaces the state of `datacenter` (default: this one) with the archive's. Rejects with a message
   * starting "not a snapshot", "snapshot is damaged" or "unsupported snapshot" for a bad file, in which
   * case nothing changed.
   */
  restore(archive: Uint8Array, datacenter: string | undefined, token?: string): Promise<void>;
}

/**
 * The local agent as the local-agent routes use it: src/agent's LocalAgent plus its two body decoders.
 * src/main passes `{ ...createLocalAgent(...), parseServiceRegistration, parseCheckRegistration }`.
 *
 * Registrations are opaque here: what a parse function returns is handed unchanged to the matching
 * register call. A refused request throws an Error whose `kind` is "bad-request" (answered 400) or
 * "not-found" (404), with Consul's wording as its message (src/agent's AgentError); any other error is
 * answered 500 with its message.
 */
export interface LocalAgentApi {
  /** Decodes and validates a parsed `PUT /v1/agent/service/register` body. */
  parseServiceRegistration(body: unknown): unknown;
  /** Decodes and validates a parsed `PUT /v1/agent/check/register` body. */
  parseCheckRegistration(body: unknown): unknown;
  /**
   * Registers (or replaces) a service with its checks and sidecar; returns warnings (ignored). `token`:
   * the request's ACL token, kept with the service (anti-entropy and its proxy's watches use it).
   */
  registerService(registration: unknown, options: { readonly replaceExistingChecks?: boolean; readonly token?: string }): unknown;
  deregisterService(serviceId: string): void;
  /** Registers (or replaces) a check; returns warnings (ignored). `token` as for registerService. */
  registerCheck(registration: unknown, options?: { readonly token?: string }): unknown;
  deregisterCheck(checkId: string): void;
  /** Sets a TTL check's status ("passing" | "warning" | "critical") and output. */
  updateTTL(checkId: string, status: string, output: string): void;
  enableServiceMaintenance(serviceId: string, reason: string): void;
  disableServiceMaintenance(serviceId: string): void;
  enableNodeMaintenance(reason: string): void;
  disableNodeMaintenance(): void;
  /** `GET /v1/agent/services` body: api.AgentService values by service ID. */
  agentServices(): Readonly<Record<string, LocalAgentServiceView>>;
  /** One service with its ContentHash, or undefined. */
  agentService(serviceId: string): LocalAgentServiceView | undefined;
  /** `GET /v1/agent/checks` body: structs.HealthCheck values by check ID. */
  agentChecks(): Readonly<Record<string, LocalAgentCheckView>>;
  /** Calls fn (synchronously) after every visible change of services or checks; returns the unsubscribe. */
  onChange(fn: () => void): () => void;
  /** The services a parsed registration writes (its sidecar too), for ACL checks (agent_acl.ts). */
  serviceAclSubjects?(registration: unknown): readonly { readonly id: string; readonly name: string; readonly destination?: string }[];
  /** The check a parsed check registration writes: its ID and its service's ID ("" for a node check). */
  checkAclSubject?(registration: unknown): { readonly checkId: string; readonly serviceId: string };
}

/** The fields of an api.AgentService the routes read; the whole value is written out as JSON. */
export interface LocalAgentServiceView {
  readonly ID: string;
  readonly Service: string;
  /** Set by agentService(id): changes whenever the service does (hash-based blocking). */
  readonly ContentHash?: string;
}

/** The fields of an agent check the routes read; the whole value is written out as JSON. */
export interface LocalAgentCheckView {
  readonly Node: string;
  readonly CheckID: string;
  readonly Name: string;
  readonly Status: string;
  readonly Notes: string;
  readonly Output: string;
  readonly ServiceID: string;
  readonly ServiceName: string;
  readonly ServiceTags: readonly string[] | null;
}
