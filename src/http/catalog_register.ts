/**
 * Turns decoded `/v1/catalog/register` and `/deregister` bodies into the state store's requests, with
 * the checks Consul makes before proposing them (agent/consul/catalog_endpoint.go nodePreApply,
 * servicePreApply, checkPreApply; agent/structs NodeService.Validate and Upstream.Validate, v1.8) and
 * the defaults Consul fills in. Every refusal throws BadRequestError with Consul's message: Consul
 * answers these with 500, Causeway with 400 because the request is at fault. On top of Consul's checks:
 * the size limits of field_limits.ts, and a Datacenter that must be a datacenter name.
 */
import { portRangeError } from "../agent/index.ts";
import type {
  ConnectProxyConfig, DeregisterRequest, ExposePath, HealthCheck, HealthCheckDefinition, HealthStatus, NodeService,
  RegisterRequest, ServiceAddress, ServiceKind, Unindexed, Upstream,
} from "../model/index.ts";
import { formatGoDuration, multiErrorText, uuidError, type JsonValue } from "../lib/index.ts";
import type { RawCheck, RawDeregister, RawProxy, RawRegister, RawService } from "./catalog_schema.ts";
import { BadRequestError } from "./query_options.ts";
import { datacenterNameError } from "./datacenter.ts";
import { FIELD_LIMITS, metaSizeError, tagsError, tooLong } from "./field_limits.ts";

const KINDS: readonly string[] = ["", "connect-proxy", "mesh-gateway", "terminating-gateway", "ingress-gateway"];
const GATEWAYS: readonly string[] = ["mesh-gateway", "terminating-gateway", "ingress-gateway"];
const MODES: readonly string[] = ["", "none", "local", "remote"];
const STATUSES: readonly string[] = ["passing", "warning", "critical"];
const DEFAULT_WEIGHTS = { Passing: 1, Warning: 1 } as const;
const q = (s: string) => JSON.stringify(s);

function fail(message: string): never {
  throw new BadRequestError(message);
}

/** Consul's ipaddr.IsAny: an unspecified IP address ("0.0.0.0", "::", "[::]", "::ffff:0.0.0.0"). */
function isAnyAddress(addr: string): boolean {
  const a = addr.replace(/^\[(.*)\]$/, "$1");
  if (/^(::ffff:)?0{1,3}(\.0{1,3}){3}$/i.test(a)) return true;
  const halves = a.split("::");
  if (!a.includes(":") || halves.length > 2) return false;
  const groups = halves.flatMap((h) => (h === "" ? [] : h.split(":")));
  if (!groups.every((g) => /^0{1,4}$/.test(g))) return false;
  return halves.length === 2 ? groups.length < 8 : groups.length === 8;
}

/** A value of a decoded JSON object by case-insensitive key (for the opaque SidecarService). */
function field(v: JsonValue | undefined, name: string): JsonValue | undefined {
  if (typeof v !== "object" || v === null || Array.isArray(v)) return undefined;
  const key = Object.keys(v).find((k) => k === name) ?? Object.keys(v).find((k) => k.toLowerCase() === name.toLowerCase());
  return key === undefined ? undefined : v[key];
}

const hostPort = (host: string, port: number) => (host.includes(":") ? `[${host}]:${port}` : `${host}:${port}`);

/** A request's Datacenter: empty (this one) or a datacenter name. */
const datacenterError = (dc: string | undefined) => (dc ? datacenterNameError(dc) : undefined);
const badUpstreamDc = (dc: string | undefined) => (dc ? datacenterNameError(dc, "upstream datacenter") : undefined);

