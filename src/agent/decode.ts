/**
 * Decoding of registration bodies (api.AgentServiceRegistration, api.AgentCheckRegistration and the
 * `service`/`check` blocks of config files) into typed registrations. Pure: no validation beyond
 * types here; see registration.ts for the rules.
 */
import type { JsonReader } from "../lib/index.ts";
import type { ConnectProxyConfig, ExposePath, MeshGatewayConfig, ServiceAddress, ServiceKind, Upstream } from "../model/index.ts";
import { badRequest } from "./errors.ts";
import type { CheckType, ServiceRegistration } from "./types.ts";

/** A decoded check, with what validation needs to know about how it was written. */
export interface DecodedCheck {
  readonly check: CheckType;
  /** True when every field is unset (Consul's CheckType.Empty(): such a Check block is ignored). */
  readonly empty: boolean;
  /** The Status as written; `check.Status` is "" when this is not a valid status. */
  readonly status: string;
}

/** A decoded service plus its decoded checks (same order as `Checks`). */
export interface DecodedService {
  readonly service: ServiceRegistration;
  readonly checks: readonly DecodedCheck[];
  readonly sidecar: DecodedService | undefined;
}

const KINDS: readonly ServiceKind[] = ["", "connect-proxy", "mesh-gateway", "terminating-gateway", "ingress-gateway"];
const STATUSES = ["", "passing", "warning", "critical"] as const;

/** Decodes one check; `idNames` are the fields its ID may come in ("CheckID", "ID"). */
export function decodeCheck(r: JsonReader, idNames: readonly string[] = ["CheckID", "ID"]): DecodedCheck {
  const header = r.raw("Header");
  let headers: Record<string, string[]> | undefined;
  if (header !== undefined) {
    const bad = () => badRequest(`Request decode failed: invalid ${JSON.stringify(r.keyOf("Header"))}: agent: invalid format of 'header' field`);
    if (typeof header !== "object" || Array.isArray(header)) throw bad();
    headers = {};
    for (const [k, vs] of Object.entries(header as Record<string, unknown>)) {
      if (!Array.isArray(vs) || !vs.every((v) => typeof v === "string")) throw bad();
      headers[k] = [...(vs as string[])];
    }
  }
  const status = r.str("Status");
  const check: CheckType = {
    CheckID: r.str(...idNames),
    Name: r.str("Name"),
    // An invalid status is reported by the caller, with the wording of its endpoint.
    Status: (STATUSES as readonly string[]).includes(status) ? (status as CheckType["Status"]) : "",
    Notes: r.str("Notes"),
    HTTP: r.str("HTTP"),
    Header: headers,
    Method: r.str("Method"),
    Body: r.str("Body"),
    TLSSkipVerify: r.bool("TLSSkipVerify"),
    TCP: r.str("TCP"),
    IntervalMs: r.durationMs("Interval"),
    TimeoutMs: r.durationMs("Timeout"),
    TTLMs: r.durationMs("TTL"),
    DeregisterCriticalServiceAfterMs: r.durationMs("DeregisterCriticalServiceAfter"),
    SuccessBeforePassing: r.int("SuccessBeforePassing"),
    FailuresBeforeCritical: r.int("FailuresBeforeCritical"),
    OutputMaxSize: r.int("OutputMaxSize"),
    ...optionalKinds(r),
  };
  const empty = status === "" &&
    Object.values(check).every((v) => v === "" || v === 0 || v === false || v === undefined || (Array.isArray(v) && v.length === 0));
  return { check, empty, status };
}

/**
 * The fields of script, Docker, gRPC and alias checks, each present only when set. `ScriptArgs` is
 * also read from `Args` (Consul's config and API alias); the pre-1.0 `Script` string is ignored, as
 * Consul 1.8's decoder ignores it.
 */
function optionalKinds(r: JsonReader): Partial<CheckType> {
  const args = r.strList("ScriptArgs", "Args") ?? [];
  const out: { -readonly [K in keyof CheckType]?: CheckType[K] } = {};
  if (args.length) out.ScriptArgs = args;
  for (const key of ["DockerContainerID", "Shell", "GRPC", "AliasNode", "AliasService"] as const) {
    const v = r.str(key);
    if (v !== "") out[key] = v;
  }
  if (r.bool("GRPCUseTLS")) out.GRPCUseTLS = true;
  return out;
}

/**
 * Decodes a service definition (no validation). Throws the reader's GoError on a type mismatch (the
 * caller words it as a decode failure) and AgentError on a value Consul's decoder refuses.
 */
