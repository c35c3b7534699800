/**
 * Consul 1.8's L7 config entries (service-defaults, proxy-defaults, service-router, service-splitter,
 * service-resolver): wire types, decoding with Consul's leniency, normalization, and per-entry validation.
 * Graph-wide validation (protocols, cycles, subsets across entries) is in ../discovery_chain.
 */
export { decodeConfigEntry, normalize as normalizeConfigEntry, normalizeSplitWeight } from "./decode.ts";
export { ConfigEntryError, ConfigEntryGraphError, type ConfigEntryErrorReason } from "./errors.ts";
export { validateConfigEntry, validateSubsetName } from "./validate.ts";
export { isServiceUpstream, mergeServiceConfig, resolveServiceConfig, type ResolvedServiceConfig } from "./service_config.ts";
export {
  CONFIG_ENTRY_KINDS,
  isDefaultResolver,
  isL7Protocol,
  KNOWN_PROTOCOLS,
  PROXY_CONFIG_GLOBAL,
  PROXY_DEFAULTS,
  SERVICE_DEFAULTS,
  SERVICE_RESOLVER,
  SERVICE_ROUTER,
  SERVICE_SPLITTER,
  type ConfigEntry,
  type ConfigEntryKind,
  type ExposeConfig,
  type ExposePath,
  type MeshGatewayConfig,
  type MeshGatewayMode,
  type ProxyConfigEntry,
  type ServiceConfigEntry,
  type ServiceResolverConfigEntry,
  type ServiceResolverFailover,
  type ServiceResolverRedirect,
  type ServiceResolverSubset,
  type ServiceRoute,
  type ServiceRouteDestination,
  type ServiceRouteHTTPMatch,
  type ServiceRouteHTTPMatchHeader,
  type ServiceRouteHTTPMatchQueryParam,
  type ServiceRouteMatch,
  type ServiceRouterConfigEntry,
  type ServiceSplit,
  type ServiceSplitterConfigEntry,
} from "./types.ts";