/** NodeService.Validate (connect-proxy and gateway rules, nested sidecar) as a list of messages. */
function serviceProblems(s: RawService): string[] {
  const out: string[] = [];
  const kind = s.Kind ?? "";
  const p: RawProxy = s.Proxy ?? {};
  if (kind === "connect-proxy") {
    if ((p.DestinationServiceName ?? "").trim() === "") out.push("Proxy.DestinationServiceName must be non-empty for Connect proxy services");
    if (!s.Port) out.push("Port must be set for a Connect proxy");
    if (s.Connect?.Native) out.push("A Proxy cannot also be Connect Native, only typical services");
    const keys = new Set<string>();
    const binds = new Set<string>();
    for (const u of p.Upstreams ?? []) {
      const type = u.DestinationType ?? "";
      if (type !== "" && type !== "service" && type !== "prepared_query") out.push(`unknown upstream destination type: ${q(type)}`);
      else if (!u.DestinationName) out.push("upstream destination name cannot be empty");
      else if (!u.LocalBindPort) out.push("upstream local bind port cannot be zero");
      else if (badUpstreamDc(u.Datacenter)) out.push(badUpstreamDc(u.Datacenter)!);
      else {
        const key = `[type=${q(type)}, name=${q(u.DestinationName)}, namespace=${q(u.DestinationNamespace ?? "")}, datacenter=${q(u.Datacenter ?? "")}]`;
        const bind = hostPort(u.LocalBindAddress || "127.0.0.1", u.LocalBindPort);
        if (keys.has(key)) out.push(`upstreams cannot contain duplicates of ${key}`);
        else if (binds.has(bind)) out.push(`upstreams cannot contain duplicates by local bind address and port; ${q(bind)} is specified twice`);
        else {
          keys.add(key);
          binds.add(bind);
        }
      }
    }
    const paths = new Set<string>();
    const ports = new Set<number>();
    for (const e of p.Expose?.Paths ?? []) {
      const path = e.Path ?? "", port = e.ListenerPort ?? 0, protocol = (e.Protocol ?? "").toLowerCase();
      if (path === "") out.push("expose.paths: empty path exposed");
      if (paths.has(path)) out.push("expose.paths: duplicate paths exposed");
      if (ports.has(port)) out.push("expose.paths: duplicate listener ports exposed");
      if (port <= 0 || port > 65535) out.push(`expose.paths: invalid listener port: ${port}`);
      if (protocol !== "" && protocol !== "http" && protocol !== "http2") {
        out.push(`protocol '${protocol}' not supported for path: ${path}, must be in: [http http2]`);
      }
      paths.add(path);
      ports.add(port);
    }
  }
  const sidecar = s.Connect?.SidecarService;
  const hasSidecar = sidecar !== undefined && sidecar !== null;
  if (GATEWAYS.includes(kind)) {
    if (!s.Port && kind !== "ingress-gateway") out.push(`Port must be non-zero for a ${kind}`);
    if (hasSidecar) out.push(`A ${kind} cannot have a sidecar service defined`);
    if (p.DestinationServiceName) out.push(`The Proxy.DestinationServiceName configuration is invalid for a ${kind}`);
    if (p.DestinationServiceID) out.push(`The Proxy.DestinationServiceID configuration is invalid for a ${kind}`);
    if (p.LocalServiceAddress) out.push(`The Proxy.LocalServiceAddress configuration is invalid for a ${kind}`);
    if (p.LocalServicePort) out.push(`The Proxy.LocalServicePort configuration is invalid for a ${kind}`);
    if ((p.Upstreams ?? []).length !== 0) out.push(`The Proxy.Upstreams configuration is invalid for a ${kind}`);
  }
  if (hasSidecar) {
    const id = field(sidecar, "ID");
    if (typeof id === "string" && id !== "") out.push("A SidecarService cannot specify an ID as this is managed by the agent");
    const nested = field(field(sidecar, "Connect"), "SidecarService");
    if (nested !== undefined && nested !== null) out.push("A SidecarService cannot have a nested SidecarService");
  }
  return out;
}

