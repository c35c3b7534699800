/**
 * Consul 1.8's L7 config entries in their wire shape (agent/structs/config_entry.go,
 * config_entry_discoverychain.go): PascalCase keys, a field that Go tags `json:",omitempty"` is absent when
 * it holds its zero value, every other field is always present. Durations are Go duration strings in
 * canonical form ("5s", "1m30s"), as Consul's MarshalJSON writes them. Values are plain JSON-ready objects:
 * `JSON.stringify(entry)` is the /v1/config body.
 */

export const SERVICE_DEFAULTS = "service-defaults";
export const PROXY_DEFAULTS = "proxy-defaults";
export const SERVICE_ROUTER = "service-router";
export const SERVICE_SPLITTER = "service-splitter";
export const SERVICE_RESOLVER = "service-resolver";
/** The only name a proxy-defaults entry may have (structs.ProxyConfigGlobal). */
export const PROXY_CONFIG_GLOBAL = "global";

/** The config entry kinds this module knows, in Consul's spelling. */
export const CONFIG_ENTRY_KINDS = [SERVICE_DEFAULTS, PROXY_DEFAULTS, SERVICE_ROUTER, SERVICE_SPLITTER, SERVICE_RESOLVER] as const;
export type ConfigEntryKind = (typeof CONFIG_ENTRY_KINDS)[number];

/** Protocols a service may declare; the last three are L7 and allow routers and splitters. */
export const KNOWN_PROTOCOLS: readonly string[] = ["tcp", "http", "http2", "grpc"];

/** "" is the default (no opinion); Consul also accepts "default" on input and stores "". */
export type MeshGatewayMode = "" | "none" | "local" | "remote";

export interface MeshGatewayConfig {
  readonly Mode?: MeshGatewayMode;
}

export interface ExposePath {
  readonly ListenerPort?: number;
  readonly Path?: string;
  readonly LocalPathPort?: number;
  readonly Protocol?: string;
}

export interface ExposeConfig {
  readonly Checks?: boolean;
  readonly Paths?: readonly ExposePath[];
}

interface EntryCommon {
  readonly Name: string;
  readonly Meta?: Readonly<Record<string, string>>;
  readonly CreateIndex: number;
  readonly ModifyIndex: number;
}

export interface ServiceConfigEntry extends EntryCommon {
  readonly Kind: typeof SERVICE_DEFAULTS;
  readonly Protocol: string;
  readonly MeshGateway: MeshGatewayConfig;
  readonly Expose: ExposeConfig;
  readonly ExternalSNI?: string;
}

export interface ProxyConfigEntry extends EntryCommon {
  readonly Kind: typeof PROXY_DEFAULTS;
  /** Opaque proxy configuration; `protocol` here is the default protocol of every service. */
  readonly Config?: Readonly<Record<string, unknown>>;
  readonly MeshGateway: MeshGatewayConfig;
  readonly Expose: ExposeConfig;
}

export interface ServiceRouteHTTPMatchHeader {
  readonly Name: string;
  readonly Present?: boolean;
  readonly Exact?: string;
  readonly Prefix?: string;
  readonly Suffix?: string;
  readonly Regex?: string;
  readonly Invert?: boolean;
}

export interface ServiceRouteHTTPMatchQueryParam {
  readonly Name: string;
  readonly Present?: boolean;
  readonly Exact?: string;
  readonly Regex?: string;
}

export interface ServiceRouteHTTPMatch {
  readonly PathExact?: string;
  readonly PathPrefix?: string;
  readonly PathRegex?: string;
  readonly Header?: readonly ServiceRouteHTTPMatchHeader[];
  readonly QueryParam?: readonly ServiceRouteHTTPMatchQueryParam[];
  /** Upper-cased by normalization. */
  readonly Methods?: readonly string[];
}

export interface ServiceRouteMatch {
  readonly HTTP?: ServiceRouteHTTPMatch;
}

export interface ServiceRouteDestination {
  readonly Service?: string;
  readonly ServiceSubset?: string;
  readonly Namespace?: string;
  readonly PrefixRewrite?: string;
  /** Go duration string. */
  readonly RequestTimeout?: string;
  readonly NumRetries?: number;
  readonly RetryOnConnectFailure?: boolean;
  readonly RetryOnStatusCodes?: readonly number[];
}

export interface ServiceRoute {
  readonly Match?: ServiceRouteMatch;
  readonly Destination?: ServiceRouteDestination;
}

export interface ServiceRouterConfigEntry extends EntryCommon {
  readonly Kind: typeof SERVICE_ROUTER;
  readonly Routes: readonly ServiceRoute[];
}

export interface ServiceSplit {
  /** Percentage, normalized to two decimals (structs.NormalizeServiceSplitWeight). */
  readonly Weight: number;
  readonly Service?: string;
  readonly ServiceSubset?: string;
  readonly Namespace?: string;
}

export interface ServiceSplitterConfigEntry extends EntryCommon {
  readonly Kind: typeof SERVICE_SPLITTER;
  readonly Splits: readonly ServiceSplit[];
}

export interface ServiceResolverSubset {
  /** A bexpr filter over CheckServiceNode. */
  readonly Filter?: string;
  readonly OnlyPassing?: boolean;
}

export interface ServiceResolverRedirect {
  readonly Service?: string;
  readonly ServiceSubset?: string;
  readonly Namespace?: string;
  readonly Datacenter?: string;
}

export interface ServiceResolverFailover {
  readonly Service?: string;
  readonly ServiceSubset?: string;
  readonly Namespace?: string;
  readonly Datacenters?: readonly string[];
}

export interface ServiceResolverConfigEntry extends EntryCommon {
  readonly Kind: typeof SERVICE_RESOLVER;
  readonly DefaultSubset?: string;
  readonly Subsets?: Readonly<Record<string, ServiceResolverSubset>>;
  readonly Redirect?: ServiceResolverRedirect;
  /** Keyed by subset name, or "*" for any subset. */
  readonly Failover?: Readonly<Record<string, ServiceResolverFailover>>;
  /** Go duration string; absent means the default (5s at compile time). */
  readonly ConnectTimeout?: string;
}

export type ConfigEntry =
  | ServiceConfigEntry
  | ProxyConfigEntry
  | ServiceRouterConfigEntry
  | ServiceSplitterConfigEntry
  | ServiceResolverConfigEntry;

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
