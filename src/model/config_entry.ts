/**
 * Consul 1.8's L7 config entries in their wire shape (agent/structs/config_entry.go,
 * config_entry_discoverychain.go): PascalCase keys, a field that Go tags `json:",omitempty"` is absent when
 * it holds its zero value, every other field is always present. Durations are Go duration strings in
 * canonical form ("5s", "1m30s"), as Consul's MarshalJSON writes them. Values are plain JSON-ready objects:
 * `JSON.stringify(entry)` is the /v1/config body. Constants, decoding and validation live in
 * src/connect/config_entries; these are the plain types the state store holds.
 *
 * MeshGatewayConfig, ExposeConfig and ExposePath are the same structs as a proxy registration's
 * (catalog.ts), as in Consul.
 */
import type { ExposeConfig, MeshGatewayConfig } from "./catalog.ts";

/** The config entry kinds Causeway knows, in Consul's spelling. */
export type ConfigEntryKind = "service-defaults" | "proxy-defaults" | "service-router" | "service-splitter" | "service-resolver";

/** Fields every config entry has. */
export interface ConfigEntryCommon {
  readonly Name: string;
  readonly Meta?: Readonly<Record<string, string>>;
  readonly CreateIndex: number;
  readonly ModifyIndex: number;
}

export interface ServiceConfigEntry extends ConfigEntryCommon {
  readonly Kind: "service-defaults";
  readonly Protocol: string;
  readonly MeshGateway: MeshGatewayConfig;
  readonly Expose: ExposeConfig;
  readonly ExternalSNI?: string;
}

export interface ProxyConfigEntry extends ConfigEntryCommon {
  readonly Kind: "proxy-defaults";
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

export interface ServiceRouterConfigEntry extends ConfigEntryCommon {
  readonly Kind: "service-router";
  readonly Routes: readonly ServiceRoute[];
}

export interface ServiceSplit {
  /** Percentage, normalized to two decimals (structs.NormalizeServiceSplitWeight). */
  readonly Weight: number;
  readonly Service?: string;
  readonly ServiceSubset?: string;
  readonly Namespace?: string;
}

export interface ServiceSplitterConfigEntry extends ConfigEntryCommon {
  readonly Kind: "service-splitter";
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

export interface ServiceResolverConfigEntry extends ConfigEntryCommon {
  readonly Kind: "service-resolver";
  readonly DefaultSubset?: string;
  readonly Subsets?: Readonly<Record<string, ServiceResolverSubset>>;
  readonly Redirect?: ServiceResolverRedirect;
  /** Keyed by subset name, or "*" for any subset. */
  readonly Failover?: Readonly<Record<string, ServiceResolverFailover>>;
  /** Go duration string; absent means the default (5s at compile time). */
  readonly ConnectTimeout?: string;
}

/** One stored config entry, discriminated by `Kind`. */
export type ConfigEntry =
  | ServiceConfigEntry
  | ProxyConfigEntry
  | ServiceRouterConfigEntry
  | ServiceSplitterConfigEntry
  | ServiceResolverConfigEntry;