function proxyOf(p: RawProxy): ConnectProxyConfig {
  const mode = (m: string | undefined) => {
    if (!MODES.includes(m ?? "")) fail(`Invalid Mesh Gateway Mode: ${q(m!)}`);
    return m ? { Mode: m as "none" } : {};
  };
  const upstreams = (p.Upstreams ?? []).map((u): Upstream => ({
    ...(u.DestinationType ? { DestinationType: u.DestinationType as "service" } : {}),
    ...(u.DestinationNamespace ? { DestinationNamespace: u.DestinationNamespace } : {}),
    DestinationName: u.DestinationName ?? "",
    ...(u.Datacenter ? { Datacenter: u.Datacenter } : {}),
    ...(u.LocalBindAddress ? { LocalBindAddress: u.LocalBindAddress } : {}),
    LocalBindPort: u.LocalBindPort ?? 0,
    ...(u.Config && Object.keys(u.Config).length ? { Config: u.Config } : {}),
    MeshGateway: mode(u.MeshGateway?.Mode),
  }));
  const paths = (p.Expose?.Paths ?? []).map((e): ExposePath => ({
    ...(e.ListenerPort ? { ListenerPort: e.ListenerPort } : {}),
    ...(e.Path ? { Path: e.Path } : {}),
    ...(e.LocalPathPort ? { LocalPathPort: e.LocalPathPort } : {}),
    ...(e.Protocol ? { Protocol: e.Protocol } : {}),
    ParsedFromCheck: e.ParsedFromCheck ?? false,
  }));
  return {
    ...(p.DestinationServiceName ? { DestinationServiceName: p.DestinationServiceName } : {}),
    ...(p.DestinationServiceID ? { DestinationServiceID: p.DestinationServiceID } : {}),
    ...(p.LocalServiceAddress ? { LocalServiceAddress: p.LocalServiceAddress } : {}),
    ...(p.LocalServicePort ? { LocalServicePort: p.LocalServicePort } : {}),
    ...(p.Config && Object.keys(p.Config).length ? { Config: p.Config } : {}),
    ...(upstreams.length ? { Upstreams: upstreams } : {}),
    MeshGateway: mode(p.MeshGateway?.Mode),
    Expose: { ...(p.Expose?.Checks ? { Checks: true } : {}), ...(paths.length ? { Paths: paths } : {}) },
  };
}

/** The first size limit a service breaks, or undefined. */
function serviceSizeError(s: RawService): string | undefined {
  return tooLong("Service name", s.Service) ?? tooLong("Service ID", s.ID) ?? tagsError("Service", s.Tags) ?? metaSizeError("Service meta", s.Meta);
}

/** servicePreApply: Validate, ID defaults to the name, a name is required, no unspecified address. */
export function serviceOf(s: RawService): Unindexed<NodeService> {
  const kind = s.Kind ?? "";
  if (!KINDS.includes(kind)) fail(`Invalid service kind: ${q(kind)}`);
  const size = serviceSizeError(s) ?? portRangeError(s);
  if (size) fail(size);
  const problems = serviceProblems(s);
  if (problems.length) fail(multiErrorText(problems));
  const name = s.Service ?? "";
  const id = s.ID || name;
  if (id !== "" && name === "") fail("Must provide service name with ID");
  if (name === "") fail("Must provide service name");
  const address = s.Address ?? "";
  if (isAnyAddress(address)) fail("Invalid service address");
  const w = s.Weights;
  const weights = w && (w.Passing ?? 0) >= 1 && (w.Warning ?? 0) >= 0 ? { Passing: w.Passing!, Warning: w.Warning ?? 0 } : DEFAULT_WEIGHTS;
  const tagged: Record<string, ServiceAddress> = {};
  for (const [k, v] of Object.entries(s.TaggedAddresses ?? {})) tagged[k] = { Address: v?.Address ?? "", Port: v?.Port ?? 0 };
  return {
    ...(kind ? { Kind: kind as ServiceKind } : {}),
    ID: id,
    Service: name,
    Tags: s.Tags ?? null,
    Address: address,
    ...(Object.keys(tagged).length ? { TaggedAddresses: tagged } : {}),
    Meta: s.Meta ?? null,
    Port: s.Port ?? 0,
    Weights: weights,
    EnableTagOverride: s.EnableTagOverride ?? false,
    Proxy: proxyOf(s.Proxy ?? {}),
    Connect: s.Connect?.Native ? { Native: true } : {},
  };
}

/** A check's Definition in the order Consul's MarshalJSON writes it, empty fields left out. */
function definitionOf(d: RawCheck["Definition"] = {}): HealthCheckDefinition {
  const dur = (ns: number | undefined) => (ns ? formatGoDuration(ns) : undefined);
  const header = d.Header ? Object.fromEntries(Object.entries(d.Header).map(([k, v]) => [k, v ?? []])) : undefined;
  const all: Record<string, unknown> = {
    Interval: dur(d.Interval), Timeout: dur(d.Timeout), DeregisterCriticalServiceAfter: dur(d.DeregisterCriticalServiceAfter),
    HTTP: d.HTTP || undefined, TLSSkipVerify: d.TLSSkipVerify || undefined,
    Header: header && Object.keys(header).length ? header : undefined, Method: d.Method || undefined,
    Body: d.Body || undefined, TCP: d.TCP || undefined,
  };
  return Object.fromEntries(Object.entries(all).filter(([, v]) => v !== undefined)) as HealthCheckDefinition;
}

