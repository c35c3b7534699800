/**
 * Public face of src/federation: WAN federation through mesh gateways. The pure cores live here: the
 * gateway locator (values in, addresses out), the federation-state replication diff, anti-entropy and
 * prune decisions, the usable-gateway rules, server names and ALPN, and the WAN gossip packet framing;
 * and the wanfed transport, which carries the WAN pool to other datacenters through mesh gateways.
 * The leader routines that drive replication and anti-entropy live in src/server; main feeds the locator.
 */
export {
  bestAddress, fresherGateways, gatewayAddresses, isWanFederationGateway, maxServiceModifyIndex, WAN_FEDERATION_META_KEY,
} from "./gateways.ts";
export { FAILURES_BEFORE_DIALING_DIRECTLY, GatewayLocator, noPathMessage } from "./locator.ts";
export type { GatewayLocatorConfig, GatewayPick, LocatorEvent, LocatorStatus, NoPathReason, PrimaryRoute } from "./locator.ts";
export {
  antiEntropyDecision, diffFederationStates, FEDERATION_STATE_ANTI_ENTROPY, FEDERATION_STATE_REPLICATION, statesToPrune,
} from "./replication_diff.ts";
export type { ReplicationDiff } from "./replication_diff.ts";
export { serverSni, splitNodeName, WAN_GOSSIP_PACKET_ALPN, WAN_GOSSIP_STREAM_ALPN } from "./names.ts";
export {
  encodeWanGossipPacket, PacketFramingError, WAN_GOSSIP_PACKET_MAX_BYTES, WAN_GOSSIP_PACKET_MAX_IDLE_MS, WanGossipPacketDecoder,
} from "./packet_framing.ts";
export { createWanfedTransport } from "./wanfed_transport.ts";
export type { WanfedTransport, WanfedTransportOptions, WanfedTransportStats } from "./wanfed_transport.ts";
export type { WanfedConnection, WanfedDial } from "./wanfed_connection.ts";
export { NoGatewayError, WANFED_DIAL_TIMEOUT_MS } from "./wanfed_dialer.ts";
export type { GatewayResolution } from "./wanfed_dialer.ts";
export { wanfedRoute } from "./wanfed_route.ts";
export type { WanfedRoute, WanfedRouting } from "./wanfed_route.ts";
export { socketConnection, tlsGatewayDial } from "./wanfed_socket.ts";
export type { PacketPoolStats } from "./wanfed_pool.ts";
