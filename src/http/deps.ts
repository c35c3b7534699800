/**
 * What the HTTP API needs from the rest of the agent. The composition root (src/main) provides these;
 * the HTTP layer never reaches for a server object.
 */

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

/** Raft status as the local server sees it. */
export interface RaftStatus {
  /** The leader's server address (`ip:port`), or "" when no leader is known. */
  leader(): string;
  /** Server addresses of the voting peers; empty when not a server or before Raft starts. */
  peers(): readonly string[];
}

export interface HttpApiDeps {
  readonly agent: AgentInfo;
  readonly raft: RaftStatus;
  /** Gossip pools; absent while gossip is not running. */
  readonly membership?: MembershipApi;
  readonly catalog?: CatalogApi;
}

/** The catalog as far as it exists today: datacenters known through the WAN pool. */
export interface CatalogApi {
  /** Known datacenters, nearest first (round-trip time); fails with a message when this agent cannot tell. */
  datacenters(): readonly string[] | Promise<readonly string[]>;
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
