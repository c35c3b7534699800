/** The consensus driver: a Raft core run against a durable log, a transport and a state machine. */
export { createConsensusNode } from "./node.ts";
export { addServerSafely } from "./membership.ts";
export type { AddServerOptions } from "./membership.ts";
export type { ConsensusNode, ConsensusOptions, ConsensusStatus, PeerProgress, StateMachine } from "./node_types.ts";
export * from "./errors.ts";
export { DEFAULT_MAX_ENTRY_BYTES, DEFAULT_MAX_FRAME_BYTES } from "./limits.ts";
export * from "./ports.ts";
export { openLogStore } from "./log_store.ts";
export type { DurableLogStore, LogStoreOptions, LogStoreStats } from "./log_store.ts";
export { decodeEntry, decodeMessage, encodeEntry, encodeMessage, CodecError } from "./codec.ts";
export { createTcpTransport } from "./transport_tcp.ts";
export type { MessageCodec, PeerAddress, PeerEvent, TcpTransport, TcpTransportOptions, TcpTransportStats } from "./transport_tcp.ts";
export { createMemoryNetwork } from "./transport_memory.ts";
