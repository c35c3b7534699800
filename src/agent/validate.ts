/**
 * Validation rules with Consul's wording (agent/structs: ValidateWeights, validateMetadata,
 * CheckType.Validate, NodeService.Validate; agent/agent_endpoint.go AgentRegisterService).
 * Each function returns an error message, or undefined when the value is valid.
 */
import type { ConnectProxyConfig, ServiceKind, Weights } from "../model/index.ts";
import { parseIp } from "../lib/index.ts";
import type { CheckType, ServiceRegistration } from "./types.ts";

const META_MAX_PAIRS = 64;
const META_KEY_MAX = 128;
const META_VALUE_MAX = 512;
/**
 * Causeway's limits on what the catalog indexes or matches (Consul has none): names and IDs of
 * services and checks, tags, checks per registration. The same numbers as src/http/field_limits.ts.
 */
export const NAME_MAX_BYTES = 512;
export const TAG_MAX_BYTES = 512;
export const TAGS_MAX = 256;
export const CHECKS_MAX = 64;
/** A datacenter name as an upstream may give one (a DNS label; src/http/datacenter.ts checks ?dc= the same way). */
const DATACENTER_NAME = /^[A-Za-z0-9_-]{1,63}$/;
const META_RESERVED_PREFIX = "consul-";
/** Reserved keys a mesh gateway may set (structs.MetaWANFederationKey). */
const MESH_GATEWAY_META_KEYS: ReadonlySet<string> = new Set(["consul-wan-federation"]);

/** structs.ValidateWeights. */
export function validateWeights(w: Weights): string | undefined {
  if (w.Passing < 1) return "Passing must be greater than 0";
  if (w.Warning < 0) return "Warning must be greater or equal than 0";
  if (w.Passing > 65535 || w.Warning > 65535) return "DNS Weight must be between 0 and 65535";
  return undefined;
}

/** structs.ValidateServiceMetadata (allowConsulPrefix=false; mesh gateways may use consul-wan-federation). */
export function validateServiceMeta(kind: ServiceKind, meta: Readonly<Record<string, string>> | null): string | undefined {
  return validateMeta(meta, kind === "mesh-gateway" ? MESH_GATEWAY_META_KEYS : new Set());
}

/** structs.ValidateNodeMetadata with allowConsulPrefix=false (node_meta of the agent config). */
export function validateNodeMeta(meta: Readonly<Record<string, string>> | null): string | undefined {
  return validateMeta(meta, new Set());
}

function validateMeta(meta: Readonly<Record<string, string>> | null, allowed: ReadonlySet<string>): string | undefined {
  if (!meta) return undefined;
  const keys = Object.keys(meta);
  // Consul says "Node metadata" here for services too.
  if (keys.length > META_MAX_PAIRS) return `Node metadata cannot contain more than ${META_MAX_PAIRS} key/value pairs`;
  for (const key of keys.sort()) {
    const value = meta[key]!;
    const err = metaPairError(key, value, allowed);
    if (err) return `Couldn't load metadata pair ('${shown(key)}', '${shown(value)}'): ${err}`;
  }
  return undefined;
}

/** A value as an error message may quote it: cut short past the longest valid metadata value. */
function shown(s: string): string {
  return s.length > META_VALUE_MAX ? `${s.slice(0, 32)}...` : s;
}

/** UTF-8 length in bytes (Go's len()). */
function byteLength(s: string): number {
  return s.length * 3 <= META_VALUE_MAX ? s.length : new TextEncoder().encode(s).length;
}

function metaPairError(key: string, value: string, allowed: ReadonlySet<string>): string | undefined {
  if (key === "") return "Key cannot be blank";
  if (!/^[a-zA-Z0-9_-]+$/.test(key)) return "Key contains invalid characters";
  if (key.length > META_KEY_MAX) return `Key is too long (limit: ${META_KEY_MAX} characters)`;
  if (key.startsWith(META_RESERVED_PREFIX) && !allowed.has(key)) return `Key prefix '${META_RESERVED_PREFIX}' is reserved for internal use`;
  if (byteLength(value) > META_VALUE_MAX) return `Value is too long (limit: ${META_VALUE_MAX} characters)`;
  return undefined;
}

