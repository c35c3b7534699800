/**
 * Agent configuration: the runtime config, its defaults, and the merge of sources in Consul's order:
 * built-in defaults, then -dev defaults, then config files and directories in the order given (a
 * directory contributes its *.json files in lexical order; config_file.ts reads them), then
 * command-line flags; then go-sockaddr templates in address settings, evaluated over an injected view
 * of the host; then validation. No I/O here.
 */
import type { ConfigDefinitions } from "../agent/index.ts";
import type { AutopilotConfig } from "../model/index.ts";
import { DEFAULT_FEDERATION, federationProblem, type FederationSettings } from "./federation_config.ts";
import { DEFAULT_TELEMETRY, type TelemetrySettings } from "./telemetry_config.ts";
import { DEFAULT_ACL, mergeAcl, type AclSettings, type AclSource } from "./acl_config.ts";
import { DEFAULT_DNS, recursorProblem, type DnsSettings } from "./dns_config.ts";
import { ConfigError } from "./config_file.ts";
import { resolveAddressSettings, type HostReader } from "./config_addresses.ts";

export { ConfigError, parseConfigJson, readConfigSources } from "./config_file.ts";
export type { HostReader } from "./config_addresses.ts";

export { DEFAULT_FEDERATION, type FederationSettings } from "./federation_config.ts";
export { DEFAULT_TELEMETRY, type TelemetrySettings } from "./telemetry_config.ts";
export { DEFAULT_ACL, type AclSettings } from "./acl_config.ts";
export { DEFAULT_DNS, type DnsSettings } from "./dns_config.ts";

export interface Ports {
  readonly http: number;
  readonly grpc: number;
  readonly server: number;
  readonly serfLan: number;
  readonly serfWan: number;
  readonly dns: number;
  /** `sidecar_min_port` / `sidecar_max_port`: where sidecar_service ports are chosen (inclusive). */
  readonly sidecarMin: number;
  readonly sidecarMax: number;
  /** `expose_min_port` / `expose_max_port`: listener ports for checks exposed through a proxy (inclusive). */
  readonly exposeMin: number;
  readonly exposeMax: number;
}

export interface RuntimeConfig {
  readonly dev: boolean;
  readonly server: boolean;
  readonly datacenter: string;
  /** `primary_datacenter`; buildConfig sets it to `datacenter` when no source does (Consul's builder). */
  readonly primaryDatacenter: string;
  readonly nodeName: string;
  /** Empty: the agent reads or creates `<data_dir>/node-id`. */
  readonly nodeId: string;
  /** Empty only in -dev mode, where the agent makes a temporary directory. */
  readonly dataDir: string;
  readonly bindAddr: string;
  readonly advertiseAddr: string;
  readonly clientAddr: string;
  readonly domain: string;
  readonly bootstrapExpect: number;
  readonly logLevel: string;
  readonly logJson: boolean;
  readonly nodeMeta: Readonly<Record<string, string>>;
  readonly ports: Ports;
  readonly tls: TlsSettings;
  /** The `xds` block (Consul 1.11+'s, plus Causeway's proxyless client identities). */
  readonly xds: XdsSettings;
  /** The `autopilot` block: what a new cluster's leader stores over Consul's defaults (durations in ms). */
  readonly autopilot: AutopilotSeedSettings;
  readonly gossip: GossipSettings;
  /** WAN federation through mesh gateways: `connect.enable_mesh_gateway_wan_federation`, `primary_gateways`... */
  readonly federation: FederationSettings;
  /** The `telemetry` block: metric names, filters and the Prometheus exposition. */
  readonly telemetry: TelemetrySettings;
  /** The `acl` block (and the legacy `acl_*` keys). */
  readonly acl: AclSettings;
  /** The `dns_config` block with the top-level `recursors` and `alt_domain`. */
  readonly dns: DnsSettings;
  /** Services and checks from `service`/`services`/`check`/`checks` blocks, validated, in source order. */
  readonly definitions: ConfigDefinitions;
  /** `connect { enabled }`: servers run the Connect CA (Consul's default is off; -dev turns it on). */
  readonly connectEnabled: boolean;
  /** `ui_config { enabled, content_path }` (and the older top-level `ui`, `ui_content_path`; `-ui`): the web UI, on in -dev. */
  readonly ui: UiSettings;
  /** `enable_script_checks`: script and Docker checks may be registered from config files and the API (default off, also in -dev). */
  readonly enableScriptChecks: boolean;
  /** `enable_local_script_checks`: script and Docker checks from config files only (default off, also in -dev). */
  readonly enableLocalScriptChecks: boolean;
  /** `disable_coordinates`: no network coordinates (gossip acks carry none, /v1/coordinate answers 401). */
  readonly disableCoordinates: boolean;
  /** `sync_coordinate_rate_target`: coordinate updates per second the whole cluster aims at (default 64). */
  readonly syncCoordinateRateTarget: number;
  /** `sync_coordinate_interval_min`: the shortest interval between an agent's coordinate updates, ms (default 15 s). */
  readonly syncCoordinateIntervalMinMs: number;
  /** `coordinate_update_period`: how often a server applies the coordinate updates it received, ms (default 5 s). */
  readonly coordinateUpdatePeriodMs: number;
  /** `coordinate_update_batch_size`: updates per Raft entry (default 128). */
  readonly coordinateUpdateBatchSize: number;
  /** `coordinate_update_max_batches`: entries per period; the rest is discarded (default 5). */
  readonly coordinateUpdateMaxBatches: number;
  /** `raft_snapshot_threshold`: Raft entries applied since the last snapshot before a new one is due (default 16384). */
  readonly raftSnapshotThreshold: number;
  /** `raft_snapshot_interval`: how long a due snapshot waits after the last one, ms (default 120 s; see consensus snapshotIntervalMs). */
  readonly raftSnapshotIntervalMs: number;
}

