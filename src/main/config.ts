/**
 * Agent configuration: Consul's JSON config-file format (snake_case keys, `ports` block) merged in
 * Consul's order: built-in defaults, then -dev defaults, then config files and directories in the order
 * given (a directory contributes its *.json files in lexical order), then command-line flags.
 *
 * Unknown keys and wrong types are errors naming the file and the key, like Consul's
 * "invalid config key". Nothing here touches the network or the disk beyond reading config files.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { parseDuration } from "../lib/index.ts";
import { definitionsFromConfig, type ConfigDefinitions } from "../agent/index.ts";
import type { AutopilotConfig } from "../model/index.ts";
import { DEFAULT_FEDERATION, federationProblem, type FederationSettings } from "./federation_config.ts";
import { DEFAULT_TELEMETRY, parseTelemetryBlock, type TelemetrySettings } from "./telemetry_config.ts";
import { DEFAULT_ACL, isLegacyAclKey, mergeAcl, parseAclBlock, parseLegacyAclKey, type AclSettings, type AclSource } from "./acl_config.ts";
import { DEFAULT_DNS, parseDnsConfigBlock, recursorProblem, type DnsSettings } from "./dns_config.ts";

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
    : K extends "federation" ? Partial<FederationSettings> : K extends "telemetry" ? Partial<TelemetrySettings> : K extends "acl" ? AclSource : K extends "dns" ? Partial<DnsSettings>
    : RuntimeConfig[K];
};

export class ConfigError extends Error {}

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
};

type FieldKind = "string" | "bool" | "int" | "port" | "stringMap" | "stringList" | "duration";
const FIELDS: Record<string, [keyof RuntimeConfig, FieldKind]> = {
  server: ["server", "bool"],
  datacenter: ["datacenter", "string"],
  primary_datacenter: ["primaryDatacenter", "string"],
  node_name: ["nodeName", "string"],
  node_id: ["nodeId", "string"],
  data_dir: ["dataDir", "string"],
  bind_addr: ["bindAddr", "string"],
  advertise_addr: ["advertiseAddr", "string"],
  client_addr: ["clientAddr", "string"],
  domain: ["domain", "string"],
  bootstrap_expect: ["bootstrapExpect", "int"],
  log_level: ["logLevel", "string"],
  log_json: ["logJson", "bool"],
  node_meta: ["nodeMeta", "stringMap"],
  enable_script_checks: ["enableScriptChecks", "bool"],
  enable_local_script_checks: ["enableLocalScriptChecks", "bool"],
  disable_coordinates: ["disableCoordinates", "bool"],
  sync_coordinate_rate_target: ["syncCoordinateRateTarget", "int"],
  sync_coordinate_interval_min: ["syncCoordinateIntervalMinMs", "duration"],
  coordinate_update_period: ["coordinateUpdatePeriodMs", "duration"],
  coordinate_update_batch_size: ["coordinateUpdateBatchSize", "int"],
  coordinate_update_max_batches: ["coordinateUpdateMaxBatches", "int"],
  raft_snapshot_threshold: ["raftSnapshotThreshold", "int"],
  raft_snapshot_interval: ["raftSnapshotIntervalMs", "duration"],
};
const TLS_FIELDS: Record<string, [keyof TlsSettings, FieldKind]> = {
  ca_file: ["caFile", "string"],
  cert_file: ["certFile", "string"],
  key_file: ["keyFile", "string"],
  verify_incoming: ["verifyIncoming", "bool"],
  verify_incoming_rpc: ["verifyIncomingRpc", "bool"],
  verify_outgoing: ["verifyOutgoing", "bool"],
  verify_server_hostname: ["verifyServerHostname", "bool"],
};

const GOSSIP_FIELDS: Record<string, [keyof GossipSettings, FieldKind]> = {
  start_join: ["startJoin", "stringList"],
  retry_join: ["retryJoin", "stringList"],
  retry_join_wan: ["retryJoinWan", "stringList"],
  retry_interval: ["retryIntervalMs", "duration"],
  retry_interval_wan: ["retryIntervalWanMs", "duration"],
  retry_max: ["retryMax", "int"],
  encrypt: ["encrypt", "string"],
  advertise_addr_wan: ["advertiseAddrWan", "string"],
};

/** Top-level keys of the `federation` settings (`connect.enable_mesh_gateway_wan_federation` is in the connect block). */
const FEDERATION_FIELDS: Record<string, [keyof FederationSettings, FieldKind]> = {
  primary_gateways: ["primaryGateways", "stringList"],
  primary_gateways_interval: ["primaryGatewaysIntervalMs", "duration"],
  disable_primary_gateway_fallback: ["disablePrimaryGatewayFallback", "bool"],
};