/** "<what> is too long (limit: N bytes)" when `value` has more UTF-8 bytes than `limit`. */
function lengthError(what: string, value: string, limit: number): string | undefined {
  return value.length > limit / 3 && new TextEncoder().encode(value).length > limit ? `${what} is too long (limit: ${limit} bytes)` : undefined;
}

/** The first of Causeway's size limits a check breaks (its ID, name, service ID), or undefined. */
export function checkSizeError(c: { readonly CheckID: string; readonly Name: string; readonly ServiceID?: string }): string | undefined {
  return lengthError("Check ID", c.CheckID, NAME_MAX_BYTES) ?? lengthError("Check name", c.Name, NAME_MAX_BYTES) ??
    lengthError("Check service ID", c.ServiceID ?? "", NAME_MAX_BYTES);
}

/** The first of Causeway's size limits a service registration breaks (name, ID, tags, checks), or undefined. */
export function serviceSizeError(reg: ServiceRegistration): string | undefined {
  const tags = reg.Tags ?? [];
  if (tags.length > TAGS_MAX) return `Service has too many tags (limit: ${TAGS_MAX})`;
  if (reg.Checks.length > CHECKS_MAX) return `Service has too many checks (limit: ${CHECKS_MAX})`;
  return lengthError("Service name", reg.Name, NAME_MAX_BYTES) ?? lengthError("Service ID", reg.ID, NAME_MAX_BYTES) ??
    tags.map((t) => lengthError("Service tag", t, TAG_MAX_BYTES)).find((e) => e !== undefined) ??
    reg.Checks.map((c) => checkSizeError(c)).find((e) => e !== undefined);
}

/** structs.ValidStatus. */
export function isValidStatus(s: string): boolean {
  return s === "passing" || s === "warning" || s === "critical";
}

/** ipaddr.IsAny: the unspecified address, which cannot be a service address. */
export function isAnyAddress(addr: string): boolean {
  return addr === "0.0.0.0" || addr === "::" || addr === "[::]";
}

/** Agent.validateService's checks of the lan_ipv4/lan_ipv6/wan_ipv4/wan_ipv6 tagged addresses. */
export function validateTaggedAddresses(tagged: ServiceRegistration["TaggedAddresses"]): string | undefined {
  if (!tagged) return undefined;
  for (const [key, family] of [["lan_ipv4", 4], ["lan_ipv6", 16], ["wan_ipv4", 4], ["wan_ipv6", 16]] as const) {
    const sa = tagged[key];
    if (!sa) continue;
    let len = 0;
    try {
      len = parseIp(sa.Address).length;
    } catch { /* not an IP */ }
    if (len !== family) return `Service tagged address ${JSON.stringify(key)} must be a valid ${family === 4 ? "ipv4" : "ipv6"} address`;
  }
  return undefined;
}

/** structs.CheckType.IsScript: the check runs a command (Args/ScriptArgs), locally or in a container. */
export function isScriptCheck(c: CheckType): boolean {
  return (c.ScriptArgs?.length ?? 0) > 0;
}

/** structs.CheckType.IsAlias. */
export function isAliasCheck(c: CheckType): boolean {
  return !!c.AliasNode || !!c.AliasService;
}

/** structs.CheckType.IsDocker (without the interval, which validation requires anyway). */
export function isDockerCheck(c: CheckType): boolean {
  return isScriptCheck(c) && !!c.DockerContainerID;
}

