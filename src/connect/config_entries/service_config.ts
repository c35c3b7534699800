/**
 * Centralized service configuration of a sidecar (Consul's `ConfigEntry.ResolveServiceConfig` in
 * agent/consul/config_endpoint.go and the agent's `mergeServiceConfig` in agent/service_manager.go,
 * 1.8): proxy-defaults "global" and the service-defaults of the destination and of each service
 * upstream are folded into the registered Proxy block, filling only what the registration left unset.
 * Causeway has no `enable_central_service_config` switch: this always applies, as Consul's default
 * from 1.10 does.
 *
 * Pure, and shared by the two places that fold it in: the local agent's service manager (src/agent,
 * which registers the merged service, as Consul 1.8's agent does) and proxycfg's state machines.
 */
import type { ConfigEntry, ConnectProxyConfig, ExposeConfig, MeshGatewayMode, ProxyConfigEntry, ServiceConfigEntry, Upstream } from "../../model/index.ts";

/** What ResolveServiceConfig answers (structs.ServiceConfigResponse). */
export interface ResolvedServiceConfig {
  readonly ProxyConfig: Readonly<Record<string, unknown>> | undefined;
  readonly MeshGateway: MeshGatewayMode;
  readonly Expose: ExposeConfig;
  /** Upstream service name -> `{ protocol }`, for upstreams with a protocol to apply. */
  readonly UpstreamConfigs: Readonly<Record<string, Readonly<Record<string, unknown>>>>;
}

/** An upstream that names a service (not a prepared query): only those get service defaults. */
export function isServiceUpstream(u: Upstream): boolean {
  return (u.DestinationType ?? "") === "" || u.DestinationType === "service";
}

const asProxyDefaults = (e: ConfigEntry | null | undefined): ProxyConfigEntry | undefined => (e && e.Kind === "proxy-defaults" ? e : undefined);
const asServiceDefaults = (e: ConfigEntry | null | undefined): ServiceConfigEntry | undefined => (e && e.Kind === "service-defaults" ? e : undefined);

/**
 * ResolveServiceConfig: the proxy-defaults' Config (with the service-defaults' Protocol as `protocol`),
 * mesh gateway mode and expose settings; per upstream name the protocol of its service-defaults, else
 * the global `protocol`, else nothing.
 */
export function resolveServiceConfig(
  proxyDefaults: ConfigEntry | null | undefined,
  serviceDefaults: ConfigEntry | null | undefined,
  upstreamDefaults: ReadonlyMap<string, ConfigEntry | null>,
): ResolvedServiceConfig {
  const proxy = asProxyDefaults(proxyDefaults);
  const service = asServiceDefaults(serviceDefaults);
  let proxyConfig: Record<string, unknown> | undefined = proxy?.Config ? { ...proxy.Config } : undefined;
  let mode: MeshGatewayMode = proxy?.MeshGateway.Mode ?? "";
  let expose: ExposeConfig = proxy?.Expose ?? {};
  if (service) {
    if (service.Expose.Checks) expose = { ...expose, Checks: true };
    if ((service.Expose.Paths ?? []).length >= 1) expose = { ...expose, Paths: service.Expose.Paths };
    if (service.MeshGateway.Mode) mode = service.MeshGateway.Mode;
    if (service.Protocol !== "") proxyConfig = { ...(proxyConfig ?? {}), protocol: service.Protocol };
  }
  const globalProtocol = proxy?.Config?.["protocol"];
  const upstreams: Record<string, Record<string, unknown>> = {};
  for (const [name, entry] of upstreamDefaults) {
    const s = asServiceDefaults(entry);
    const protocol = s && s.Protocol !== "" ? s.Protocol : globalProtocol;
    if (protocol !== undefined && protocol !== null) upstreams[name] = { protocol };
  }
  return { ProxyConfig: proxyConfig, MeshGateway: mode, Expose: expose, UpstreamConfigs: upstreams };
}

/** mergo.Merge of two opaque maps: keys the registration lacks (or left empty) come from the defaults. */
function fillMap(dst: Readonly<Record<string, unknown>> | undefined, src: Readonly<Record<string, unknown>> | undefined): Readonly<Record<string, unknown>> | undefined {
  if (!src || Object.keys(src).length === 0) return dst;
  const out: Record<string, unknown> = { ...(dst ?? {}) };
  for (const [k, v] of Object.entries(src)) {
    const cur = out[k];
    if (cur === undefined || cur === null || cur === "") out[k] = v;
  }
  return out;
}

/**
 * mergeServiceConfig: the registered Proxy block with the defaults folded in -- Config keys, Expose
 * (Checks when unset, Paths when none), the mesh gateway mode when the registration has none; each
 * service upstream without a mode takes the proxy's, and its Config the protocol of its service. Empty
 * defaults leave the block as registered (no empty mode is written in).
 */
export function mergeServiceConfig(proxy: ConnectProxyConfig, resolved: ResolvedServiceConfig): ConnectProxyConfig {
  const config = fillMap(proxy.Config, resolved.ProxyConfig);
  const expose: ExposeConfig = {
    ...proxy.Expose,
    ...(!proxy.Expose.Checks && resolved.Expose.Checks ? { Checks: true } : {}),
    ...((proxy.Expose.Paths ?? []).length === 0 && (resolved.Expose.Paths ?? []).length > 0 ? { Paths: resolved.Expose.Paths } : {}),
  };
  const mode: MeshGatewayMode = proxy.MeshGateway.Mode || resolved.MeshGateway;
  const upstreams = proxy.Upstreams?.map((u): Upstream => {
    if (!isServiceUpstream(u)) return u;
    const withMode: Upstream = u.MeshGateway?.Mode || !mode ? u : { ...u, MeshGateway: { ...u.MeshGateway, Mode: mode } };
    const cfg = fillMap(u.Config, resolved.UpstreamConfigs[u.DestinationName]);
    return cfg === u.Config ? withMode : { ...withMode, Config: cfg! };
  });
  return {
    ...proxy,
    ...(config ? { Config: config } : {}),
    Expose: expose,
    MeshGateway: proxy.MeshGateway.Mode || !mode ? proxy.MeshGateway : { ...proxy.MeshGateway, Mode: mode },
    ...(upstreams ? { Upstreams: upstreams } : {}),
  };
}