/** Top-level keys that land in a settings group of RuntimeConfig rather than at its top. */
const FLAT_GROUPS: readonly (readonly ["gossip" | "tls" | "federation", Record<string, readonly [string, FieldKind]>])[] = [
  ["gossip", GOSSIP_FIELDS],
  ["tls", TLS_FIELDS],
  ["federation", FEDERATION_FIELDS],
];

/** The `xds` block. */
export interface XdsSettings {
  /** `update_max_per_second`: proxy updates the xDS server sends per second in all (Consul's 250; 0 = unlimited). */
  readonly updateMaxPerSecond: number;
  /** `proxyless_clients`: node IDs (besides local service IDs) served as proxyless gRPC clients. */
  readonly proxylessClients: readonly string[];
}

export const DEFAULT_XDS: XdsSettings = { updateMaxPerSecond: 250, proxylessClients: [] };

const XDS_FIELDS: Record<string, [keyof XdsSettings, FieldKind]> = {
  update_max_per_second: ["updateMaxPerSecond", "int"],
  proxyless_clients: ["proxylessClients", "stringList"],
};

/** Settings of the `autopilot` block, as AutopilotConfig names them. */
export type AutopilotSeedSettings = Partial<Omit<AutopilotConfig, "CreateIndex" | "ModifyIndex">>;

const AUTOPILOT_FIELDS: Record<string, [keyof AutopilotSeedSettings, FieldKind]> = {
  cleanup_dead_servers: ["CleanupDeadServers", "bool"],
  last_contact_threshold: ["LastContactThresholdMs", "duration"],
  max_trailing_logs: ["MaxTrailingLogs", "int"],
  min_quorum: ["MinQuorum", "int"],
  server_stabilization_time: ["ServerStabilizationTimeMs", "duration"],
  redundancy_zone_tag: ["RedundancyZoneTag", "string"],
  disable_upgrade_migration: ["DisableUpgradeMigration", "bool"],
  upgrade_version_tag: ["UpgradeVersionTag", "string"],
};

const PORT_FIELDS: Record<string, keyof Ports> = {
  http: "http",
  grpc: "grpc",
  server: "server",
  serf_lan: "serfLan",
  serf_wan: "serfWan",
  dns: "dns",
  sidecar_min_port: "sidecarMin",
  sidecar_max_port: "sidecarMax",
  expose_min_port: "exposeMin",
  expose_max_port: "exposeMax",
};

