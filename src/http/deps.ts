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
}
