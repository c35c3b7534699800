/**
 * Exposed checks (Consul 1.8's `Proxy.Expose.Checks`, agent/agent.go rerouteExposedChecks,
 * resetExposedChecks, listenerPortLocked, httpInjectAddr/grpcInjectAddr, and agent/xds parseCheckPath):
 * when a local connect proxy exposes its destination's checks, every HTTP and gRPC check of that service
 * gets a listener port from the expose range (Consul's ports.expose_min_port..expose_max_port), and the
 * check is run through the proxy's address and that port instead of its own target. The check's
 * registered definition is untouched; only where its runner connects changes.
 *
 * Pure bookkeeping: which port each (service, check) holds, and the rewritten targets. The agent decides
 * when to route or reset (agent.ts).
 */
import type { ExposePath } from "../model/index.ts";
import type { LocalService } from "./local_state.ts";
import type { CheckType } from "./types.ts";

/** Consul's default expose range (ports.expose_min_port / expose_max_port). */
export const DEFAULT_EXPOSE_PORTS = { min: 21500, max: 21755 } as const;

/** The check kinds whose targets can be exposed: HTTP and gRPC (Consul's checkHTTPs and checkGRPCs). */
export function isExposable(t: CheckType): boolean {
  return t.TTLMs <= 0 && (t.HTTP !== "" || (t.GRPC ?? "") !== "");
}

/** "host" as a URL authority wants it: IPv6 in brackets (Consul's fixIPv6). */
function bracketed(ip: string): string {
  return ip.includes(":") && !ip.startsWith("[") ? `[${ip}]` : ip;
}

// Consul's httpAddrRE: scheme, host (bracketed IPv6 or a name), optional port, path, optional query.
const HTTP_ADDR = /^(https?:\/\/)(\[.*?\]|\[?[\w\-.]+)(:\d+)?([^?]*)(\?.*)?$/;

/**
 * httpInjectAddr: `url` with its host replaced by `ip` and its port by `port`, path and query kept
 * (`http://127.0.0.1:8080/health?x=1` -> `http://10.0.0.1:21500/health?x=1`). A URL the pattern does not
 * match is returned unchanged, as Consul's regexp replacement leaves it.
 */
export function httpInjectAddr(url: string, ip: string, port: number): string {
  const m = HTTP_ADDR.exec(url);
  if (!m) return url;
  return `${m[1]}${bracketed(ip)}:${port}${m[4] ?? ""}${m[5] ?? ""}`;
}

/**
 * grpcInjectAddr: a gRPC target `host:port[/service]` with host and port replaced
 * (`127.0.0.1:9090/api` -> `10.0.0.1:21501/api`). A target without a port is returned unchanged.
 */
export function grpcInjectAddr(target: string, ip: string, port: number): string {
  const slash = target.indexOf("/");
  const addr = slash >= 0 ? target.slice(0, slash) : target;
  const rest = slash >= 0 ? target.slice(slash) : "";
  if (!/:\d+$/.test(addr)) return target;
  return `${bracketed(ip)}:${port}${rest}`;
}

/** The port of a "host:port" authority (IPv6 bracketed), or undefined (net.SplitHostPort + Atoi). */
function portOf(hostPort: string): number | undefined {
  const m = /^(?:\[[^\]]*\]|[^:[\]]*):(\d+)$/.exec(hostPort);
  if (!m) return undefined;
  const n = Number(m[1]);
  return Number.isInteger(n) && n <= 65535 ? n : undefined;
}