/** Consul's gossip settings: joining, retrying, encryption, WAN advertise address. */
export interface UiSettings {
  readonly enabled: boolean;
  /** Where the UI is served, "/ui/" by default. */
  readonly contentPath: string;
}

export const DEFAULT_UI: UiSettings = { enabled: false, contentPath: "/ui/" };

export interface GossipSettings {
  /** Joined once at start (`start_join`, `-join`); failure stops the agent. */
  readonly startJoin: readonly string[];
  /** Joined until it succeeds (`retry_join`, `-retry-join`). */
  readonly retryJoin: readonly string[];
  readonly retryJoinWan: readonly string[];
  /** Between join attempts, ms (`retry_interval`, default 30 s). */
  readonly retryIntervalMs: number;
  readonly retryIntervalWanMs: number;
  /** Attempts before giving up; 0 retries forever (`retry_max`). */
  readonly retryMax: number;
  /** Base64 gossip key (`encrypt`); "" disables encryption. */
  readonly encrypt: string;
  readonly advertiseAddrWan: string;
}

export const DEFAULT_GOSSIP: GossipSettings = {
  startJoin: [], retryJoin: [], retryJoinWan: [], retryIntervalMs: 30_000, retryIntervalWanMs: 30_000, retryMax: 0, encrypt: "", advertiseAddrWan: "",
};

/** Consul's agent TLS settings (ca_file, cert_file, key_file and the verify_* switches). */
export interface TlsSettings {
  readonly caFile: string;
  readonly certFile: string;
  readonly keyFile: string;
  /** Require and verify client certificates on every incoming TLS connection (HTTPS and RPC). */
  readonly verifyIncoming: boolean;
  /** Require TLS with verified client certificates on the server port. */
  readonly verifyIncomingRpc: boolean;
  /** Use TLS for outgoing server-port connections. */
  readonly verifyOutgoing: boolean;
  /** Verify that servers present `server.<dc>.<domain>`. */
  readonly verifyServerHostname: boolean;
}

export const NO_TLS: TlsSettings = { caFile: "", certFile: "", keyFile: "", verifyIncoming: false, verifyIncomingRpc: false, verifyOutgoing: false, verifyServerHostname: false };

/** A partial config as read from one source, already in internal names. */
export type ConfigSource = {
  -readonly [K in keyof RuntimeConfig]?: K extends "ports" ? Partial<Ports> : K extends "tls" ? Partial<TlsSettings> : K extends "gossip" ? Partial<GossipSettings> : K extends "xds" ? Partial<XdsSettings>
    : K extends "federation" ? Partial<FederationSettings> : K extends "ui" ? Partial<UiSettings> : K extends "telemetry" ? Partial<TelemetrySettings> : K extends "acl" ? AclSource : K extends "dns" ? Partial<DnsSettings>
    : RuntimeConfig[K];
};


export const DEFAULT_PORTS: Ports = {
  http: 8500, grpc: -1, server: 8300, serfLan: 8301, serfWan: 8302, dns: 8600, sidecarMin: 21000, sidecarMax: 21255, exposeMin: 21500, exposeMax: 21755,
};

