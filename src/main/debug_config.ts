/**
 * `/v1/agent/self` DebugConfig: the agent's effective configuration under Consul's RuntimeConfig field
 * names (agent/config/runtime.go), sanitized as Consul's `RuntimeConfig.Sanitized` does: secrets (the
 * gossip key, the TLS private key path) read "hidden" when set, durations are Go duration strings.
 * Only settings Causeway has appear; none is invented.
 */
import { formatGoDuration } from "../lib/index.ts";
import { AUTOPILOT_DEFAULTS } from "../model/index.ts";
import type { RuntimeConfig } from "./config.ts";

const NS_PER_MS = 1_000_000;
const goDurationMs = (ms: number) => formatGoDuration(ms * NS_PER_MS);
/** Consul's sanitizer: a set secret becomes "hidden", an empty one stays "". */
const hidden = (secret: string) => (secret === "" ? "" : "hidden");

/** What the agent decided at start that the config alone does not say. */
export interface ActualSettings {
  readonly dataDir: string;
  readonly nodeId: string;
  readonly advertiseAddr: string;
  /** `host:port` of the listeners that are bound (their real ports when configured as 0). */
  readonly addresses: { readonly http?: string; readonly grpc?: string; readonly server?: string };
}

/** The sanitized effective configuration, as plain data. */
export function debugConfig(config: RuntimeConfig, actual: ActualSettings): Record<string, unknown> {
  const { dataDir, nodeId, addresses } = actual;
  const boundPort = (addr: string | undefined, configured: number) => (addr ? Number(addr.slice(addr.lastIndexOf(":") + 1)) : configured);
  const g = config.gossip;
  const t = config.tls;
  const f = config.federation;
  const autopilot = { ...AUTOPILOT_DEFAULTS, ...config.autopilot };
  return {
    Datacenter: config.datacenter,
    PrimaryDatacenter: config.primaryDatacenter || config.datacenter,
    NodeName: config.nodeName,
    NodeID: nodeId,
    NodeMeta: config.nodeMeta,
    DataDir: dataDir,
    DevMode: config.dev,
    ServerMode: config.server,
    Bootstrap: config.dev || config.bootstrapExpect === 1,
    BootstrapExpect: config.bootstrapExpect,
    BindAddr: config.bindAddr,
    AdvertiseAddrLAN: actual.advertiseAddr,
    AdvertiseAddrWAN: g.advertiseAddrWan || actual.advertiseAddr,
    ClientAddrs: [config.clientAddr],
    DNSDomain: config.domain,
    HTTPPort: boundPort(addresses.http, config.ports.http),
    GRPCPort: boundPort(addresses.grpc, config.ports.grpc),
    ServerPort: boundPort(addresses.server, config.ports.server),
    SerfPortLAN: config.ports.serfLan,
    SerfPortWAN: config.ports.serfWan,
    DNSPort: config.ports.dns,
    StartJoinAddrsLAN: g.startJoin,
    RetryJoinLAN: g.retryJoin,
    RetryJoinWAN: g.retryJoinWan,
    RetryJoinIntervalLAN: goDurationMs(g.retryIntervalMs),
    RetryJoinIntervalWAN: goDurationMs(g.retryIntervalWanMs),
    RetryJoinMaxAttemptsLAN: g.retryMax,
    EncryptKey: hidden(g.encrypt),
    CAFile: t.caFile,
    CertFile: t.certFile,
    KeyFile: hidden(t.keyFile),
    VerifyIncoming: t.verifyIncoming,
    VerifyIncomingRPC: t.verifyIncomingRpc,
    VerifyOutgoing: t.verifyOutgoing,
    VerifyServerHostname: t.verifyServerHostname,
    ConnectEnabled: config.connectEnabled,
    ConnectMeshGatewayWANFederationEnabled: f.meshGatewayWanFederation,
    PrimaryGateways: f.primaryGateways,
    PrimaryGatewaysInterval: goDurationMs(f.primaryGatewaysIntervalMs),
    // Consul PR #9637's RuntimeConfig name; the setting is in no Consul release (federation_config.ts).
    DisablePrimaryGatewayFallback: f.disablePrimaryGatewayFallback,
    EnableLocalScriptChecks: config.enableLocalScriptChecks || config.enableScriptChecks,
    EnableRemoteScriptChecks: config.enableScriptChecks,
    AutopilotCleanupDeadServers: autopilot.CleanupDeadServers,
    AutopilotLastContactThreshold: goDurationMs(autopilot.LastContactThresholdMs),
    AutopilotMaxTrailingLogs: autopilot.MaxTrailingLogs,
    AutopilotMinQuorum: autopilot.MinQuorum,
    AutopilotServerStabilizationTime: goDurationMs(autopilot.ServerStabilizationTimeMs),
    AutopilotRedundancyZoneTag: autopilot.RedundancyZoneTag,
    AutopilotDisableUpgradeMigration: autopilot.DisableUpgradeMigration,
    AutopilotUpgradeVersionTag: autopilot.UpgradeVersionTag,
    XDSUpdateRateLimit: config.xds.updateMaxPerSecond,
    ACLsEnabled: config.acl.enabled,
    ACLDefaultPolicy: config.acl.defaultPolicy,
    ACLDownPolicy: config.acl.downPolicy,
    ACLEnableKeyListPolicy: config.acl.enableKeyListPolicy,
    ACLEnableTokenPersistence: config.acl.enableTokenPersistence,
    ACLTokenReplication: config.acl.enableTokenReplication,
    ACLTokenTTL: goDurationMs(config.acl.tokenTtlMs),
    ACLPolicyTTL: goDurationMs(config.acl.policyTtlMs),
    ACLRoleTTL: goDurationMs(config.acl.roleTtlMs),
    ACLMasterToken: hidden(config.acl.tokens.master),
    ACLTokens: {
      ACLAgentMasterToken: hidden(config.acl.tokens.agentMaster),
      ACLAgentToken: hidden(config.acl.tokens.agent),
      ACLDefaultToken: hidden(config.acl.tokens.default),
      ACLReplicationToken: hidden(config.acl.tokens.replication),
    },
    Telemetry: {
      AllowedPrefixes: config.telemetry.prefixFilter.filter((r) => r.startsWith("+")).map((r) => r.slice(1)),
      BlockedPrefixes: config.telemetry.prefixFilter.filter((r) => r.startsWith("-")).map((r) => r.slice(1)),
      DisableHostname: config.telemetry.disableHostname,
      FilterDefault: config.telemetry.filterDefault,
      MetricsPrefix: config.telemetry.metricsPrefix,
      PrometheusRetentionTime: goDurationMs(config.telemetry.prometheusRetentionMs),
    },
    LogLevel: config.logLevel,
    LogJSON: config.logJson,
  };
}