/** Converts one parsed JSON config document into a ConfigSource. `origin` names the file in errors. */
export function parseConfigJson(origin: string, doc: unknown): ConfigSource {
  if (!isObject(doc)) throw new ConfigError(`${origin}: config must be a JSON object`);
  const out: Record<string, unknown> = {};
  const definitionBlocks: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(doc)) {
    if (key === "connect") {
      if (!isObject(value)) throw new ConfigError(`${origin}: "connect" must be an object`);
      for (const [ck, cv] of Object.entries(value)) {
        if (ck === "enabled") out.connectEnabled = checkValue(origin, "connect.enabled", "bool", cv);
        else if (ck === "enable_mesh_gateway_wan_federation") {
          out.federation = { ...(out.federation as object | undefined), meshGatewayWanFederation: checkValue(origin, `connect.${ck}`, "bool", cv) };
        } else throw new ConfigError(`${origin}: invalid config key connect.${ck}`);
      }
      continue;
    }
    if (DEFINITION_KEYS.has(key)) {
      definitionBlocks[key] = value;
      continue;
    }
    if (key === "ports") {
      if (!isObject(value)) throw new ConfigError(`${origin}: "ports" must be an object`);
      const ports: Record<string, number> = {};
      for (const [pk, pv] of Object.entries(value)) {
        const name = PORT_FIELDS[pk];
        if (!name) throw new ConfigError(`${origin}: invalid config key ports.${pk}`);
        ports[name] = checkValue(origin, `ports.${pk}`, "port", pv) as number;
      }
      out.ports = ports;
      continue;
    }
    if (key === "xds") {
      if (!isObject(value)) throw new ConfigError(`${origin}: "xds" must be an object`);
      const xds: Record<string, unknown> = {};
      for (const [xk, xv] of Object.entries(value)) {
        const field = XDS_FIELDS[xk];
        if (!field) throw new ConfigError(`${origin}: invalid config key xds.${xk}`);
        xds[field[0]] = checkValue(origin, `xds.${xk}`, field[1], xv);
      }
      out.xds = xds;
      continue;
    }
    if (key === "acl" || key === "acl_datacenter" || isLegacyAclKey(key)) {
      let acl: AclSource | string;
      if (key === "acl") acl = isObject(value) ? parseAclBlock(value) : `"acl" must be an object`;
      else if (key === "acl_datacenter") {
        // 1.8: the legacy ACL datacenter is the primary datacenter, and setting it turns ACLs on.
        out.primaryDatacenter = checkValue(origin, key, "string", value);
        acl = { enabled: true };
      } else acl = parseLegacyAclKey(key, value);
      if (typeof acl === "string") throw new ConfigError(`${origin}: ${acl}`);
      const before = out.acl as AclSource | undefined;
      out.acl = { ...before, ...acl, tokens: { ...before?.tokens, ...acl.tokens } };
      continue;
    }
    if (key === "dns_config" || key === "recursors" || key === "alt_domain") {
      let dns: Partial<DnsSettings> | string;
      if (key === "dns_config") dns = isObject(value) ? parseDnsConfigBlock(value) : `"dns_config" must be an object`;
      else if (key === "recursors") dns = { recursors: checkValue(origin, key, "stringList", value) as string[] };
      else dns = { altDomain: checkValue(origin, key, "string", value) as string };
      if (typeof dns === "string") throw new ConfigError(`${origin}: ${dns}`);
      out.dns = { ...(out.dns as object | undefined), ...dns };
      continue;
    }
    if (key === "telemetry") {
      if (!isObject(value)) throw new ConfigError(`${origin}: "telemetry" must be an object`);
      const telemetry = parseTelemetryBlock(value);
      if (typeof telemetry === "string") throw new ConfigError(`${origin}: ${telemetry}`);
      out.telemetry = telemetry;
      continue;
    }
    if (key === "autopilot") {
      if (!isObject(value)) throw new ConfigError(`${origin}: "autopilot" must be an object`);
      const autopilot: Record<string, unknown> = {};
      for (const [ak, av] of Object.entries(value)) {
        const field = AUTOPILOT_FIELDS[ak];
        if (!field) throw new ConfigError(`${origin}: invalid config key autopilot.${ak}`);
        autopilot[field[0]] = checkValue(origin, `autopilot.${ak}`, field[1], av);
      }
      out.autopilot = autopilot;
      continue;
    }
    const group = FLAT_GROUPS.find(([, fields]) => Object.hasOwn(fields, key));
    if (group) {
      const [name, fields] = group;
      const [field, kind] = fields[key]!;
      out[name] = { ...(out[name] as object | undefined), [field]: checkValue(origin, key, kind, value) };
      continue;
    }
    const field = FIELDS[key];
    if (!field) throw new ConfigError(`${origin}: invalid config key ${key}`);
    out[field[0]] = checkValue(origin, key, field[1], value);
  }
  if (Object.keys(definitionBlocks).length) {
    try {
      out.definitions = definitionsFromConfig(definitionBlocks);
    } catch (err) {
      throw new ConfigError(`${origin}: ${(err as Error).message}`);
    }
  }
  return out as ConfigSource;
}