export function decodeService(r: JsonReader): DecodedService {
  const kind = r.str("Kind");
  if (!(KINDS as readonly string[]).includes(kind)) throw badRequest(`Request decode failed: invalid service kind ${JSON.stringify(kind)}`);
  const checks: DecodedCheck[] = [];
  const single = r.child("Check");
  if (single) {
    const d = decodeCheck(single);
    if (!d.empty) checks.push(d);
  }
  for (const c of r.children("Checks")) checks.push(decodeCheck(c));

  const weights = r.child("Weights");
  const proxy = r.child("Proxy");
  const connect = r.child("Connect");
  const sidecarReader = connect?.child("SidecarService");
  const sidecar = sidecarReader ? decodeService(sidecarReader) : undefined;
  const service: ServiceRegistration = {
    Kind: kind as ServiceKind,
    ID: r.str("ID"),
    Name: r.str("Name"),
    Tags: r.strList("Tags"),
    Address: r.str("Address"),
    TaggedAddresses: decodeTaggedAddresses(r),
    Meta: r.strMap("Meta"),
    Port: r.int("Port"),
    Weights: weights ? { Passing: weights.int("Passing"), Warning: weights.int("Warning") } : undefined,
    EnableTagOverride: r.bool("EnableTagOverride"),
    Proxy: proxy ? decodeProxy(proxy) : undefined,
    Connect: connect ? { Native: connect.bool("Native"), ...(sidecar ? { SidecarService: sidecar.service } : {}) } : undefined,
    Checks: checks.map((c) => c.check),
  };
  return { service, checks, sidecar };
}

function decodeTaggedAddresses(r: JsonReader): Record<string, ServiceAddress> | undefined {
  const t = r.child("TaggedAddresses");
  if (!t) return undefined;
  const out: Record<string, ServiceAddress> = {};
  for (const key of Object.keys(t.obj)) {
    const a = t.child(key);
    if (a) out[key] = { Address: a.str("Address"), Port: a.int("Port") };
  }
  return Object.keys(out).length ? out : undefined;
}

function decodeMeshGateway(r: JsonReader | undefined): MeshGatewayConfig {
  const mode = r?.str("Mode") ?? "";
  if (mode !== "" && mode !== "none" && mode !== "local" && mode !== "remote") {
    throw badRequest(`Invalid Mesh Gateway Mode: ${JSON.stringify(mode)}`);
  }
  return mode === "" ? {} : { Mode: mode };
}

/** Decodes api.AgentServiceConnectProxyConfig; upstream DestinationType defaults to "service" as Consul's NodeService() does. */
export function decodeProxy(r: JsonReader): ConnectProxyConfig {
  const upstreams: Upstream[] = r.children("Upstreams").map((u) => {
    const config = u.opaque("Config");
    const type = u.str("DestinationType") || "service";
    if (type !== "service" && type !== "prepared_query") throw badRequest(`Request decode failed: invalid upstream DestinationType ${JSON.stringify(type)}`);
    return {
      DestinationType: type,
      DestinationNamespace: u.str("DestinationNamespace"),
      DestinationName: u.str("DestinationName"),
      Datacenter: u.str("Datacenter"),
      LocalBindAddress: u.str("LocalBindAddress"),
      LocalBindPort: u.int("LocalBindPort"),
      ...(config ? { Config: config } : {}),
      MeshGateway: decodeMeshGateway(u.child("MeshGateway")),
    };
  });
  const expose = r.child("Expose");
  const paths: ExposePath[] = (expose?.children("Paths") ?? []).map((p) => ({
    ListenerPort: p.int("ListenerPort"),
    Path: p.str("Path"),
    LocalPathPort: p.int("LocalPathPort"),
    Protocol: p.str("Protocol"),
  }));
  const config = r.opaque("Config");
  return {
    DestinationServiceName: r.str("DestinationServiceName"),
    DestinationServiceID: r.str("DestinationServiceID"),
    LocalServiceAddress: r.str("LocalServiceAddress"),
    LocalServicePort: r.int("LocalServicePort"),
    ...(config ? { Config: config } : {}),
    ...(upstreams.length ? { Upstreams: upstreams } : {}),
    MeshGateway: decodeMeshGateway(r.child("MeshGateway")),
    Expose: { ...(expose?.bool("Checks") ? { Checks: true } : {}), ...(paths.length ? { Paths: paths } : {}) },
  };
}