/** structs.CheckType.Validate (Consul 1.8 order and wording). */
export function validateCheckType(c: CheckType): string | undefined {
  const intervalCheck = isScriptCheck(c) || c.HTTP !== "" || c.TCP !== "" || !!c.GRPC;
  if (c.IntervalMs > 0 && c.TTLMs > 0) return "Interval and TTL cannot both be specified";
  if (intervalCheck && c.IntervalMs <= 0) return "Interval must be > 0 for Script, HTTP, or TCP checks";
  if (intervalCheck && isAliasCheck(c)) return "Interval cannot be set for Alias checks";
  if (isAliasCheck(c) && c.TTLMs > 0) return "TTL must be not be set for Alias checks";
  if (!intervalCheck && !isAliasCheck(c) && c.TTLMs <= 0) return "TTL must be > 0 for TTL checks";
  if (c.OutputMaxSize < 0) return "MaxOutputMaxSize must be positive";
  return undefined;
}

/** The check's kind as Consul's CheckType.Type() names it (gRPC first, script last). */
export function checkTypeName(c: CheckType): string {
  if (c.GRPC && c.IntervalMs > 0) return "grpc";
  if (c.HTTP !== "" && c.IntervalMs > 0) return "http";
  if (c.TTLMs > 0) return "ttl";
  if (c.TCP !== "" && c.IntervalMs > 0) return "tcp";
  if (isAliasCheck(c)) return "alias";
  if (isDockerCheck(c) && c.IntervalMs > 0) return "docker";
  if (isScriptCheck(c) && c.IntervalMs > 0) return "script";
  return "";
}

/** structs.NodeService.Validate: connect proxy, gateway and nested sidecar rules. All errors, in Consul's order. */
export function nodeServiceErrors(reg: ServiceRegistration): string[] {
  const errors: string[] = [];
  const proxy: Partial<ConnectProxyConfig> = reg.Proxy ?? {};
  const native = reg.Connect?.Native ?? false;
  if (reg.Kind === "connect-proxy") {
    if ((proxy.DestinationServiceName ?? "").trim() === "") {
      errors.push("Proxy.DestinationServiceName must be non-empty for Connect proxy services");
    }
    if (reg.Port === 0) errors.push("Port must be set for a Connect proxy");
    if (native) errors.push("A Proxy cannot also be Connect Native, only typical services");
    const keys = new Set<string>();
    const binds = new Set<string>();
    for (const u of proxy.Upstreams ?? []) {
      if (u.DestinationName === "") {
        errors.push("upstream destination name cannot be empty");
        continue;
      }
      if (u.Datacenter && !DATACENTER_NAME.test(u.Datacenter)) {
        errors.push(`Invalid upstream datacenter name ${JSON.stringify(shown(u.Datacenter))}: a datacenter name is up to 63 letters, digits, '-' and '_'`);
        continue;
      }
      if (u.LocalBindPort === 0) {
        errors.push("upstream local bind port cannot be zero");
        continue;
      }
      const key = `[type=${JSON.stringify(u.DestinationType ?? "service")}, name=${JSON.stringify(u.DestinationName)}, ` +
        `namespace=${JSON.stringify(u.DestinationNamespace ?? "")}, datacenter=${JSON.stringify(u.Datacenter ?? "")}]`;
      if (keys.has(key)) {
        errors.push(`upstreams cannot contain duplicates of ${key}`);
        continue;
      }
      keys.add(key);
      const host = u.LocalBindAddress || "127.0.0.1";
      const bind = host.includes(":") ? `[${host}]:${u.LocalBindPort}` : `${host}:${u.LocalBindPort}`;
      if (binds.has(bind)) {
        errors.push(`upstreams cannot contain duplicates by local bind address and port; ${JSON.stringify(bind)} is specified twice`);
        continue;
      }
      binds.add(bind);
    }
    const listeners = new Set<number>();
    for (const p of proxy.Expose?.Paths ?? []) {
      const port = p.ListenerPort ?? 0;
      if (!p.Path) errors.push("expose.paths: empty path exposed");
      if (listeners.has(port)) errors.push("expose.paths: duplicate listener ports exposed");
      listeners.add(port);
      if (port <= 0 || port > 65535) errors.push(`expose.paths: invalid listener port: ${port}`);
      const protocol = (p.Protocol ?? "").toLowerCase();
      if (protocol !== "" && protocol !== "http" && protocol !== "http2") {
        errors.push(`protocol '${protocol}' not supported for path: ${p.Path ?? ""}, must be in: [http http2]`);
      }
    }
  }
  if (reg.Kind === "mesh-gateway" || reg.Kind === "terminating-gateway" || reg.Kind === "ingress-gateway") {
    if (reg.Port === 0 && reg.Kind !== "ingress-gateway") errors.push(`Port must be non-zero for a ${reg.Kind}`);
    if (reg.Connect?.SidecarService) errors.push(`A ${reg.Kind} cannot have a sidecar service defined`);
    if (proxy.DestinationServiceName) errors.push(`The Proxy.DestinationServiceName configuration is invalid for a ${reg.Kind}`);
    if (proxy.DestinationServiceID) errors.push(`The Proxy.DestinationServiceID configuration is invalid for a ${reg.Kind}`);
    if (proxy.LocalServiceAddress) errors.push(`The Proxy.LocalServiceAddress configuration is invalid for a ${reg.Kind}`);
    if (proxy.LocalServicePort) errors.push(`The Proxy.LocalServicePort configuration is invalid for a ${reg.Kind}`);
    if ((proxy.Upstreams ?? []).length) errors.push(`The Proxy.Upstreams configuration is invalid for a ${reg.Kind}`);
  }
  const sidecar = reg.Connect?.SidecarService;
  if (sidecar) {
    if (sidecar.ID !== "") errors.push("A SidecarService cannot specify an ID as this is managed by the agent");
    if (sidecar.Connect?.SidecarService) errors.push("A SidecarService cannot have a nested SidecarService");
  }
  return errors;
}