function urlAuthority(url: string): string | undefined {
  const m = /^[a-zA-Z][a-zA-Z0-9+.-]*:\/\/([^/?#]*)/.exec(url);
  return m ? m[1]!.replace(/^[^@]*@/, "") : undefined;
}

function urlPath(url: string): string {
  const m = /^[a-zA-Z][a-zA-Z0-9+.-]*:\/\/[^/?#]*([^?#]*)/.exec(url);
  return m ? m[1]! : "";
}

/**
 * parseCheckPath (Consul 1.8 agent/xds/listeners.go): the expose path of a check run through the proxy.
 * HTTP: the original URL's path and port, protocol "http"; gRPC: `/grpc.health.v1.Health/Check` to the
 * original target's port, protocol "http2"; the listener port is the proxied target's. Undefined when a
 * port cannot be read (Consul logs it and leaves the check out).
 */
export function exposePathOf(t: CheckType, proxiedTarget: string): ExposePath | undefined {
  if (t.HTTP) {
    const local = portOf(urlAuthority(t.HTTP) ?? "");
    const listener = portOf(urlAuthority(proxiedTarget) ?? "");
    if (local === undefined || listener === undefined) return undefined;
    return { ListenerPort: listener, Path: urlPath(t.HTTP), LocalPathPort: local, Protocol: "http", ParsedFromCheck: true };
  }
  if (t.GRPC) {
    const local = portOf(t.GRPC.split("/", 1)[0]!);
    const listener = portOf(proxiedTarget.split("/", 1)[0]!);
    if (local === undefined || listener === undefined) return undefined;
    return { ListenerPort: listener, Path: "/grpc.health.v1.Health/Check", LocalPathPort: local, Protocol: "http2", ParsedFromCheck: true };
  }
  return undefined;
}

/**
 * Destination service ID -> the local connect proxy exposing its checks (Consul: a proxy whose
 * DestinationServiceID is it, with Expose.Checks); the first by service ID when several do.
 */
function exposingProxies(services: readonly LocalService[]): Map<string, LocalService> {
  const out = new Map<string, LocalService>();
  for (const s of services) {
    const dest = s.Proxy?.DestinationServiceID ?? "";
    if (s.Kind === "connect-proxy" && dest !== "" && s.Proxy?.Expose?.Checks === true && !out.has(dest)) out.set(dest, s);
  }
  return out;
}

/**
 * Listener ports of exposed checks (Consul's Agent.exposedPorts), keyed by service and check. A key keeps
 * its port until released, so a re-registration keeps its listeners.
 */
export class ExposedPorts {
  private readonly ports = new Map<string, number>();

  constructor(private readonly range: { readonly min: number; readonly max: number } = DEFAULT_EXPOSE_PORTS) {}

  /**
   * listenerPortLocked: the port of (serviceId, checkId), allocating the lowest one of the range that no
   * other exposed check holds. Undefined when the range is exhausted or disabled (min or max < 1).
   * Consul's loop stops before expose_max_port (and then hands out a taken port); the documented range
   * is inclusive, which is what this follows.
   */
  allocate(serviceId: string, checkId: string): number | undefined {
    const key = keyOf(serviceId, checkId);
    const held = this.ports.get(key);
    if (held !== undefined) return held;
    const { min, max } = this.range;
    if (min < 1 || max < min) return undefined;
    const used = new Set(this.ports.values());
    for (let p = min; p <= max; p++) {
      if (used.has(p)) continue;
      this.ports.set(key, p);
      return p;
    }
    return undefined;
  }

  /** The port (serviceId, checkId) holds, if any. */
  held(serviceId: string, checkId: string): number | undefined {
    return this.ports.get(keyOf(serviceId, checkId));
  }

  /** Frees the port of (serviceId, checkId); a no-op when it holds none. */
  release(serviceId: string, checkId: string): void {
    this.ports.delete(keyOf(serviceId, checkId));
  }
}

const keyOf = (serviceId: string, checkId: string) => JSON.stringify([serviceId, checkId]);

/** The check's target rewritten to `ip:port` (HTTP URL or gRPC address). */
export function proxiedTarget(t: CheckType, ip: string, port: number): string {
  return t.HTTP ? httpInjectAddr(t.HTTP, ip, port) : grpcInjectAddr(t.GRPC ?? "", ip, port);
}

/** The check type as its runner should use it: HTTP or GRPC replaced by the proxied target when there is one. */
function withTarget(t: CheckType, target: string | undefined): CheckType {
  if (target === undefined) return t;
  return t.HTTP ? { ...t, HTTP: target } : { ...t, GRPC: target };
}

interface RoutedCheck {
  readonly serviceId: string;
  /** The check as registered. */
  readonly type: CheckType;
  /** Where its runner connects instead of the registered target; undefined when not exposed. */
  target: string | undefined;
}

/**
 * Which checks run through an exposing proxy, and where (the agent's ProxyHTTP/ProxyGRPC of Consul's
 * CheckHTTP/CheckGRPC). The agent records every check it starts here and asks for reroutes after each
 * change of its services; the desired routing is always derived from the live services, so registering,
 * re-registering, turning Expose.Checks off and removing the proxy all converge the same way
 * (Consul's rerouteExposedChecks on the proxy's registration, resetExposedChecks otherwise).
 */
export class CheckRoutes {
  private readonly ports: ExposedPorts;
  private readonly checks = new Map<string, RoutedCheck>();

  /** `warn` hears about checks that could not be exposed (no port left in the range). */
  constructor(range: { readonly min: number; readonly max: number } | undefined, private readonly warn: (msg: string) => void) {
    this.ports = new ExposedPorts(range);
  }

  /**
   * Records a check about to be (re)started and returns the check type its runner should use: the
   * registered one, or with its HTTP/GRPC target going through the proxy that exposes its service.
   */
  add(serviceId: string, checkId: string, type: CheckType, services: readonly LocalService[]): CheckType {
    const old = this.checks.get(checkId);
    if (old && old.serviceId !== serviceId) this.ports.release(old.serviceId, checkId);
    const entry: RoutedCheck = { serviceId, type, target: undefined };
    entry.target = this.targetOf(checkId, entry, exposingProxies(services));
    this.checks.set(checkId, entry);
    return withTarget(type, entry.target);
  }

  /** Forgets a removed check and frees its port. */
  remove(checkId: string): void {
    const old = this.checks.get(checkId);
    if (!old) return;
    this.ports.release(old.serviceId, checkId);
    this.checks.delete(checkId);
  }

  /**
   * Re-derives every check's routing from the live services; returns the checks whose runner must be
   * restarted (sorted by ID) with the check type to restart it with. Ports of checks no longer exposed are freed.
   */
  reroute(services: readonly LocalService[]): { checkId: string; type: CheckType }[] {
    const out: { checkId: string; type: CheckType }[] = [];
    const proxies = exposingProxies(services);
    for (const checkId of [...this.checks.keys()].sort()) {
      const entry = this.checks.get(checkId)!;
      const target = this.targetOf(checkId, entry, proxies);
      if (target === entry.target) continue;
      entry.target = target;
      out.push({ checkId, type: withTarget(entry.type, target) });
    }
    return out;
  }

  /**
   * The exposed paths of a proxy's destination checks (Consul's ServiceHTTPBasedChecks + parseCheckPath),
   * sorted by check ID; [] unless `proxy` is a connect proxy with Expose.Checks.
   */
  paths(proxy: LocalService | undefined): ExposePath[] {
    if (!proxy || proxy.Kind !== "connect-proxy" || proxy.Proxy?.Expose?.Checks !== true) return [];
    const dest = proxy.Proxy.DestinationServiceID ?? "";
    const out: ExposePath[] = [];
    for (const checkId of [...this.checks.keys()].sort()) {
      const e = this.checks.get(checkId)!;
      if (e.serviceId !== dest || e.target === undefined) continue;
      const path = exposePathOf(e.type, e.target);
      if (path) out.push(path);
    }
    return out;
  }

  private targetOf(checkId: string, e: RoutedCheck, proxies: ReadonlyMap<string, LocalService>): string | undefined {
    const proxy = isExposable(e.type) ? proxies.get(e.serviceId) : undefined;
    if (!proxy) {
      this.ports.release(e.serviceId, checkId);
      return undefined;
    }
    const port = this.ports.allocate(e.serviceId, checkId);
    if (port === undefined) {
      this.warn(`no ports available to expose '${checkId}'`);
      return undefined;
    }
    // An unset proxy address is Envoy's 0.0.0.0 bind; Go dials ":port" as the local host, which this spells out.
    return proxiedTarget(e.type, proxy.Address || "127.0.0.1", port);
  }
}