/** checkPreApply plus the state store's defaults: Node from the request, CheckID from Name, Status critical. */
export function checkOf(c: RawCheck, node: string): Unindexed<HealthCheck> {
  const status = c.Status || "critical";
  if (!STATUSES.includes(status)) fail(`Invalid check status ${q(status)}: must be one of passing, warning, critical`);
  const checkId = c.CheckID || c.Name || "";
  if (checkId === "") fail("Must provide a check ID or name");
  const size = tooLong("Check ID", c.CheckID) ?? tooLong("Check name", c.Name) ?? tooLong("Check node", c.Node) ??
    tooLong("Check service ID", c.ServiceID) ?? tooLong("Check service name", c.ServiceName) ?? tagsError("Check service", c.ServiceTags);
  if (size) fail(size);
  return {
    Node: c.Node || node,
    CheckID: checkId,
    Name: c.Name ?? "",
    Status: status as HealthStatus,
    Notes: c.Notes ?? "",
    Output: c.Output ?? "",
    ServiceID: c.ServiceID ?? "",
    ServiceName: c.ServiceName ?? "",
    ServiceTags: c.ServiceTags ?? null,
    Type: c.Type ?? "",
    Definition: definitionOf(c.Definition),
  };
}

/**
 * A registration as Consul's Catalog.Register accepts it. `Datacenter` defaults to the agent's; the old
 * single `Check` joins the end of `Checks`, as Consul moves it.
 */
export function registerRequestOf(r: RawRegister, agentDatacenter: string): RegisterRequest {
  const node = r.Node ?? "";
  if (node === "") fail("Must provide node");
  const size = tooLong("Node name", node) ?? datacenterError(r.Datacenter) ?? metaSizeError("Node meta", r.NodeMeta);
  if (size) fail(size);
  const id = r.ID ?? "";
  const bad = id === "" ? undefined : uuidError(id);
  if (bad) fail(`Bad node ID: ${bad}`);
  if (!r.Address && !r.SkipNodeUpdate) fail("Must provide address if SkipNodeUpdate is not set");
  const service = r.Service ? serviceOf(r.Service) : undefined;
  const rawChecks = [...(r.Checks ?? []), ...(r.Check ? [r.Check] : [])];
  if (rawChecks.length > FIELD_LIMITS.checks) fail(`Too many checks in one registration (limit: ${FIELD_LIMITS.checks})`);
  const checks = rawChecks.map((c) => checkOf(c ?? {}, node));
  return {
    Datacenter: r.Datacenter || agentDatacenter,
    ID: id,
    Node: node,
    Address: r.Address ?? "",
    ...(r.TaggedAddresses ? { TaggedAddresses: r.TaggedAddresses } : {}),
    ...(r.NodeMeta ? { NodeMeta: r.NodeMeta } : {}),
    ...(service ? { Service: service } : {}),
    ...(checks.length ? { Checks: checks } : {}),
    ...(r.SkipNodeUpdate ? { SkipNodeUpdate: true } : {}),
  };
}

/** A deregistration as Consul's Catalog.Deregister accepts it ("Must provide node"). */
export function deregisterRequestOf(r: RawDeregister, agentDatacenter: string): DeregisterRequest {
  if (!r.Node) fail("Must provide node");
  const bad = datacenterError(r.Datacenter) ?? tooLong("Node name", r.Node) ?? tooLong("Service ID", r.ServiceID) ?? tooLong("Check ID", r.CheckID);
  if (bad) fail(bad);
  return {
    Datacenter: r.Datacenter || agentDatacenter,
    Node: r.Node,
    ...(r.ServiceID ? { ServiceID: r.ServiceID } : {}),
    ...(r.CheckID ? { CheckID: r.CheckID } : {}),
  };
}
