/** The server port and internal RPC: protocol table, listener, (later) RPC services, pool and forwarding. */
export { createServerPort } from "./server_port.ts";
export type { ServerPort, ServerPortConnection, ServerPortHandler, ServerPortOptions } from "./server_port.ts";
export { ALL_PROTOCOLS, ALPN, alpnOf, MARKER, markerOf, protocolOfMarker } from "./protocols.ts";
export type { ServerProtocol } from "./protocols.ts";