/** The ports a service registration names, in the shape both the agent and the catalog decode. */
export interface ServicePorts {
  readonly Port?: number;
  readonly TaggedAddresses?: Readonly<Record<string, { readonly Port?: number } | null | undefined>> | null;
  readonly Proxy?: {
    readonly LocalServicePort?: number;
    readonly Upstreams?: readonly { readonly LocalBindPort?: number }[] | null;
    readonly Expose?: { readonly Paths?: readonly { readonly ListenerPort?: number; readonly LocalPathPort?: number }[] | null } | null;
  } | null;
}

/**
 * The first port of a service that is not a TCP port (0-65535), or undefined. Go decodes them into
 * `int` and stores anything; a port past 65535 can never be dialled, so it is refused here.
 */
export function portRangeError(s: ServicePorts, what = "Service"): string | undefined {
  const ports: [string, number | undefined][] = [
    [`${what}.Port`, s.Port],
    ...Object.entries(s.TaggedAddresses ?? {}).map(([k, v]) => [`${what}.TaggedAddresses[${k}].Port`, v?.Port] as [string, number | undefined]),
    [`${what}.Proxy.LocalServicePort`, s.Proxy?.LocalServicePort],
    ...(s.Proxy?.Upstreams ?? []).map((u, i) => [`${what}.Proxy.Upstreams[${i}].LocalBindPort`, u.LocalBindPort] as [string, number | undefined]),
    ...(s.Proxy?.Expose?.Paths ?? []).flatMap((p, i) => [
      [`${what}.Proxy.Expose.Paths[${i}].ListenerPort`, p.ListenerPort],
      [`${what}.Proxy.Expose.Paths[${i}].LocalPathPort`, p.LocalPathPort],
    ] as [string, number | undefined][]),
  ];
  const bad = ports.find(([, p]) => p !== undefined && (p < 0 || p > 65535));
  return bad ? `Invalid port ${bad[1]} in ${bad[0]}: must be between 0 and 65535` : undefined;
}
