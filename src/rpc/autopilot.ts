/**
 * Autopilot's server health as the leader computes it and the Operator service serves it (Consul 1.8's
 * agent/consul/autopilot ServerHealth and OperatorHealthReply), in Causeway's units.
 */

/** One server of the Raft configuration as the leader judges it. */
export interface AutopilotServerHealth {
  /** Raft ID. */
  readonly id: string;
  /** Node name from the LAN pool; "" when gossip does not show the server. */
  readonly name: string;
  /** Server-port address. */
  readonly address: string;
  /** Serf member status: "alive", "leaving", "left", "failed", or "none" when gossip does not show it. */
  readonly serfStatus: string;
  /** The `x.y.z` of the server's build tag; "" when unknown. */
  readonly version: string;
  readonly leader: boolean;
  readonly voter: boolean;
  readonly healthy: boolean;
  /** Time since the server's last contact with the leader; undefined when unknown (Consul's -1ns). */
  readonly lastContactMs: number | undefined;
  /** The server's last log term and index as far as the leader knows (0 when unknown). */
  readonly lastTerm: number;
  readonly lastIndex: number;
  /** Wall-clock ms when `healthy` last changed; undefined when never judged (Go's zero time). */
  readonly stableSinceMs: number | undefined;
}

/** The cluster's health: all servers healthy, how many voters could fail without an outage, each server. */
export interface AutopilotClusterHealth {
  readonly healthy: boolean;
  readonly failureTolerance: number;
  readonly servers: readonly AutopilotServerHealth[];
}

/** What the Operator service reads on the leader. */
export interface AutopilotHealthSource {
  /** The latest computed health; undefined before the first computation of this leadership. */
  health(): AutopilotClusterHealth | undefined;
}