export function defaultConfig(hostname: string): RuntimeConfig {
  return {
    dev: false,
    server: false,
    datacenter: "dc1",
    primaryDatacenter: "",
    nodeName: hostname,
    nodeId: "",
    dataDir: "",
    bindAddr: "0.0.0.0",
    advertiseAddr: "",
    clientAddr: "127.0.0.1",
    domain: "consul",
    bootstrapExpect: 0,
    logLevel: "info",
    logJson: false,
    nodeMeta: {},
    ports: DEFAULT_PORTS,
    tls: NO_TLS,
    autopilot: {},
    xds: DEFAULT_XDS,
    gossip: DEFAULT_GOSSIP,
    federation: DEFAULT_FEDERATION,
    telemetry: DEFAULT_TELEMETRY,
    acl: DEFAULT_ACL,
    dns: DEFAULT_DNS,
    disableCoordinates: false,
    syncCoordinateRateTarget: 64,
    syncCoordinateIntervalMinMs: 15_000,
    coordinateUpdatePeriodMs: 5_000,
    raftSnapshotThreshold: 16_384,
    raftSnapshotIntervalMs: 120_000,
    coordinateUpdateBatchSize: 128,
    coordinateUpdateMaxBatches: 5,
    definitions: { services: [], checks: [] },
    connectEnabled: false,
    ui: DEFAULT_UI,
    enableScriptChecks: false,
    enableLocalScriptChecks: false,
  };
}

/**
 * What -dev adds (Consul's DevSource): a single bootstrapped server on loopback with gRPC on 8502.
 * Script checks stay off, as in Consul.
 */
export const DEV_SOURCE: ConfigSource = {
  dev: true,
  server: true,
  bindAddr: "127.0.0.1",
  clientAddr: "127.0.0.1",
  logLevel: "debug",
  ports: { grpc: 8502 },
  connectEnabled: true,
  ui: { enabled: true },
};

/** The `xds` block. */
export interface XdsSettings {
  /** `update_max_per_second`: proxy updates the xDS server sends per second in all (Consul's 250; 0 = unlimited). */
  readonly updateMaxPerSecond: number;
  /** `proxyless_clients`: node IDs (besides local service IDs) served as proxyless gRPC clients. */
  readonly proxylessClients: readonly string[];
}

export const DEFAULT_XDS: XdsSettings = { updateMaxPerSecond: 250, proxylessClients: [] };


/** Settings of the `autopilot` block, as AutopilotConfig names them. */
export type AutopilotSeedSettings = Partial<Omit<AutopilotConfig, "CreateIndex" | "ModifyIndex">>;

/**
 * Merges sources over the base, later sources winning; `ports` merges key by key. An unset
 * `primary_datacenter` becomes the datacenter (Consul's builder). Then evaluates the go-sockaddr
 * templates of the address settings over `readHost` (config_addresses.ts; without it a template is a
 * ConfigError) and validates.
 */
export function buildConfig(base: RuntimeConfig, sources: readonly ConfigSource[], readHost?: HostReader): RuntimeConfig {
  let cfg: RuntimeConfig = base;
  for (const s of sources) {
    // Join lists accumulate across sources, as Consul's slice settings do; everything else is replaced.
    const g = s.gossip ?? {};
    const gossip = {
      ...cfg.gossip,
      ...g,
      startJoin: [...cfg.gossip.startJoin, ...(g.startJoin ?? [])],
      retryJoin: [...cfg.gossip.retryJoin, ...(g.retryJoin ?? [])],
      retryJoinWan: [...cfg.gossip.retryJoinWan, ...(g.retryJoinWan ?? [])],
    };
    // Definitions accumulate too: every file's services and checks are registered.
    const tokensOf = (d: ConfigDefinitions | undefined, kind: "service" | "check") =>
      kind === "service" ? (d?.serviceTokens ?? d?.services.map(() => "") ?? []) : (d?.checkTokens ?? d?.checks.map(() => "") ?? []);
    const definitions: ConfigDefinitions = {
      services: [...cfg.definitions.services, ...(s.definitions?.services ?? [])],
      checks: [...cfg.definitions.checks, ...(s.definitions?.checks ?? [])],
      serviceTokens: [...tokensOf(cfg.definitions, "service"), ...tokensOf(s.definitions, "service")],
      checkTokens: [...tokensOf(cfg.definitions, "check"), ...tokensOf(s.definitions, "check")],
    };
    const f = s.federation ?? {};
    const federation = { ...cfg.federation, ...f, primaryGateways: [...cfg.federation.primaryGateways, ...(f.primaryGateways ?? [])] };
    const dns = { ...cfg.dns, ...s.dns, recursors: [...cfg.dns.recursors, ...(s.dns?.recursors ?? [])] };
    cfg = { ...cfg, ...s, dns, ui: { ...cfg.ui, ...s.ui }, ports: { ...cfg.ports, ...s.ports }, tls: { ...cfg.tls, ...s.tls }, autopilot: { ...cfg.autopilot, ...s.autopilot }, xds: { ...cfg.xds, ...s.xds }, telemetry: { ...cfg.telemetry, ...s.telemetry }, acl: mergeAcl(cfg.acl, s.acl), gossip, federation, definitions } as RuntimeConfig;
  }
  if (!cfg.primaryDatacenter) cfg = { ...cfg, primaryDatacenter: cfg.datacenter };
  cfg = resolveAddressSettings(cfg, readHost);
  validateConfig(cfg);
  return cfg;
}

