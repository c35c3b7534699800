/**
 * Public face of src/membership: the pure SWIM core (memberlist + Lifeguard), its configuration and
 * timing profiles, the message types and the packet/stream codec. Drivers (transport, timers) and the
 * serf-like member layer build on these.
 */
export { MAX_ACK_PAYLOAD_BYTES, Memberlist } from "./memberlist.ts";
export type { MemberlistStats, OutPacket, Outbox, PingDelegate, StateDelegate, StreamRequest } from "./memberlist.ts";
export {
  LAN_PROFILE, LOCAL_PROFILE, MAX_META_BYTES, PROFILES, WAN_PROFILE,
  memberlistConfig, pushPullScaleMs, retransmitLimit, suspicionTimeoutMs, validateConfig,
} from "./config.ts";
export type { MemberlistConfig, ProfileName, Timing } from "./config.ts";
export {
  CodecError, SerfKind, decodeMessage, decodePacket, decodeQuery, decodeQueryResponse, decodeSerfMsg, decodeStream, encodeMessage, encodePacket,
  encodeQuery, encodeQueryResponse, encodeStream,
} from "./codec.ts";
export type {
  AckMsg, AliveMsg, DeadMsg, IndirectPingMsg, Member, MemberEvent, MemberState, Message, MessageType,
  NackMsg, PingMsg, PushNodeState, PushPullMsg, QueryFilter, QueryMsg, QueryResponseMsg, StreamAckMsg, StreamMessage, StreamPingMsg, SuspectMsg, UserMsg,
} from "./types.ts";
export { createDecryptFailureCounter, decryptOrDrop, decryptPacket, DecryptError, encryptPacket, ENCRYPTION_OVERHEAD } from "./crypto.ts";
export { GossipKey, InvalidKeyError, Keyring, KeyringError, formatKeyringFile, parseKeyringFile } from "./keyring.ts";
export { CONSUL_SERF, SERF_DEFAULTS, Serf } from "./serf.ts";
export type { MemberStatus, SerfConfig, SerfEvent, SerfMember, SerfMemberEventType, SerfOptions, SerfOutbox, SerfRequest } from "./serf.ts";
export { TAGS_MAGIC, TagsTooLargeError, decodeTags, encodeTags, tagsEqual, tryDecodeTags } from "./tags.ts";
export type { Tags } from "./tags.ts";
export {
  CONSUL_PROTOCOL_DEFAULT, CONSUL_PROTOCOL_MAX, CONSUL_PROTOCOL_MIN, CONSUL_RAFT_PROTOCOL_DEFAULT, FEATURE_FEDERATION_STATES,
  clientTags, hostOf, isClient, joinHostPort, parseServer, parseWanName, serverHasFeature, serverTags, wanName,
} from "./consul_tags.ts";
export type { ClientTagOptions, ServerInfo, ServerTagOptions, TaggedMember } from "./consul_tags.ts";
export { createGossipDriver } from "./driver.ts";
export type { DropNotice, DropReason, GossipDriver, GossipDriverOptions, GossipDriverStats } from "./driver.ts";
export {
  encodeFrame, FrameReader, FrameTooLargeError, readFrame, splitNamedAddress, StreamError, withStreamDeadline, FRAME_HEADER_BYTES,
} from "./transport.ts";
export type { GossipStream, GossipTransport, StreamSink, TransportHandler } from "./transport.ts";
export { createUdpTransport, parseHostPort, withDefaultPort } from "./transport_udp.ts";
export type { UdpTransportOptions } from "./transport_udp.ts";
export { createMemoryNetwork } from "./transport_memory.ts";
export type { MemoryNetwork, MemoryNetworkOptions } from "./transport_memory.ts";
export { createGossipPool, serfStatsOf, toPoolMember } from "./pool.ts";
export type { GossipPool, GossipPoolOptions, GossipPoolStats, PoolMember } from "./pool.ts";
export type { NodeResponse, PoolQueryOptions, QueryResult } from "./pool_query.ts";
export { INTERNAL_QUERY_PREFIX, QUERY_DEFAULTS, QueryEngine } from "./query.ts";
export type { IncomingQuery, QueryEvent, QueryOptions, QueryParams, StartedQuery } from "./query.ts";
export { KEY_QUERY_NAMES, KeyResponseCollector, decodeKeyResponse, encodeKeyResponse, handleInternalQuery, keyQuery } from "./key_query.ts";
export type { KeyOperation, KeyResponse, KeyringHooks, NodeKeyResponse } from "./key_query.ts";
export {
  COORDINATE_DEFAULTS, DimensionalityConflictError, PING_VERSION, ZERO_THRESHOLD, applyForce, coordinate, decodeCoordinatePayload, distanceMs,
  encodeCoordinatePayload, isCompatible, isValidCoordinate, newCoordinate, rawDistance, unitVectorAt,
} from "./coordinate.ts";
export type { Coordinate, CoordinateConfig } from "./coordinate.ts";
export { CoordinateClient, CoordinateError, MAX_RTT_MS } from "./coordinate_client.ts";
export { SerfCoordinates } from "./serf_coordinates.ts";
export type { SerfCoordinateStats } from "./serf_coordinates.ts";
export type { CoordinateClientStats } from "./coordinate_client.ts";
export { POOL_METRICS_INTERVAL_MS, recordPoolMetrics } from "./pool_metrics.ts";
