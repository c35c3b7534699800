/**
 * Consul 1.8's L7 config entries: constants and small helpers. The plain wire types live in
 * src/model/config_entry.ts (so the state store can hold them) and are re-exported here unchanged.
 */
import type { ConfigEntryKind, ServiceResolverConfigEntry } from "../../model/index.ts";

export type {
  ConfigEntry,
  ConfigEntryKind,
  ExposeConfig,
  ExposePath,
  MeshGatewayConfig,
  MeshGatewayMode,
  ProxyConfigEntry,
  ServiceConfigEntry,
  ServiceResolverConfigEntry,
  ServiceResolverFailover,
  ServiceResolverRedirect,
  ServiceResolverSubset,
  ServiceRoute,
  ServiceRouteDestination,
  ServiceRouteHTTPMatch,
  ServiceRouteHTTPMatchHeader,
  ServiceRouteHTTPMatchQueryParam,
  ServiceRouteMatch,
  ServiceRouterConfigEntry,
  ServiceSplit,
  ServiceSplitterConfigEntry,
} from "../../model/index.ts";

export const SERVICE_DEFAULTS = "service-defaults";
export const PROXY_DEFAULTS = "proxy-defaults";
export const SERVICE_ROUTER = "service-router";
export const SERVICE_SPLITTER = "service-splitter";
export const SERVICE_RESOLVER = "service-resolver";
/** The only name a proxy-defaults entry may have (structs.ProxyConfigGlobal). */
export const PROXY_CONFIG_GLOBAL = "global";

/** The config entry kinds this module knows, in Consul's spelling. */
export const CONFIG_ENTRY_KINDS = [SERVICE_DEFAULTS, PROXY_DEFAULTS, SERVICE_ROUTER, SERVICE_SPLITTER, SERVICE_RESOLVER] as const satisfies readonly ConfigEntryKind[];

/** Protocols a service may declare; the last three are L7 and allow routers and splitters. */
export const KNOWN_PROTOCOLS: readonly string[] = ["tcp", "http", "http2", "grpc"];

/** Whether a protocol allows routers and splitters (discoverychain.enableAdvancedRoutingForProtocol). */
export function isL7Protocol(protocol: string): boolean {
  return protocol === "http" || protocol === "http2" || protocol === "grpc";
}

/**
 * structs.ServiceResolverConfigEntry.IsDefault: a resolver that changes nothing (as a synthesized one).
 */
export function isDefaultResolver(e: ServiceResolverConfigEntry): boolean {
  return (
    !e.DefaultSubset &&
    Object.keys(e.Subsets ?? {}).length === 0 &&
    e.Redirect === undefined &&
    Object.keys(e.Failover ?? {}).length === 0 &&
    !e.ConnectTimeout
  );
}