const DC_PATTERN = /^[a-z0-9_-]+$/;

/** Throws ConfigError naming the setting for the first value or combination that cannot work. */
export function validateConfig(cfg: RuntimeConfig): void {
  if (!DC_PATTERN.test(cfg.datacenter)) throw new ConfigError(`datacenter "${cfg.datacenter}" must be lowercase letters, digits, '-' or '_'`);
  if (cfg.primaryDatacenter && !DC_PATTERN.test(cfg.primaryDatacenter)) throw new ConfigError(`primary_datacenter "${cfg.primaryDatacenter}" must be lowercase letters, digits, '-' or '_'`);
  if (!cfg.nodeName) throw new ConfigError("node_name cannot be empty");
  if (!cfg.dev && !cfg.dataDir) throw new ConfigError("data_dir cannot be empty (set -data-dir or data_dir)");
  if (cfg.nodeId && !/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(cfg.nodeId)) throw new ConfigError(`node_id "${cfg.nodeId}" must be a UUID`);
  if (!/^[a-zA-Z0-9.-]+$/.test(cfg.domain)) throw new ConfigError(`domain "${cfg.domain}" is not a valid DNS domain`);
  if (cfg.dns.altDomain && !/^[a-zA-Z0-9.-]+$/.test(cfg.dns.altDomain)) throw new ConfigError(`alt_domain "${cfg.dns.altDomain}" is not a valid DNS domain`);
  if (/^(service|connect|node|query|addr|ingress)\./i.test(cfg.dns.altDomain) || cfg.dns.altDomain.toLowerCase().startsWith(`${cfg.datacenter}.`)) {
    throw new ConfigError(`alt_domain "${cfg.dns.altDomain}" cannot start with a DNS query keyword or the datacenter`);
  }
  for (const r of cfg.dns.recursors) {
    const problem = recursorProblem(r);
    if (problem) throw new ConfigError(problem);
  }
  if (!/^\/?[A-Za-z0-9._~!$&'()*+,;=:@%/-]*$/.test(cfg.ui.contentPath)) throw new ConfigError(`ui_config.content_path "${cfg.ui.contentPath}" is not a URL path`);
  if (cfg.bootstrapExpect > 0 && !cfg.server) throw new ConfigError("bootstrap_expect requires server mode");
  const p = cfg.ports;
  if (p.sidecarMin > p.sidecarMax) throw new ConfigError(`ports.sidecar_min_port ${p.sidecarMin} must not exceed ports.sidecar_max_port ${p.sidecarMax}`);
  if (p.exposeMin > p.exposeMax) throw new ConfigError(`ports.expose_min_port ${p.exposeMin} must not exceed ports.expose_max_port ${p.exposeMax}`);
  const t = cfg.tls;
  if ((t.certFile === "") !== (t.keyFile === "")) throw new ConfigError("cert_file and key_file must be set together");
  if ((t.verifyIncoming || t.verifyIncomingRpc || t.verifyOutgoing) && !t.caFile) {
    throw new ConfigError("verify_incoming, verify_incoming_rpc and verify_outgoing require ca_file");
  }
  if ((t.verifyIncoming || t.verifyIncomingRpc) && !t.certFile) throw new ConfigError("verify_incoming and verify_incoming_rpc require cert_file and key_file");
  for (const [k, v] of Object.entries(cfg.ports)) {
    if (!Number.isInteger(v) || v < -1 || v > 65535) throw new ConfigError(`ports.${k} ${v} is not a port number`);
  }
  const federation = federationProblem(cfg);
  if (federation) throw new ConfigError(federation);
}
