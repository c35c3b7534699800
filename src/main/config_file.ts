/**
 * Reading config files: Consul's JSON format (snake_case keys, the `ports`, `connect`, `xds`, `acl`,
 * `telemetry`, `autopilot` and `dns_config` blocks, service and check definitions) into a ConfigSource
 * for config.ts to merge. Unknown keys and wrong types are ConfigErrors naming the file and the key,
 * like Consul's "invalid config key".
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { ownEntry, parseDuration } from "../lib/index.ts";
import { definitionsFromConfig } from "../agent/index.ts";
import type { AutopilotSeedSettings, ConfigSource, GossipSettings, Ports, RuntimeConfig, TlsSettings, XdsSettings } from "./config.ts";
import type { FederationSettings } from "./federation_config.ts";
import { parseTelemetryBlock } from "./telemetry_config.ts";
import { isLegacyAclKey, parseAclBlock, parseLegacyAclKey, type AclSource } from "./acl_config.ts";
import { parseDnsConfigBlock, type DnsSettings } from "./dns_config.ts";

export class ConfigError extends Error {}

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


const XDS_FIELDS: Record<string, [keyof XdsSettings, FieldKind]> = {
  update_max_per_second: ["updateMaxPerSecond", "int"],
  proxyless_clients: ["proxylessClients", "stringList"],
};

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
    if (key === "ui_config" || key === "ui" || key === "ui_content_path") {
      const ui: Record<string, unknown> = { ...(out.ui as object | undefined) };
      if (key === "ui") ui.enabled = checkValue(origin, key, "bool", value);
      else if (key === "ui_content_path") ui.contentPath = checkValue(origin, key, "string", value);
      else {
        if (!isObject(value)) throw new ConfigError(`${origin}: "ui_config" must be an object`);
        for (const [uk, uv] of Object.entries(value)) {
          if (uk === "enabled") ui.enabled = checkValue(origin, "ui_config.enabled", "bool", uv);
          else if (uk === "content_path") ui.contentPath = checkValue(origin, "ui_config.content_path", "string", uv);
          else throw new ConfigError(`${origin}: invalid config key ui_config.${uk} (Causeway's UI takes enabled and content_path)`);
        }
      }
      out.ui = ui;
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
        const name = ownEntry(PORT_FIELDS, pk);
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
        const field = ownEntry(XDS_FIELDS, xk);
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
        const field = ownEntry(AUTOPILOT_FIELDS, ak);
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
    const field = ownEntry(FIELDS, key);
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

/** Consul's other config format, which Causeway does not read: refused by name rather than skipped. */
const hclRefusal = (file: string) => `${file}: HCL config files are not supported; write the configuration as JSON (same keys)`;

/**
 * Reads -config-file and -config-dir sources in the order given. An HCL file, named or in a directory, is
 * refused: an agent that skipped it would start without the settings its operator wrote there.
 */
export function readConfigSources(paths: readonly { kind: "file" | "dir"; path: string }[]): ConfigSource[] {
  const sources: ConfigSource[] = [];
  for (const p of paths) {
    const files = p.kind === "file" ? [p.path] : listConfigDir(p.path);
    for (const file of files) {
      if (file.endsWith(".hcl")) throw new ConfigError(hclRefusal(file));
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
  // Subdirectories are skipped, whatever their names, as Consul's loader skips them.
  const isFile = (path: string) => {
    try {
      return statSync(path).isFile();
    } catch {
      return true; // gone or unreadable: reading it says why, naming the file
    }
  };
  return names.filter((n) => n.endsWith(".json") || n.endsWith(".hcl")).sort().map((n) => join(dir, n)).filter(isFile);
}


export function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

