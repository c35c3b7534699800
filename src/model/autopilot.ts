/**
 * Autopilot configuration in Consul 1.8's shape (`agent/structs/operator.go` AutopilotConfig, served
 * by `/v1/operator/autopilot/configuration` as `api.AutopilotConfiguration`). The servers keep it in
 * the replicated state (Consul's AutopilotRequestType); durations are held in milliseconds here and
 * written as Go duration strings ("200ms", "10s") on the HTTP API.
 */
export interface AutopilotConfig {
  /** Remove dead servers from the Raft configuration when a new server joins (default true). */
  readonly CleanupDeadServers: boolean;
  /** A server whose last contact with the leader is older than this is unhealthy (default 200 ms). */
  readonly LastContactThresholdMs: number;
  /** A server more than this many log entries behind the leader is unhealthy (default 250). */
  readonly MaxTrailingLogs: number;
  /** Dead-server cleanup never shrinks the voters below this (0: no floor; default 0). */
  readonly MinQuorum: number;
  /** A server must be healthy this long before it is promoted to voter (default 10 s). */
  readonly ServerStabilizationTimeMs: number;
  /** Enterprise features, kept and echoed only. */
  readonly RedundancyZoneTag: string;
  readonly DisableUpgradeMigration: boolean;
  readonly UpgradeVersionTag: string;
  readonly CreateIndex: number;
  readonly ModifyIndex: number;
}

/** Consul's defaults (agent/config/default.go `autopilot` block). */
export const AUTOPILOT_DEFAULTS: Omit<AutopilotConfig, "CreateIndex" | "ModifyIndex"> = {
  CleanupDeadServers: true,
  LastContactThresholdMs: 200,
  MaxTrailingLogs: 250,
  MinQuorum: 0,
  ServerStabilizationTimeMs: 10_000,
  RedundancyZoneTag: "",
  DisableUpgradeMigration: false,
  UpgradeVersionTag: "",
};
