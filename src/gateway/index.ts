/**
 * The built-in mesh gateway data plane: an xDS client, an SNI-routing TCP proxy and an admin endpoint
 * (DESIGN.md: src/gateway). Public face.
 */
export { startMeshGatewayDataPlane, type MeshGatewayDataPlane, type MeshGatewayDataPlaneOptions } from "./data_plane.ts";
export { gatewayAdminHandler, type GatewayAdminDeps } from "./admin.ts";
export { createGatewayProxy, type EndpointPicker, type GatewayProxy, type GatewayProxyDeps, type HelloProgress } from "./proxy.ts";
export { GatewayStats, type StatScope } from "./stats.ts";
export type { ClusterConfig, EndpointConfig, FilterChainConfig, GatewayConfig, ListenerConfig, OutlierConfig } from "./config_types.ts";
export { startXdsClient, USER_AGENT_NAME, type XdsClient, type XdsClientEvent, type XdsClientOptions, type XdsClientState } from "./xds_client.ts";
export { createGatewayConfigStore, type GatewayConfigStore } from "./xds_config.ts";
export { createClientHelloParser, parseClientHello, type ClientHelloParser, type ClientHelloResult } from "./client_hello.ts";
export { compileChains, listenerMatcher, type ChainMatcher } from "./sni_match.ts";
export { createBalancer, type Balancer } from "./balancer.ts";
export { GATEWAY_TYPE_URLS, type XdsSink } from "./xds_sink.ts";
