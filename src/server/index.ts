/**
 * What a server is: the replicated state machine and its State service backend, the leader routines
 * run with leadership, bootstrap and Raft membership from gossip, and the server's process parts
 * (server port, Raft, internal RPC). Only src/main imports this layer.
 */
export { startServer } from "./server.ts";
export type { RunningServer, ServerOptions } from "./server.ts";
export type { ServerInfo } from "./server_directory.ts";
export type { SeenServer } from "./raft_membership.ts";
export { datacenterMaps, datacentersByCoordinates, datacentersByDistance, wanCoordinates, wanServerCoordinates } from "./datacenters.ts";
export type { WanPoolView, WanServer, WanServerCoordinate } from "./datacenters.ts";
export { COORDINATE_UPDATE_DEFAULTS } from "./coordinate_batcher.ts";
export { intersect as intersectCoordinates } from "./near.ts";
export { serverStats } from "./stats.ts";
