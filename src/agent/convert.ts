/**
 * Registrations -> catalog records: the NodeService a service registration stands for, its sidecar
 * (Consul's sidecarServiceFromNodeService) and the HealthCheck records of checks.
 */
import type { HealthCheckDefinition, HealthStatus } from "../model/index.ts";
import { formatDuration } from "../lib/index.ts";
import { badRequest } from "./errors.ts";
import type { LocalCheck, LocalService } from "./local_state.ts";
import type { CheckType, ServiceRegistration } from "./types.ts";
import { checkTypeName } from "./validate.ts";

/** Consul's default sidecar port range (ports.sidecar_min_port / sidecar_max_port). */
export const DEFAULT_SIDECAR_PORTS = { min: 21000, max: 21255 } as const;

/** The NodeService a registration stands for (ServiceDefinition.NodeService): ID defaults to Name, weights to {1, 1}. */
export function toNodeService(reg: ServiceRegistration): LocalService {
  return {
    ...(reg.Kind ? { Kind: reg.Kind } : {}),
    ID: reg.ID || reg.Name,
    Service: reg.Name,
    Tags: reg.Tags,
    Address: reg.Address,
    ...(reg.TaggedAddresses ? { TaggedAddresses: reg.TaggedAddresses } : {}),
    Meta: reg.Meta,
    Port: reg.Port,
    Weights: reg.Weights ?? { Passing: 1, Warning: 1 },
    EnableTagOverride: reg.EnableTagOverride,
    Proxy: reg.Proxy ?? { MeshGateway: {}, Expose: {} },
    Connect: reg.Connect?.Native ? { Native: true } : {},
  };
}

/**
 * The ID of the `index`-th of a service's `count` embedded checks (Consul's service check IDs): its own
 * CheckID, else `service:<id>`, numbered `service:<id>:<n>` when the service has more than one.
 */
export function embeddedCheckId(serviceId: string, check: Pick<CheckType, "CheckID">, index: number, count: number): string {
  return check.CheckID || (count > 1 ? `service:${serviceId}:${index + 1}` : `service:${serviceId}`);
}

/** The IDs of the checks a service registration embeds, as registering it names them. */
export function serviceCheckIds(reg: ServiceRegistration): string[] {
  return reg.Checks.map((c, i) => embeddedCheckId(reg.ID || reg.Name, c, i, reg.Checks.length));
}

/** The sidecar service ID Consul derives from its parent's. */
export function sidecarId(parentId: string): string {
  return `${parentId}-sidecar-proxy`;
}

const hostPort = (host: string, port: number) => (host.includes(":") ? `[${host}]:${port}` : `${host}:${port}`);

/**
 * Expands a `Connect.SidecarService` block into the proxy service and its checks. Port 0 takes the
 * sidecar's current port if it already has one in the range, else the lowest free port of the range.
 * Without checks, the sidecar gets Consul's two defaults: a TCP check of its listener every 10 s and an
 * alias of the parent service. Throws AgentError("bad-request") "Invalid SidecarService: ..." when no port is left.
 */
