/** The server port and internal RPC: protocol table, listener, RPC services, connection pool and forwarding. */
export { createServerPort } from "./server_port.ts";
export type { ServerPort, ServerPortConnection, ServerPortHandler, ServerPortOptions, WanGossipHandler, WanGossipHandlers } from "./server_port.ts";
export { ALL_PROTOCOLS, ALPN, alpnOf, MARKER, markerOf, protocolOfMarker } from "./protocols.ts";
export type { ServerProtocol } from "./protocols.ts";
export { createRpcPool, targetKey } from "./pool.ts";
export type { RpcDialer, RpcPool, RpcPoolOptions, RpcTarget } from "./pool.ts";
export { FORWARDED_HEADER, NO_PATH_TO_DATACENTER, route, RPC_HOLD_TIMEOUT_MS } from "./forward.ts";
export type { RaftView, RoutingPolicy, RpcContext, ServerDirectory } from "./forward.ts";
export { registerStatusServices } from "./status_service.ts";
export type { AutopilotClusterHealth, AutopilotHealthSource, AutopilotServerHealth } from "./autopilot.ts";
export { dialServer, dialThroughGateway, serverName } from "./dialer.ts";
export type { DialProtocol, GatewayRoute, ServerDialSettings } from "./dialer.ts";
export { createRemoteStateCaller, createServerStateCaller, isNoLeaderError, registerStateService } from "./state_service.ts";
export type { Consistency, QueryOptions, QueryOutcome, StateBackend, StateCaller } from "./state_service.ts";
export { decodeWire, encodeWire, encodeWireInSlices } from "./state_wire.ts";
export { NoPathError, plainRpcError, StateRequestError } from "./errors.ts";
export { abortable, AbortError, isAbortError } from "./abort.ts";
export { transferLeadership } from "./leadership_transfer.ts";