/** Config keys holding service and check definitions (Consul's agent config file blocks). */
const DEFINITION_KEYS: ReadonlySet<string> = new Set(["service", "services", "check", "checks"]);

function checkValue(origin: string, key: string, kind: FieldKind, v: unknown): unknown {
  const bad = (want: string) => new ConfigError(`${origin}: ${key} must be ${want}, got ${JSON.stringify(v)}`);
  switch (kind) {
    case "string":
      if (typeof v !== "string") throw bad("a string");
      return v;
    case "bool":
      if (typeof v !== "boolean") throw bad("true or false");
      return v;
    case "int":
      if (typeof v !== "number" || !Number.isInteger(v) || v < 0) throw bad("a non-negative integer");
      return v;
    case "port":
      if (typeof v !== "number" || !Number.isInteger(v) || v < -1 || v > 65535) throw bad("a port number (0-65535, or -1 to disable)");
      return v;
    case "stringList":
      if (!Array.isArray(v) || !v.every((x) => typeof x === "string")) throw bad("a list of strings");
      return [...v];
    case "duration":
      if (typeof v !== "string") throw bad('a duration such as "30s"');
      try {
        const ms = parseDuration(v);
        if (ms < 0) throw new RangeError("negative");
        return ms;
      } catch {
        throw bad('a duration such as "30s"');
      }
    case "stringMap":
      if (!isObject(v) || !Object.values(v).every((x) => typeof x === "string")) throw bad("an object of strings");
      return { ...(v as Record<string, string>) };
  }
}

/** Reads -config-file and -config-dir sources in the order given. */
export function readConfigSources(paths: readonly { kind: "file" | "dir"; path: string }[]): ConfigSource[] {
  const sources: ConfigSource[] = [];
  for (const p of paths) {
    const files = p.kind === "file" ? [p.path] : listConfigDir(p.path);
    for (const file of files) {
      let text: string;
      try {
        text = readFileSync(file, "utf8");
      } catch (err) {
        throw new ConfigError(`cannot read config file ${file}: ${(err as Error).message}`);
      }
      let doc: unknown;
      try {
        doc = JSON.parse(text);
      } catch (err) {
        throw new ConfigError(`${file}: invalid JSON: ${(err as Error).message}`);
      }
      sources.push(parseConfigJson(file, doc));
    }
  }
  return sources;
}

function listConfigDir(dir: string): string[] {
  let names: string[];
  try {
    if (!statSync(dir).isDirectory()) throw new ConfigError(`-config-dir ${dir} is not a directory`);
    names = readdirSync(dir);
  } catch (err) {
    if (err instanceof ConfigError) throw err;
    throw new ConfigError(`cannot read config directory ${dir}: ${(err as Error).message}`);
  }
  return names.filter((n) => n.endsWith(".json")).sort().map((n) => join(dir, n));
}

/**
 * Merges sources over the base, later sources winning; `ports` merges key by key. An unset
 * `primary_datacenter` becomes the datacenter (Consul's builder). Then validates.
 */
export function buildConfig(base: RuntimeConfig, sources: readonly ConfigSource[]): RuntimeConfig {
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
    cfg = { ...cfg, ...s, dns, ports: { ...cfg.ports, ...s.ports }, tls: { ...cfg.tls, ...s.tls }, autopilot: { ...cfg.autopilot, ...s.autopilot }, xds: { ...cfg.xds, ...s.xds }, telemetry: { ...cfg.telemetry, ...s.telemetry }, acl: mergeAcl(cfg.acl, s.acl), gossip, federation, definitions } as RuntimeConfig;
  }
  if (!cfg.primaryDatacenter) cfg = { ...cfg, primaryDatacenter: cfg.datacenter };
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

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}
