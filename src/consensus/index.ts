/** The consensus driver: a Raft core run against a durable log, a transport and a state machine. */
export { createConsensusNode } from "./node.ts";
export type { ConsensusNode, ConsensusOptions, ConsensusStatus, StateMachine } from "./node.ts";
export * from "./errors.ts";
export * from "./ports.ts";