export function expandSidecar(
  parent: LocalService,
  def: ServiceRegistration,
  existing: readonly LocalService[],
  ports: { readonly min: number; readonly max: number } = DEFAULT_SIDECAR_PORTS,
): { service: LocalService; checks: CheckType[] } {
  const id = sidecarId(parent.ID);
  const proxy = def.Proxy ?? { MeshGateway: {}, Expose: {} };
  let port = def.Port;
  if (port < 1 && ports.min > 0 && ports.max >= ports.min) {
    const used = new Set<number>();
    for (const s of existing) {
      if (s.Port < ports.min || s.Port > ports.max) continue;
      if (s.ID === id) {
        port = s.Port;
        break;
      }
      used.add(s.Port);
    }
    for (let p = ports.min; port < 1 && p <= ports.max; p++) if (!used.has(p)) port = p;
  }
  if (port < 1) {
    throw badRequest(ports.min < 1 || ports.max < 1
      ? "Invalid SidecarService: no port provided for sidecar_service and auto-assignment disabled in config"
      : `Invalid SidecarService: no port provided for sidecar_service and none left in the configured range [${ports.min}, ${ports.max}]`);
  }
  const localAddress = proxy.LocalServiceAddress || "127.0.0.1";
  const service: LocalService = {
    ...toNodeService({ ...def, Kind: def.Kind || "connect-proxy", Name: def.Name || `${parent.Service}-sidecar-proxy`, Connect: undefined }),
    ID: id,
    Address: def.Address || parent.Address,
    Port: port,
    Proxy: {
      ...proxy,
      DestinationServiceName: proxy.DestinationServiceName || parent.Service,
      DestinationServiceID: proxy.DestinationServiceID || parent.ID,
      LocalServiceAddress: localAddress,
      LocalServicePort: (proxy.LocalServicePort ?? 0) >= 1 ? proxy.LocalServicePort : parent.Port,
    },
  };
  const checks = def.Checks.length ? [...def.Checks] : [
    { ...emptyCheckType(), Name: "Connect Sidecar Listening", TCP: hostPort(localAddress, port), IntervalMs: 10_000 },
    { ...emptyCheckType(), Name: `Connect Sidecar Aliasing ${parent.ID}`, AliasService: parent.ID },
  ];
  return { service, checks };
}

/** A CheckType with every field unset. */
export function emptyCheckType(): CheckType {
  return {
    CheckID: "", Name: "", Status: "", Notes: "", HTTP: "", Header: undefined, Method: "", Body: "", TLSSkipVerify: false,
    TCP: "", IntervalMs: 0, TimeoutMs: 0, TTLMs: 0, DeregisterCriticalServiceAfterMs: 0,
    SuccessBeforePassing: 0, FailuresBeforeCritical: 0, OutputMaxSize: 0,
  };
}

/** The Definition a check shows in the catalog (durations as Go writes them; unset fields left out). */
export function definitionOf(c: CheckType): HealthCheckDefinition {
  return {
    ...(c.HTTP ? { HTTP: c.HTTP } : {}),
    ...(c.TLSSkipVerify ? { TLSSkipVerify: true } : {}),
    ...(c.Header ? { Header: c.Header } : {}),
    ...(c.Method ? { Method: c.Method } : {}),
    ...(c.Body ? { Body: c.Body } : {}),
    ...(c.TCP ? { TCP: c.TCP } : {}),
    ...(c.IntervalMs ? { Interval: formatDuration(c.IntervalMs) } : {}),
    ...(c.TimeoutMs ? { Timeout: formatDuration(c.TimeoutMs) } : {}),
    ...(c.DeregisterCriticalServiceAfterMs ? { DeregisterCriticalServiceAfter: formatDuration(c.DeregisterCriticalServiceAfterMs) } : {}),
    ...(c.ScriptArgs?.length ? { ScriptArgs: c.ScriptArgs } : {}),
    ...(c.DockerContainerID ? { DockerContainerID: c.DockerContainerID } : {}),
    ...(c.Shell ? { Shell: c.Shell } : {}),
    ...(c.GRPC ? { GRPC: c.GRPC } : {}),
    ...(c.GRPCUseTLS ? { GRPCUseTLS: true } : {}),
    ...(c.AliasNode ? { AliasNode: c.AliasNode } : {}),
    ...(c.AliasService ? { AliasService: c.AliasService } : {}),
  };
}

/** The HealthCheck record of a check (status critical unless the registration says otherwise). */
export function healthCheckOf(
  nodeName: string,
  checkId: string,
  c: CheckType,
  service: LocalService | undefined,
  status?: HealthStatus,
  output = "",
): LocalCheck {
  return {
    Node: nodeName,
    CheckID: checkId,
    Name: c.Name,
    Status: status ?? (c.Status || "critical"),
    Notes: c.Notes,
    Output: output,
    ServiceID: service?.ID ?? "",
    ServiceName: service?.Service ?? "",
    ServiceTags: service ? service.Tags : null,
    Type: checkTypeName(c),
    Definition: definitionOf(c),
  };
}
